package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// The person comments on lines on the page, sees the agent's reply, replies and resolves;
// the lines under a comment are marked; bad forms save nothing and say why.
func TestCommentsOnThePage(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	made, err := f.docs.Create(ctx, "Plan", "# Plan\n\nRecord the <trailer>.\nBook the studio.\n", docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	c := f.client()
	f.signIn(c, "/")
	if doc := body(t, f.get(c, "/document/"+id)); !strings.Contains(doc, `id="comments" href="/document/`+id+`/comments">Comment on lines</a>`) {
		t.Errorf("the document doesn't link its comments:\n%s", doc)
	}
	page := body(t, f.get(c, "/document/"+id+"/comments"))
	for _, want := range []string{`<tr id="L3" data-line="3"><td class="n"><a href="#L3">3</a></td><td class="text">Record the &lt;trailer&gt;.</td>`, `<script src="/static/comments.js" defer></script>`, `name="version" value="1"`, "No open comments"} {
		if !strings.Contains(page, want) {
			t.Errorf("the comments page lacks %q:\n%s", want, page)
		}
	}
	st := staying(c)
	resp := f.post(st, "/document/"+id+"/comments", url.Values{"from": {"3"}, "to": {"4"}, "text": {"Which day? <b>"}, "version": {"1"}})
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "comment+1+on+lines+3-4") {
		t.Fatalf("commenting: %d %s\n%s", resp.StatusCode, loc, body(t, resp))
	}
	if _, err := f.docs.Reply(ctx, id, 1, "Monday.", agent); err != nil {
		t.Fatal(err)
	}
	page = body(t, f.get(c, "/document/"+id+"/comments"))
	for _, want := range []string{"<strong>comment 1</strong> · lines 3-4 · Ana", "Which day? &lt;b&gt;", "comment 2 · north for Ana", "Monday.", `<tr id="L4" data-line="4" class="commented">`, `<a href="#comment-1">#1</a>`, "1 open comment."} {
		if !strings.Contains(page, want) {
			t.Errorf("after commenting, the page lacks %q:\n%s", want, page)
		}
	}
	if doc := body(t, f.get(c, "/document/"+id)); !strings.Contains(doc, ">1 open comment</a>") {
		t.Errorf("the document doesn't count its open comment")
	}
	resp = f.post(st, "/document/"+id+"/comment/2/reply", url.Values{"text": {"Thanks."}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("replying: %d", resp.StatusCode)
	}
	resp = f.post(st, "/document/"+id+"/comment/1/resolve", url.Values{})
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "resolved+comment+1") {
		t.Fatalf("resolving: %d %s", resp.StatusCode, loc)
	}
	if page := body(t, f.get(c, "/document/"+id+"/comments")); !strings.Contains(page, "No open comments") {
		t.Errorf("after resolving:\n%s", page)
	}
	for _, tc := range []struct {
		path string
		form url.Values
		want string
	}{
		{"/comments", url.Values{"from": {"9"}, "to": {"9"}, "text": {"x"}}, "the text has 4 lines, so no line 9"},
		{"/comments", url.Values{"from": {"3"}, "to": {"2"}, "text": {"x"}}, "choose the lines"},
		{"/comments", url.Values{"from": {"3"}, "text": {" "}}, "it is empty"},
		{"/comment/1/reply", url.Values{"text": {"more"}}, "comment 1 was resolved"},
		{"/comment/7/resolve", url.Values{}, "has no comment 7"},
	} {
		resp := f.post(st, "/document/"+id+tc.path, tc.form)
		if got := body(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(got, "Nothing was saved") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: %d, want %q", tc.path, tc.form, resp.StatusCode, tc.want)
		}
	}
	if d, _ := view(t, f.docs, find(id)); d.Review.Comments != 3 || d.Review.Unresolved != 0 {
		t.Errorf("counts after: %+v", d.Review)
	}
}

// A long text's comments page shows its lines a page at a time.
func TestCommentsPageOfALongText(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	var text strings.Builder
	for i := range CommentLines + 3 {
		fmt.Fprintf(&text, "line %d\n", i+1)
	}
	made, _ := f.docs.Create(ctx, "Long", text.String(), docstore.KindWrite, agent)
	if _, err := f.docs.Comment(ctx, made.Document.ID, docstore.NewComment{Lines: docstore.LineRange{From: 1}, Text: "All of it", Author: agent}); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/")
	first := body(t, f.get(c, "/document/"+made.Document.ID+"/comments"))
	if strings.Count(first, `data-line=`) != CommentLines || !strings.Contains(first, fmt.Sprintf("comments?from=%d", CommentLines+1)) || !strings.Contains(first, fmt.Sprintf("lines 1-%d", CommentLines+3)) {
		t.Errorf("the first page: %d lines", strings.Count(first, `data-line=`))
	}
	second := body(t, f.get(c, fmt.Sprintf("/document/%s/comments?from=%d", made.Document.ID, CommentLines+1)))
	if strings.Count(second, `data-line=`) != 3 || strings.Count(second, `class="commented"`) != 3 {
		t.Errorf("the second page: %d lines", strings.Count(second, `data-line=`))
	}
}
