package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/mark3labs/mcp-go/mcp"
)

// What the change view shows of a change, in the result's _meta[changeKey], bounded
// whatever the change's size: a 1 MB rewrite puts at most about maxRows*maxLineBytes
// (~100 KB) there, and says what it left out.
const (
	viewContext  = 3   // unchanged lines shown around a change
	maxRows      = 300 // rows of the diff, all hunks together
	maxLineBytes = 300 // bytes of one line's text; longer lines are cut with "…"
	maxRun       = 40  // a run of added (or removed) lines longer than this is folded...
	runHead      = 12  // ...to its first runHead lines, a fold marker,
	runTail      = 4   // ...and its last runTail lines
	maxComment   = 2000
)

// changeView is the view's data: the document, the change, who made it, its diff.
type changeView struct {
	Document  string `json:"document"` // its id
	Title     string `json:"title"`
	Version   int    `json:"version"` // the version made; a proposal's base; the unchanged document's
	Kind      string `json:"kind"`    // write, append, edit, merge, restore, comment
	By        string `json:"by"`
	For       string `json:"for,omitempty"`
	Added     int    `json:"added"`
	Removed   int    `json:"removed"`
	Unchanged bool   `json:"unchanged,omitempty"`
	Proposal  int    `json:"proposal,omitempty"` // review mode: the proposal the change was kept as
	Comment   string `json:"comment,omitempty"`
	// Link is the page of the version (or of the document); ChangeLink the page of this
	// change: the diff from the version before, or the proposal's page. Both absent when
	// the page's address is not http(s) (no page, or a stdio server without one).
	Link       string `json:"link,omitempty"`
	ChangeLink string `json:"changeLink,omitempty"`
	Undo       bool   `json:"undo,omitempty"` // the view may offer undo_change
	Hunks      []hunk `json:"hunks"`
	Note       string `json:"note,omitempty"` // what was left out, in words for the person
}

// hunk is a stretch of the diff: A and B the numbers (1-based) of its first line in the
// old and the new text, Lines each " text", "-text" or "+text", or a fold marker "~+N"
// ("~-N"): N added (removed) lines left out.
type hunk struct {
	A     int      `json:"a"`
	B     int      `json:"b"`
	Lines []string `json:"lines"`
}

// changeSink is where a viewed tool's run leaves the view's data, for define to put in the
// result's _meta. It is in the context only for a client that renders apps.
type changeSink struct{ view *changeView }

type sinkKey struct{}

func sinkOf(ctx context.Context) *changeSink {
	s, _ := ctx.Value(sinkKey{}).(*changeSink)
	return s
}

// withView attaches the view's data, if any, to a result.
func withView(res *mcp.CallToolResult, sink *changeSink) *mcp.CallToolResult {
	if sink != nil && sink.view != nil && !res.IsError {
		res.Meta = mcp.NewMetaFromMap(map[string]any{changeKey: sink.view})
	}
	return res
}

// pageLink is base+path when the page's address is a web address, else "".
func (s *Server) pageLink(path string) string {
	base := s.linkBase()
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return ""
	}
	return base + path
}

// noteSaved leaves the view's data of a write for define, when the client renders apps.
// The diff is the write's own (docstore.Saved.Diff): nothing is diffed again. What it
// reads after the commit is the people's names (and, for a new document, its text); if
// that read fails, the answer stands and the view shows its text.
func (s *Server) noteSaved(ctx context.Context, saved docstore.Saved) {
	sink := sinkOf(ctx)
	if sink == nil {
		return
	}
	v, err := s.savedView(ctx, saved)
	if err != nil {
		if !errors.Is(err, kv.ErrCanceled) {
			s.log.Warn("reading a change for its view", "document", saved.Document.ID, "err", err)
		}
		return
	}
	sink.view = v
}

