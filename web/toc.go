package web

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/yuin/goldmark/ast"
)

// headingIDs gives each heading an id, an anchor the table of contents links to: "s-" and
// the heading's letters and digits (s-launch-plan), then -2, -3 for the same again. The
// prefix keeps a heading from taking an id the page itself uses (#body, #live).
type headingIDs struct{ used map[string]bool }

func newHeadingIDs() *headingIDs { return &headingIDs{used: map[string]bool{}} }

func (h *headingIDs) Generate(value []byte, _ ast.NodeKind) []byte {
	var b strings.Builder
	b.WriteString("s-")
	dash := false
	for _, c := range string(value) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
			dash = false
		case c >= 'A' && c <= 'Z':
			b.WriteRune(c + 'a' - 'A')
			dash = false
		case !dash && b.Len() > 2 && b.Len() < 64:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 64 {
			break
		}
	}
	id := strings.TrimRight(b.String(), "-")
	if id == "s" {
		id = "s-heading"
	}
	base := id
	for n := 2; h.used[id]; n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	h.used[id] = true
	return []byte(id)
}

func (h *headingIDs) Put(value []byte) { h.used[string(value)] = true }

// tocMin is how many headings a document needs to have a table of contents, and tocMax
// how many it lists.
const (
	tocMin = 3
	tocMax = 200
)

// toc is the table of contents of a parsed document: its headings outside lists and block
// quotes (the ones read_document's section reads by), each a link to its anchor, indented
// by level; none for fewer than tocMin.
func toc(doc ast.Node, src []byte) template.HTML {
	var hs []*ast.Heading
	n := 0
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		if h, ok := c.(*ast.Heading); ok {
			if n++; len(hs) < tocMax {
				hs = append(hs, h)
			}
		}
	}
	if n < tocMin {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<nav class="toc" aria-label="Contents"><p class="toc-head">Contents</p><ol>`)
	for _, h := range hs {
		id, _ := h.AttributeString("id")
		idb, _ := id.([]byte)
		fmt.Fprintf(&b, `<li class="toc-%d"><a href="#%s">%s</a></li>`, h.Level, template.HTMLEscapeString(string(idb)), template.HTMLEscapeString(plainText(h, src)))
	}
	if n > len(hs) {
		fmt.Fprintf(&b, `<li class="toc-more">and %d more headings</li>`, n-len(hs))
	}
	b.WriteString("</ol></nav>")
	return template.HTML(b.String())
}

// plainText is the text a node shows, without its markup: a [[link]] as its shown text.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				b.Write(t.Segment.Value(src))
				if t.SoftLineBreak() || t.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(t.Value)
			case *wikiLink:
				switch {
				case t.shown != "":
					b.WriteString(t.shown)
				case t.target.Title != "":
					b.WriteString(t.target.Title)
				default:
					b.WriteString(t.title)
				}
			default:
				walk(c)
			}
		}
	}
	walk(n)
	s := strings.Join(strings.Fields(b.String()), " ")
	if s == "" {
		return "(untitled)"
	}
	return s
}
