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

// tocEntry is a heading in a table of contents.
type tocEntry struct {
	level    int
	id, text string
}

// tocEntries are the headings of a text's pieces (see renderPieces), in order: at most
// tocMax kept, all counted.
type tocEntries struct {
	kept []tocEntry
	n    int
}

// add takes the top-level headings of doc, one piece of the text (src).
func (t *tocEntries) add(doc ast.Node, src []byte) {
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		h, ok := c.(*ast.Heading)
		if !ok {
			continue
		}
		if t.n++; len(t.kept) < tocMax {
			id, _ := h.AttributeString("id")
			idb, _ := id.([]byte)
			t.kept = append(t.kept, tocEntry{h.Level, string(idb), plainText(h, src)})
		}
	}
}

// html is the table of contents, each heading a link to its anchor, indented by level;
// none for fewer than tocMin.
func (t *tocEntries) html() template.HTML {
	if t.n < tocMin {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<nav class="toc" aria-label="Contents"><p class="toc-head">Contents</p><ol>`)
	for _, h := range t.kept {
		fmt.Fprintf(&b, `<li class="toc-%d"><a href="#%s">%s</a></li>`, h.level, template.HTMLEscapeString(h.id), template.HTMLEscapeString(h.text))
	}
	if t.n > len(t.kept) {
		fmt.Fprintf(&b, `<li class="toc-more">and %d more headings</li>`, t.n-len(t.kept))
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