func (s *Server) savedView(ctx context.Context, saved docstore.Saved) (*changeView, error) {
	d := saved.Document
	v := &changeView{Document: d.ID, Title: d.Title, Version: d.Version, Kind: string(saved.Kind), Hunks: []hunk{},
		Added: saved.Added, Removed: saved.Removed}
	author := s.author(ctx)
	names := saved.Names
	diff := saved.Diff
	switch p := saved.Proposal; {
	case p != nil:
		v.Title, v.Version, v.Kind, v.Proposal = p.Title, p.Base, string(p.Kind), p.Number
		author = p.Author
		v.Link = s.pageLink(fmt.Sprintf("/document/%s/v/%d", d.ID, p.Base))
		v.ChangeLink = s.pageLink(fmt.Sprintf("/document/%s/proposal/%d", d.ID, p.Number))
	case saved.Unchanged:
		v.Unchanged, v.Kind = true, ""
		v.Link = s.pageLink(fmt.Sprintf("/document/%s/v/%d", d.ID, d.Version))
	default:
		v.Link = s.pageLink(fmt.Sprintf("/document/%s/v/%d", d.ID, d.Version))
		if d.Version > 1 {
			v.ChangeLink = s.pageLink(fmt.Sprintf("/document/%s/diff?from=%d&to=%d", d.ID, d.Version-1, d.Version))
		}
	}
	if saved.Proposal == nil {
		// A version's answer carries no names: read them (and a new document's text, which
		// its write's answer doesn't carry either), by number, so a later write changes
		// nothing of what is shown.
		err := s.docs.View(ctx, func(r *docstore.Reader) error {
			names = r.Names()
			if diff != nil || saved.Unchanged {
				return nil
			}
			_, made, err := r.Read(d.ID, d.Version)
			if err != nil {
				return err
			}
			lines := linediff.Lines(made.Text)
			diff = &docstore.Diff{New: lines, Ops: linediff.Diff(nil, lines)}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if !saved.Unchanged { // nobody made anything: the view names no one
		v.By, v.For = names.ShowString(author.By), showFor(names, author.For)
	}
	if diff != nil {
		v.Hunks, v.Note = viewDiff(diff.Old, diff.New, diff.Ops)
	}
	v.Undo = saved.Proposal == nil && !saved.Unchanged && d.Version > 1 && !s.reviewed(ctx)
	return v, nil
}

// commentView is the view's data of a comment: the lines it is on, and what it says. It
// needs no read: the comment's write gave all of it.
func (s *Server) commentView(ctx context.Context, made docstore.Commented) {
	sink := sinkOf(ctx)
	if sink == nil {
		return
	}
	c, d := made.Comment, made.Document
	v := &changeView{Document: d.ID, Title: d.Title, Version: c.Version, Kind: "comment", Hunks: []hunk{},
		By: made.Names.ShowString(c.Author.By), For: showFor(made.Names, c.Author.For)}
	if v.Version == 0 {
		v.Version = d.Version
	}
	v.Comment = cutBytes(c.Text, maxComment)
	v.Link = s.pageLink("/document/" + d.ID)
	if c.Quote != "" && c.From > 0 {
		h := hunk{A: c.From, B: c.From}
		for i, l := range strings.Split(strings.TrimSuffix(c.Quote, "\n"), "\n") {
			if i == maxRows {
				break
			}
			h.Lines = append(h.Lines, " "+cutBytes(l, maxLineBytes))
		}
		v.Hunks = []hunk{h}
		if c.QuoteCut {
			v.Note = "The lines commented on are cut short here: the page shows them whole."
		}
	}
	sink.view = v
}

func showFor(names spaces.Names, who string) string {
	if who == "" {
		return ""
	}
	return names.ShowString(who)
}

// viewDiff is the diff of before to after as the view shows it: hunks with viewContext
// lines around each change, long runs folded, lines cut at maxLineBytes, at most maxRows
// rows; and a note saying what was left out.
func viewDiff(a, b []string, ops []linediff.Op) ([]hunk, string) {
	var (
		hunks        []hunk
		rows, folded int
		cut          bool
		leftOut      int // changes (Delete/Insert runs) not shown for want of rows
	)
	add := func(h *hunk, line string) {
		text := strings.TrimSuffix(line[1:], "\n")
		if len(text) > maxLineBytes {
			text, cut = cutBytes(text, maxLineBytes), true
		}
		h.Lines = append(h.Lines, line[:1]+text)
		rows++
	}
	run := func(h *hunk, sign byte, lines []string) {
		if len(lines) > maxRun {
			for _, l := range lines[:runHead] {
				add(h, string(sign)+l)
			}
			n := len(lines) - runHead - runTail
			h.Lines = append(h.Lines, fmt.Sprintf("~%c%d", sign, n))
			rows++
			folded += n
			lines = lines[len(lines)-runTail:]
		}
		for _, l := range lines {
			add(h, string(sign)+l)
		}
	}
	var cur *hunk
	for i, op := range ops {
		if op.Kind == linediff.Equal {
			continue
		}
		if rows >= maxRows {
			if op.Kind == linediff.Delete || ops[i-1].Kind != linediff.Delete {
				leftOut++ // a replacement's Insert is the same place as its Delete
			}
			continue
		}
		// Context before: the equal run just before, unless it is already in cur.
		if cur == nil || (i > 0 && ops[i-1].Kind == linediff.Equal && ops[i-1].A1-ops[i-1].A0 > 2*viewContext) {
			if cur != nil {
				hunks = append(hunks, *cur)
			}
			a0, b0 := op.A0, op.B0
			if i > 0 && ops[i-1].Kind == linediff.Equal {
				n := min(viewContext, ops[i-1].A1-ops[i-1].A0)
				a0, b0 = op.A0-n, op.B0-n
			}
			cur = &hunk{A: a0 + 1, B: b0 + 1}
			for _, l := range a[a0:op.A0] {
				add(cur, " "+l)
			}
		} else if i > 0 && ops[i-1].Kind == linediff.Equal {
			// A short equal run between two changes: shown whole, after the context
			// already shown for the change before (its first viewContext lines).
			prev := ops[i-1]
			for _, l := range a[prev.A0+min(viewContext, prev.A1-prev.A0) : prev.A1] {
				add(cur, " "+l)
			}
		}
		if op.Kind == linediff.Delete {
			run(cur, '-', a[op.A0:op.A1])
		} else {
			run(cur, '+', b[op.B0:op.B1])
		}
		// Context after: the first viewContext lines of the equal run that follows.
		if i+1 < len(ops) && ops[i+1].Kind == linediff.Equal {
			next := ops[i+1]
			for _, l := range a[next.A0:min(next.A1, next.A0+viewContext)] {
				add(cur, " "+l)
			}
		}
	}
	if cur != nil {
		hunks = append(hunks, *cur)
	}
	if hunks == nil {
		hunks = []hunk{}
	}
	var notes []string
	if folded > 0 {
		notes = append(notes, fmt.Sprintf("%d lines of long runs are folded", folded))
	}
	if cut {
		notes = append(notes, fmt.Sprintf("lines longer than %d bytes are cut", maxLineBytes))
	}
	if leftOut > 0 {
		notes = append(notes, fmt.Sprintf("%d more changed places are not shown", leftOut))
	}
	if len(notes) == 0 {
		return hunks, ""
	}
	return hunks, "Shortened: " + strings.Join(notes, "; ") + ". The page shows the whole change."
}

// cutBytes cuts s to at most n bytes, on a rune boundary, with "…" when it cut.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
