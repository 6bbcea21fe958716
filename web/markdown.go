package web

import (
	"bytes"
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

// markdown renders a document's text: CommonMark with GFM (tables, task lists,
// strikethrough, autolinks), raw HTML left out (goldmark's default), links to documents
// rewritten to their pages here; then bluemonday's UGC policy as a second layer, in case
// goldmark ever lets something through.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(documentLinks{}, 100))),
)

var policy = sync.OnceValue(func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	// GFM task lists: disabled checkboxes, nothing else of <input>.
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.RequireNoFollowOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
})

// render turns Markdown into HTML that is safe whatever the text holds.
func render(md string) template.HTML {
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(md), &buf); err != nil {
		// goldmark fails only when writing to buf fails; show the text as it is.
		return template.HTML("<pre>" + template.HTMLEscapeString(md) + "</pre>")
	}
	return template.HTML(policy().SanitizeBytes(buf.Bytes()))
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
