package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/compass-mcp/compass-mcp/mdscan"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Rendering within a budget. Everything an agent saves is shown, and an agent can save
// Markdown that goldmark parses in more than linear time: 256 KiB of "[a](" took 31 s of
// one core, 2 MiB of nested > and 2,000 nested list items hours. goldmark can't be cancelled, has no work limit, and
// isn't ours to change; so render bounds what it costs, three ways:
//
//   - Pieces. The text is cut into runs of top-level blocks of about pieceTarget bytes,
//     where cutting changes nothing (see split), and each is parsed, rendered and
//     sanitized by itself: a superlinear cost is paid on one piece, not on 8 MiB, and
//     memory holds one piece's syntax tree. A single block longer than maxPiece (2 MiB of
//     >, 2,000 nested list items, a line of 8 MiB) is shown as it was written, in an
//     escaped <pre>, without being parsed.
//   - A budget (budget.go): renderCPU of the CPU time of the render's thread, 4× that of
//     wall time, and maxHTML of HTML, checked from inside goldmark at every line and
//     every delimiter it looks at. When it is spent, the rest of the text, from the piece
//     being rendered, is shown as written, with a note saying from which line and why.
//     An ordinary text renders whole up to about 3 MiB (a megabyte in 80 to 160 ms).
//   - The context. A render stops at its next check when nobody waits for it any more
//     (renderCache cancels it), and at most renderSlots run at once.
//
// Why not the others: a fallback to text alone (for a document that looks hostile) needs
// a list of every shape goldmark is slow on, and a check that is never fooled; a time
// limit alone, without pieces, pays a quadratic cost on the whole text up to the limit and
// then shows nothing rendered; rendering in another process (killed at its limit) costs a
// process start a version and a binary that can start itself. Pieces with a budget show
// most of an ordinary long text rendered, bound every text's cost by the budget (plus a
// check's worth of work), and need nothing of goldmark but its extension points.

const (
	// renderCPU is the CPU time one render may use; a page costs more (reading the text,
	// the template, the collector, the kernel's page faults): at most 1 s of CPU for any
	// text tried, 0.6 to 0.95 s for the worst (see TestHostileMarkdownIsBounded).
	renderCPU = 400 * time.Millisecond
	// pieceTarget is the size a piece is cut at, at the first place a cut changes nothing.
	pieceTarget = 32 << 10
	// maxPiece is the longest piece parsed: one block longer is shown as written. goldmark
	// allocates up to 500 bytes per byte of some texts (a line of [, nested quotes), so
	// this bounds the memory a render holds (a table of 1,500 rows is 128 KiB).
	maxPiece = 128 << 10
	// maxHTML is the most HTML a render makes before the rest is shown as written: 4× the
	// largest text, more than ordinary Markdown ever needs.
	maxHTML = 32 << 20
)

// markdown parses a document's text: CommonMark with GFM's tables, task lists and
// strikethrough, raw HTML left out (goldmark's default), links to documents rewritten to
// their pages here, and the budget's checkpoints (checkpoint, boundedRefs in place of
// goldmark's own link reference transformer, budgetReader). GFM's linkify (bare URLs made
// links) is left out: on a 100 KB text it took as long as the rest of the parse;
// <https://...> still links. Extensions go in the list below; inline parsers and
// transformers of their own see the render's budget in the parser.Context (budgetOf).
var markdown = goldmark.New(
	goldmark.WithParser(parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(append(parser.DefaultInlineParsers(), util.Prioritized(checkpoint{}, 0))...),
		parser.WithParagraphTransformers(util.Prioritized(boundedRefs{}, 100)),
		parser.WithASTTransformers(util.Prioritized(documentLinks{}, 100)),
		parser.WithAutoHeadingID(),
	)),
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList, wikiLinks{}),
)

// definitions parses only blocks, to find the link reference definitions of pieces that
// hold some before the pieces are rendered (see collectRefs).
var definitions = parser.NewParser(
	parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	parser.WithParagraphTransformers(util.Prioritized(boundedRefs{}, 100)),
)

