package browser

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

const deskPlan = "# Launch plan\n\nRecord the trailer, then review the course page.\n\nBook the studio for the recording.\n\nWrite the script before the invitations go out.\n"

// The person's steps at the review desk: the header says what waits; open the inbox, accept
// two changes from it, decline one with a reason; then, in the document view, see the
// agent's comment beside its lines, reply to it, comment on a line, and resolve, the page
// never reloading.
func TestReviewDesk(t *testing.T) {
	s := reviewServer(t)
	_, id := s.write(t, "Launch plan", deskPlan)
	s.agent(t, "edit_document", "document="+id, "old=Record the trailer,", "new=Record the trailer on Monday,")
	s.agent(t, "edit_document", "document="+id, "old=Book the studio for the recording.", "new=Book the big studio for the recording.")
	s.agent(t, "append_document", "document="+id, "text=- send the invitations to everyone on the list")
	if got := s.agent(t, "comment_document", "document="+id, "lines=7", "text=Who writes the script?"); !strings.HasPrefix(got, "Comment 1 on line 7") {
		t.Fatalf("the agent's comment: %s", got)
	}
	ctx := newBrowser(t)
	s.signIn(t, ctx, "")
	waitText(t, ctx, "Documents")
	if got := eval[string](t, ctx, `document.getElementById("inbox-link").innerText`); got != "Inbox 4" {
		t.Errorf("the header's inbox link says %q, want Inbox 4", got)
	}
	if got := pageText(t, ctx); !strings.Contains(got, "3 changes to review") || !strings.Contains(got, "1 open comment") {
		t.Errorf("the documents list does not mark the document:\n%s", got)
	}
	click(t, ctx, "#inbox-link")
	waitText(t, ctx, "What waits for you")
	got := pageText(t, ctx)
	for _, want := range []string{"change 3 to Launch plan", "- send the invitations to everyone on the list", "comment 1 on Launch plan, line 7", "north for Ana asks you", "Who writes the script?", "change 1 to Launch plan"} {
		if !strings.Contains(got, want) {
			t.Errorf("the inbox lacks %q:\n%s", want, got)
		}
	}
	shot(t, ctx, "inbox")

	// Accept two, from the inbox: each says the version it made, and the inbox shrinks.
	click(t, ctx, `form[action$="/proposal/1/accept"] button`)
	waitText(t, ctx, "accepted change 1 as version 2")
	click(t, ctx, `form[action$="/proposal/2/accept"] button`)
	waitText(t, ctx, "accepted change 2, merged with the versions saved since, as version 3")
	if got := eval[string](t, ctx, `document.getElementById("inbox-link").innerText`); got != "Inbox 2" {
		t.Errorf("after two accepted, the header says %q", got)
	}
	// Decline the third, saying why.
	click(t, ctx, `#change-`+id+`-3 details summary`)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#why-`+id+`-3`), "The invitations go out after the trailer.")); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, `#change-`+id+`-3 form.decline button`)
	waitText(t, ctx, "declined change 3")
	read := s.agent(t, "read_document", "document="+id)
	for _, want := range []string{"version 3 of 3", "Record the trailer on Monday,", "Book the big studio", "change 3 was declined by Ana ", "“The invitations go out after the trailer.”"} {
		if !strings.Contains(read, want) {
			t.Errorf("the agent's read lacks %q:\n%s", want, read)
		}
	}

	// The open inbox shows a new change as it comes, without a reload.
	eval[bool](t, ctx, `window.inboxStayed = true`)
	s.agent(t, "append_document", "document="+id, "text=- print the posters")
	waitText(t, ctx, "print the posters")
	waitText(t, ctx, "2 things wait for you: shown below.")
	if !eval[bool](t, ctx, `window.inboxStayed === true`) {
		t.Errorf("the inbox reloaded to show the new change")
	}
	if got := eval[string](t, ctx, `document.getElementById("inbox-link").innerText`); got != "Inbox 2" {
		t.Errorf("after the new change, the header says %q", got)
	}

	// The document view: the comment beside its lines, its block marked.
	navigate(t, ctx, s.URL+"/document/"+id)
	waitText(t, ctx, "Who writes the script?")
	if got := eval[string](t, ctx, `(() => { const t = document.getElementById("comment-1"), b = t.previousElementSibling; return b.dataset.line + " " + b.classList.contains("commented") + " " + t.parentElement.id })()`); got != "7 true body" {
		t.Errorf("comment 1 is not beside line 7's block, marked: %q", got)
	}
	eval[bool](t, ctx, `window.stayed = true`)
	// Reply in place.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#reply-1"), "Ana does, on Tuesday.")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#comment-1 form[action$="/reply"] button`))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "replied to comment 1")
	waitText(t, ctx, "Ana does, on Tuesday.")
	// A comment on line 3, from its block's button, keyboard first: focus it and press Enter.
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`#body > [data-line="3"] > button.add-line-comment`))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\r")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("form.new-line-comment textarea"), "Monday, or Tuesday?")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("form.new-line-comment button.primary"))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "comment 3 on line 3")
	if got := eval[string](t, ctx, `(() => { const t = document.getElementById("comment-3"); return t ? t.previousElementSibling.dataset.line + " " + t.innerText.includes("Monday, or Tuesday?") : "none" })()`); got != "3 true" {
		t.Errorf("the new comment is not beside line 3: %q", got)
	}
	shot(t, ctx, "document-comments")
	// Resolve the agent's comment in place.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#comment-1 button.resolve`))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "resolved comment 1")
	if n := eval[int](t, ctx, `document.querySelectorAll("#comment-1").length`); n != 0 {
		t.Errorf("comment 1 is still shown after resolving")
	}
	if !eval[bool](t, ctx, `window.stayed === true`) {
		t.Errorf("the page reloaded")
	}
	if read := s.agent(t, "read_document", "document="+id); !strings.Contains(read, "Open comments (1):") || !strings.Contains(read, "Monday, or Tuesday?") || !strings.Contains(read, "change 4 by north for Ana") {
		t.Errorf("the agent's read after the comments:\n%s", read)
	}
	// At 390 px the comments are beside their lines still, and nothing is wider than the page.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("at 390 px the document view is %d px wide", w)
	}
}

