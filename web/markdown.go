package web

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"sync"

	"github.com/compass-mcp/compass-mcp/doclink"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders a document's text: CommonMark with GFM's tables, task lists and
// strikethrough, raw HTML left out (goldmark's default), links to documents rewritten to
// their pages here, [[links]] to the documents they name (wikiLinks), headings with ids
// (headingIDs) for the table of contents; then bluemonday's UGC policy as a second layer,
// in case goldmark ever lets something through. GFM's linkify (bare URLs made links) is
// left out: on a 100 KB text it took as long as the rest of the parse; <https://...> still
// links.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList, wikiLinks{}),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(documentLinks{}, 100)), parser.WithAutoHeadingID()),
)

var policy = sync.OnceValue(func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	// GFM task lists: disabled checkboxes, nothing else of <input>.
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^wikilink( broken)?$`)).OnElements("a")
	p.RequireNoFollowOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
})

// render turns Markdown into HTML that is safe whatever the text holds.
func render(md string) template.HTML { return renderLinked(md, nil) }

// renderLinked is render with the [[links]] lv knows (nil: each shown as a [[link]] to no
// document), and, for a text of three or more headings, a table of contents before it.
func renderLinked(md string, lv *linkView) template.HTML {
	src := []byte(md)
	pc := parser.NewContext(parser.WithIDs(newHeadingIDs()))
	pc.Set(linkViewKey, lv)
	doc := markdown.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
	var buf bytes.Buffer
	if err := markdown.Renderer().Render(&buf, src, doc); err != nil {
		// goldmark fails only when writing to buf fails; show the text as it is.
		return template.HTML("<pre>" + template.HTMLEscapeString(md) + "</pre>")
	}
	return toc(doc, src) + template.HTML(policy().SanitizeBytes(buf.Bytes()))
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
			if id, ok := doclink.ID(string(l.Destination)); ok {
				l.Destination = []byte("/document/" + id)
			}
		case *ast.AutoLink:
			// Autolinks keep their text; their destination is the text itself.
		}
		return ast.WalkContinue, nil
	})
}

// renderCache keeps the HTML of versions recently shown: a version never changes, so its
// HTML can be kept as long as room allows, and a page opened by several browsers, or
// reloaded by a live update, renders each version once. Oldest in, first out, within max
// bytes of HTML. A version being rendered is rendered once: other callers wait for it.
type renderCache struct {
	mu      sync.Mutex
	html    map[string]template.HTML
	pending map[string]chan struct{} // closed when the version's HTML is in html (or given up)
	order   []string
	bytes   int
	max     int
}

func newRenderCache(max int) *renderCache {
	return &renderCache{html: map[string]template.HTML{}, pending: map[string]chan struct{}{}, max: max}
}

// version returns the HTML of version n of document id, whose text is text.
func (c *renderCache) version(id string, n int, text string) template.HTML {
	return c.linked(id, n, text, nil)
}

// linked is version with the [[links]] of lv: kept apart from the same version's HTML
// with other targets (a document since made, renamed or deleted).
func (c *renderCache) linked(id string, n int, text string, lv *linkView) template.HTML {
	key := fmt.Sprintf("%s/%d/%s", id, n, lv.key())
	c.mu.Lock()
	for {
		if h, ok := c.html[key]; ok {
			c.mu.Unlock()
			return h
		}
		wait, busy := c.pending[key]
		if !busy {
			break
		}
		c.mu.Unlock()
		<-wait
		c.mu.Lock()
		if _, ok := c.html[key]; !ok {
			// Too large to keep: render it here.
			c.mu.Unlock()
			return renderLinked(text, lv)
		}
	}
	done := make(chan struct{})
	c.pending[key] = done
	c.mu.Unlock()

	h := renderLinked(text, lv)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, key)
	defer close(done)
	if len(h) > c.max/4 {
		return h
	}
	c.html[key] = h
	c.order = append(c.order, key)
	c.bytes += len(h)
	for c.bytes > c.max && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.html[old])
		delete(c.html, old)
	}
	return h
}