var policy = sync.OnceValue(func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	// GFM task lists: disabled checkboxes, nothing else of <input>.
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^wikilink( broken)?$`)).OnElements("a")
	// The lines each block shows (markLines), for the comments beside them.
	p.AllowAttrs("data-line", "data-end").Matching(regexp.MustCompile(`^[0-9]{1,9}$`)).Globally()
	p.RequireNoFollowOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
})

// renderLinked renders md within a budget of limit of CPU time (see above), with the
// [[links]] lv knows (nil: each shown as a [[link]] to no document). It returns ctx's error,
// and no HTML, if ctx ends first. keep is false when the render was cut short by its wall
// time (the machine too busy to give it its CPU time): its HTML is fine to show, but not to
// keep for good.
func renderLinked(ctx context.Context, md string, limit time.Duration, lv *linkView) (h template.HTML, keep bool, err error) {
	return renderPieces(ctx, md, limit, pieceTarget, lv)
}

// renderPieces is renderLinked with pieces cut at target bytes.
func renderPieces(ctx context.Context, md string, limit time.Duration, target int, lv *linkView) (template.HTML, bool, error) {
	// The budget is this thread's CPU time: the render stays on it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := &rendering{src: []byte(md), b: newBudget(ctx, limit, maxHTML), refs: map[string]parser.Reference{}, lv: lv, ids: newHeadingIDs()}
	pieces := split(r.src, target)
	if len(pieces) > 1 {
		if err := r.guard(func() { r.collectRefs(pieces) }); err != nil {
			if ctx.Err() != nil {
				return "", false, ctx.Err()
			}
			r.asText(pieces[0], err)
			return template.HTML(r.out.String()), !errors.Is(err, errOverWall), nil
		}
	}
	for _, p := range pieces {
		if p.end-p.start > maxPiece {
			r.tooLong(p)
			continue
		}
		if err := r.guard(func() { r.piece(p) }); err != nil {
			if ctx.Err() != nil {
				return "", false, ctx.Err()
			}
			r.asText(p, err)
			return template.HTML(r.out.String()), !errors.Is(err, errOverWall), nil
		}
	}
	return r.heads.html() + template.HTML(r.out.String()), true, nil
}

// rendering is one render's state: the text, its budget, the link reference definitions
// its pieces share, and the HTML made so far.
type rendering struct {
	src        []byte
	b          *budget
	refs       map[string]parser.Reference
	lv         *linkView       // the [[links]]' targets, or nil
	ids        *headingIDs     // the headings' anchors, unique across the pieces
	heads      tocEntries      // the headings, for the table of contents
	out        strings.Builder // the page's HTML: its String() is no copy of what may be 32 MiB
	raw, clean bytes.Buffer    // one piece's, before and after sanitizing
}

// errPanicked is what a render stops with when goldmark panicked.
var errPanicked = errors.New("the Markdown parser failed")

// guard runs fn, and returns why the render stopped if a check stopped it, or if fn
// panicked: a render runs in a goroutine of its own, where a panic would end the server.
func (r *rendering) guard(fn func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if s, ok := p.(stopRender); ok {
				err = s.err
				return
			}
			slog.Error("rendering Markdown panicked; the text is shown as written", "panic", p, "stack", string(debug.Stack()))
			err = errPanicked
		}
	}()
	fn()
	return nil
}

// context is a parser.Context for one parse: goldmark's own (its list parser leaves
// state in it from one parse to the next), holding the render's budget, with the link
// reference definitions the render's.
func (r *rendering) context() parser.Context {
	pc := sharedRefs{parser.NewContext(parser.WithIDs(r.ids)), r.refs}
	pc.Set(budgetKey, r.b)
	pc.Set(linkViewKey, r.lv)
	return pc
}

// sharedRefs is a parser.Context whose link reference definitions are refs.
type sharedRefs struct {
	parser.Context
	refs map[string]parser.Reference
}

// AddReference keeps the first definition of a label, as goldmark's own does.
func (c sharedRefs) AddReference(ref parser.Reference) {
	key := util.ToLinkReference(ref.Label())
	if _, ok := c.refs[key]; !ok {
		c.refs[key] = ref
	}
}

func (c sharedRefs) Reference(label string) (parser.Reference, bool) {
	ref, ok := c.refs[label]
	return ref, ok
}

func (c sharedRefs) References() []parser.Reference {
	out := make([]parser.Reference, 0, len(c.refs))
	for _, ref := range c.refs {
		out = append(out, ref)
	}
	return out
}

// collectRefs finds the link reference definitions of every piece that may hold some, in
// the text's order, so that a link finds its definition wherever in the text it is (the
// first of a label wins, as in one parse).
func (r *rendering) collectRefs(pieces []piece) {
	for _, p := range pieces {
		src := r.src[p.start:p.end]
		if p.end-p.start > maxPiece || !bytes.Contains(src, []byte("]:")) {
			continue
		}
		definitions.Parse(budgetReader{text.NewReader(src), r.b}, parser.WithContext(r.context()))
	}
}

// piece renders p and adds it to the page's HTML.
func (r *rendering) piece(p piece) {
	src := r.src[p.start:p.end]
	doc := markdown.Parser().Parse(budgetReader{text.NewReader(src), r.b}, parser.WithContext(r.context()))
	markLines(doc, src, p.line)
	r.raw.Reset()
	r.clean.Reset()
	if err := markdown.Renderer().Render(budgetWriter{r.b, &r.raw}, src, doc); err != nil {
		panic(stopRender{err}) // only writing to a buffer: never
	}
	r.heads.add(doc, src)
	if err := policy().SanitizeReaderToWriter(budgetRead{r.b, &r.raw}, &r.clean); err != nil {
		panic(stopRender{err})
	}
	r.out.Write(r.clean.Bytes())
}

// asText shows the text from p on as it was written, saying why.
func (r *rendering) asText(p piece, why error) {
	note := fmt.Sprintf("The rest of this text, from line %d, is shown as it was written: laying it out would take the server too long.", p.line)
	if errors.Is(why, errTooMuchHTML) {
		note = fmt.Sprintf("The rest of this text, from line %d, is shown as it was written: laid out, it would be too large a page.", p.line)
	}
	if p.line == 1 {
		note = "This text is shown as it was written: laying it out would take the server too long."
	}
	r.plain(note, r.src[p.start:])
}

// tooLong shows p, a block too long to parse, as it was written.
func (r *rendering) tooLong(p piece) {
	src := r.src[p.start:p.end]
	last := p.line + bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] == '\n' {
		last--
	}
	note := fmt.Sprintf("Lines %d to %d are shown as they were written: one block of more than %d KiB is not laid out.", p.line, last, maxPiece>>10)
	if p.line == last {
		note = fmt.Sprintf("Line %d is shown as it was written: a block of more than %d KiB is not laid out.", p.line, maxPiece>>10)
	}
	r.plain(note, src)
}

func (r *rendering) plain(note string, src []byte) {
	fmt.Fprintf(&r.out, `<div class="plain"><p class="note">%s</p><pre>`, template.HTMLEscapeString(note))
	// Room for the escaped text at once: grown as it is written, 8 MiB of "<" (32 MiB
	// escaped) went through allocations of every power of two up to 64 MiB, and on a
	// machine where a page fault is dear the fresh pages cost more than the escaping.
	r.out.Grow(len(src) + 4*escapes(src) + len("</pre></div>\n"))
	template.HTMLEscape(&r.out, src)
	r.out.WriteString("</pre></div>\n")
}

// escapes counts the bytes of src that template.HTMLEscape writes as more than one: each
// at most 5 bytes for 1 (`&amp;`, `&#34;`, `&#39;`).
func escapes(src []byte) int {
	n := 0
	for _, c := range src {
		switch c {
		case '<', '>', '&', '\'', '"', 0:
			n++
		}
	}
	return n
}

// documentLinks points links to documents (a page's URL on any host, a compass:// URI, a
// Markdown link an agent copied) at their page here.
type documentLinks struct{}

func (documentLinks) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Link:
			if id, ok := mdscan.DocumentID(string(l.Destination)); ok {
				l.Destination = []byte("/document/" + id)
			}
		case *ast.AutoLink:
			// Autolinks keep their text; their destination is the text itself.
		}
		return ast.WalkContinue, nil
	})
}
