package web

import (
	"bytes"
	"strconv"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/yuin/goldmark/ast"
)

// Comments on their lines, in the document view: every top-level block of the rendered
// text says which lines of the text it shows (data-line, data-end: 1-based, both
// included), so that the page puts each open comment beside the block its first line is
// in, marks that block in the margin, and lets the person comment on a block's lines
// (doccomments.js). The marks are part of the version's HTML (kept in the render cache,
// being the same for every reader); the comments are read with the page. Without the
// script the comments are listed after the text, each naming its lines.

// DocComments is the most open comments the document view shows beside their lines; the
// comments page has them all.
const DocComments = 200

// DocReplies is how many of a comment's latest replies the document view shows.
const DocReplies = 5

// markLines sets data-line and data-end on the top-level blocks of doc, parsed from src,
// whose first line is line: one pass over src, however many blocks.
func markLines(doc ast.Node, src []byte, line int) {
	pos := 0
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		first, last := firstLines(n), lastLines(n)
		if first == nil || last == nil {
			continue
		}
		start, stop := first.Lines().At(0).Start, last.Lines().At(last.Lines().Len()-1).Stop
		if start < pos || stop < start || stop > len(src) {
			continue
		}
		line += bytes.Count(src[pos:start], []byte("\n"))
		end := line + bytes.Count(bytes.TrimSuffix(src[start:stop], []byte("\n")), []byte("\n"))
		n.SetAttributeString("data-line", []byte(strconv.Itoa(line)))
		n.SetAttributeString("data-end", []byte(strconv.Itoa(end)))
		pos = start
	}
}

// firstLines is n, or its first descendant, that holds lines of the text; nil if none does.
func firstLines(n ast.Node) ast.Node {
	for ; n != nil; n = n.FirstChild() {
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			return n
		}
	}
	return nil
}

// lastLines is n, or its last descendant, that holds lines of the text; nil if none does.
func lastLines(n ast.Node) ast.Node {
	for ; n != nil; n = n.LastChild() {
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			return n
		}
	}
	return nil
}

// lineThread is an open comment as the document view shows it beside its lines.
type lineThread struct {
	commentRow
	From, To int    // where it is in the version shown; 0 when outdated
	Asks     string // whom it asks: "you", a name, or "" (anyone)
}

// lineThreads is what the document view shows of a document's open comments.
func lineThreads(n spaces.Names, me string, cr docstore.CommentsRead) []lineThread {
	out := make([]lineThread, 0, len(cr.Threads))
	for _, t := range cr.Threads {
		row := lineThread{commentRow: commentRow{Number: t.Number, By: byWhom(n, t.Author), At: t.At, Text: t.Text, Quote: t.Quote, More: t.More}}
		switch t.Asks {
		case "":
		case me:
			row.Asks = "you"
		default:
			row.Asks = n.ShowString(t.Asks)
		}
		if t.Lines.From == 0 {
			row.Outdated, row.Where = true, "outdated: its lines were changed in version "+strconv.Itoa(t.Outdated)
		} else {
			row.From, row.To, row.Where = t.Lines.From, t.Lines.To, span(t.Lines.From, t.Lines.To)
		}
		for _, rp := range t.Replies {
			row.Replies = append(row.Replies, commentRow{Number: rp.Number, By: byWhom(n, rp.Author), At: rp.At, Text: rp.Text})
		}
		out = append(out, row)
	}
	return out
}
