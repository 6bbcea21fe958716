package web

import (
	"context"
	"html/template"
	"time"

	"github.com/yuin/goldmark/ast"
)

// What the tests ask of the page's rendering directly, without a document's page around it.

// render turns Markdown into HTML that is safe whatever the text holds, within the budget,
// with no [[links]] known: as a page renders, waiting for it whatever it takes.
func render(md string) template.HTML {
	h, _, _ := renderWithin(context.Background(), md, renderCPU)
	return h
}

// renderWithin is renderLinked with no [[links]] known.
func renderWithin(ctx context.Context, md string, limit time.Duration) (h template.HTML, keep bool, err error) {
	return renderLinked(ctx, md, limit, nil)
}

// version is the cache's linked with no [[links]] known.
func (c *renderCache) version(ctx context.Context, id string, n int, text string) (template.HTML, error) {
	return c.linked(ctx, id, n, text, nil)
}

// pendingCount is how many versions are being rendered (or wait for a slot).
func (c *renderCache) pendingCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// toc is the table of contents of a parsed document, as a page shows it above the text.
func toc(doc ast.Node, src []byte) template.HTML {
	var t tocEntries
	t.add(doc, src)
	return t.html()
}