// The change's diff uses the page's width: its text column is at least 60% of the table at
// 1280 px, and at 390 px no word is broken across lines (measured on the rendered page).
func TestProposalDiffColumns(t *testing.T) {
	s := reviewServer(t)
	long := "Write the script before the invitations go out, and send the invitations to everyone on the list once the trailer is recorded and the course page reviewed."
	// Lines before the change: the diff opens with a row of unchanged lines left out, one
	// cell across the table, which is what gave the text column a quarter of it.
	var before strings.Builder
	for i := range 30 {
		fmt.Fprintf(&before, "Step %d of the plan.\n", i+1)
	}
	_, id := s.write(t, "Launch plan", "# Launch plan\n\n"+before.String()+"\n"+long+"\n")
	s.agent(t, "edit_document", "document="+id, "old=send the invitations to everyone", "new=send the invitations to everyone who signed up")
	ctx := newBrowser(t)
	s.signIn(t, ctx, id)
	for _, width := range []int64{1280, 390} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 844)); err != nil {
			t.Fatal(err)
		}
		navigate(t, ctx, s.URL+"/document/"+id+"/proposal/1")
		waitText(t, ctx, "What it changes in version 1")
		share := eval[float64](t, ctx, `(() => { const td = document.querySelector("#against-base tr.add td.text"); return td.getBoundingClientRect().width / td.closest("table").getBoundingClientRect().width })()`)
		broken := brokenWords(t, ctx, "#against-base td.text")
		t.Logf("at %d px: the text column is %.0f%% of the table; %d words broken", width, 100*share, len(broken))
		if width == 1280 && share < 0.6 {
			t.Errorf("at 1280 px the text column is %.0f%% of the table, want 60%% or more", 100*share)
		}
		if len(broken) > 0 {
			t.Errorf("at %d px words are broken across lines: %q", width, broken)
		}
		if width == 390 {
			shot(t, ctx, "proposal-390")
		}
	}
}

// brokenWords returns the words in the elements sel that the browser laid out on more than
// one line.
func brokenWords(t *testing.T, ctx context.Context, sel string) []string {
	t.Helper()
	got := eval[string](t, ctx, `(() => {
  const out = [];
  for (const cell of document.querySelectorAll(`+"`"+sel+"`"+`)) {
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      for (const m of n.data.matchAll(/\S+/g)) {
        const r = document.createRange();
        r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
        if (tops.size > 1) out.push(m[0]);
      }
    }
  }
  return out.join("\n");
})()`)
	if got == "" {
		return nil
	}
	return strings.Split(got, "\n")
}
