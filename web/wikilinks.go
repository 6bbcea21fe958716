package web

import (
	"fmt"
	"hash/fnv"
	"html/template"
	"net/url"
	"slices"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/mdscan"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// wikiLinks is the goldmark extension that renders [[Title]] and [[Title|shown]] as links to
// the document they name, under its title now (or the shown text); one that names no
// document is shown broken, leading to a new document of that title. What is a [[link]] is
// mdscan.WikiLink's rule, the one the links index keeps, so that the page and the index
// agree; code spans and code blocks are goldmark's, as they are mdscan's.
//
// It is an extension of its own (an inline parser, a node and its renderer) so that it
// composes with whatever else renders the page's Markdown.
type wikiLinks struct{}

func (wikiLinks) Extend(m goldmark.Markdown) {
	// Before goldmark's link parser (200), which also starts at '['.
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(wikiParser{}, 199)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(wikiRenderer{}, 199)))
}

// kindWikiLink is the node kind of a [[link]].
var kindWikiLink = ast.NewNodeKind("WikiLink")

// wikiLink is a [[Title]] in a text, and the document it names now (resolved when parsed,
// from the render's linkView).
type wikiLink struct {
	ast.BaseInline
	title, shown string
	target       docstore.Target
	space        string
}

func (n *wikiLink) Kind() ast.NodeKind { return kindWikiLink }

func (n *wikiLink) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Title": n.title, "Shown": n.shown}, nil)
}

// linkViewKey is where a render's linkView is kept in goldmark's parser context, and
// wikiCountKey how many [[links]] it has made so far.
var (
	linkViewKey  = parser.NewContextKey()
	wikiCountKey = parser.NewContextKey()
)

// maxWikiLinks is how many [[links]] one render makes links of: past them (in a text of a
// million), [[Title]] is shown as it is written, so that the page of such a text costs its
// text, not a hundred bytes of HTML for each six of it.
const maxWikiLinks = docstore.MaxLinks

// linkView is what a render knows of the [[links]] of the text it renders: the documents
// they name now, by docstore.FoldTitle, and the space (for a broken link's new document).
type linkView struct {
	space   string
	targets map[string]docstore.Target
}

// key is what sets this view's renders apart from others of the same version: the
// targets' ids and titles now. "" for no view.
func (lv *linkView) key() string {
	if lv == nil {
		return ""
	}
	keys := make([]string, 0, len(lv.targets))
	for k := range lv.targets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00", lv.space)
	for _, k := range keys {
		t := lv.targets[k]
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%v\x00", k, t.ID, t.Title, t.Deleted)
	}
	return fmt.Sprintf("%x", h.Sum64())
}

type wikiParser struct{}

func (wikiParser) Trigger() []byte { return []byte{'['} }

func (wikiParser) Parse(_ ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	title, shown, n, ok := mdscan.WikiLink(line)
	if !ok {
		return nil
	}
	block.Advance(n)
	made := pc.ComputeIfAbsent(wikiCountKey, func() any { return new(int) }).(*int)
	if *made++; *made > maxWikiLinks {
		return ast.NewTextSegment(seg.WithStop(seg.Start + n))
	}
	node := &wikiLink{title: title, shown: shown}
	if lv, ok := pc.Get(linkViewKey).(*linkView); ok && lv != nil {
		node.target, node.space = lv.targets[docstore.FoldTitle(title)], lv.space
	}
	return node
}

type wikiRenderer struct{}

func (wikiRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindWikiLink, renderWikiLink)
}

func renderWikiLink(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	l := n.(*wikiLink)
	t := l.target
	shown := l.shown
	switch {
	case t.ID != "" && !t.Deleted:
		if shown == "" {
			shown = t.Title
		}
		fmt.Fprintf(w, `<a href="/document/%s" class="wikilink">%s</a>`, url.PathEscape(t.ID), template.HTMLEscapeString(shown))
	case t.ID != "":
		if shown == "" {
			shown = t.Title
		}
		fmt.Fprintf(w, `<a href="/deleted?%s" class="wikilink broken">%s</a>`, spaceQuery(l.space, nil), template.HTMLEscapeString(shown))
	default:
		if shown == "" {
			shown = l.title
		}
		fmt.Fprintf(w, `<a href="/new?%s" class="wikilink broken">%s</a>`, spaceQuery(l.space, url.Values{"title": {l.title}}), template.HTMLEscapeString(shown))
	}
	return ast.WalkSkipChildren, nil
}

// spaceQuery is q with the space, encoded for an href.
func spaceQuery(space string, q url.Values) string {
	if q == nil {
		q = url.Values{}
	}
	if space != "" {
		q.Set("space", space)
	}
	return template.HTMLEscapeString(q.Encode())
}
