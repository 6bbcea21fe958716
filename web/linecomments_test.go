package web

import (
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// Every top-level block of a rendered text says which lines it shows, across pieces, for
// headings, paragraphs, lists, tables and quotes (goldmark writes no attributes on code
// blocks: a comment on code lines is shown after the block before it).
func TestBlocksSayTheirLines(t *testing.T) {
	text := "# Plan\n\nRecord the trailer.\nReview the page.\n\n- one\n- two\n\n```\ncode\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted\n"
	for _, target := range []int{pieceTarget, 8} { // one piece, and a piece a block
		h, _, err := renderPieces(t.Context(), text, time.Second, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`<h1 id="s-plan" data-line="1" data-end="1">`, `<p data-line="3" data-end="4">`, `<ul data-line="6" data-end="7">`, `<table data-line="13" data-end="15">`, `<blockquote data-line="17" data-end="17">`} {
			if !strings.Contains(string(h), want) {
				t.Errorf("pieces of %d: the HTML lacks %s:\n%s", target, want, h)
			}
		}
	}
}

// The document view shows each open comment with its lines, its author, whom it asks, its
// replies, and reply and resolve forms; the comments page has the rest.
func TestDocumentShowsCommentsByTheirLines(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	made, err := f.docs.Create(ctx, "Plan", reviewedPlan, docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	if _, err := f.docs.Comment(ctx, id, docstore.NewComment{Lines: docstore.LineRange{From: 3, To: 4}, Text: "Which <trailer>?", Author: agent, Asks: agent.For}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.docs.Reply(ctx, id, 1, "The long one.", docstore.Author{By: "person:ana"}); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/")
	doc := body(t, f.get(c, "/document/"+id))
	for _, want := range []string{
		`<p data-line="3" data-end="4">`,
		`id="comment-1" data-from="3" data-to="4"`,
		"<strong>comment 1</strong> · lines 3-4 · north for Ana asks you",
		"Which &lt;trailer&gt;?",
		"The long one.",
		`action="/document/` + id + `/comment/1/reply"`,
		`action="/document/` + id + `/comment/1/resolve"`,
		`<script src="/static/doccomments.js" defer></script>`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the document view lacks %q:\n%s", want, doc)
		}
	}
}
