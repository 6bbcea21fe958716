package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/compass-mcp/compass-mcp/internal/testkit/webtest"
)

// reviewServer is the server of startServer in review mode: the agent north's changes
// (compass-mcp call, in other processes, with COMPASS_REVIEW=1) are proposals.
func reviewServer(t *testing.T) *server {
	t.Helper()
	return &server{webtest.Start(t, []string{"COMPASS_AGENT=north", "COMPASS_REVIEW=1"}, []string{"people", "set", "ana", "Ana"})}
}

// The person's steps with the agent's proposals: open the banner's proposal, look at its
// diff, accept it; a new proposal appears on the open page; decline one with a reason, and
// the agent's next read says so.
func TestReviewAProposal(t *testing.T) {
	s := reviewServer(t)
	_, id := s.write(t, "Launch plan", plan)
	if got := s.agent(t, "edit_document", "document="+id, "old=review the course page", "new=review the course page with Ana"); !strings.HasPrefix(got, "Proposed [Launch plan](") {
		t.Fatalf("the agent's edit in review mode: %s", got)
	}
	s.agent(t, "append_document", "document="+id, "text=- [ ] send the invitations")
	ctx := newBrowser(t)
	s.signIn(t, ctx, id)
	waitText(t, ctx, "2 changes wait for your review")
	shot(t, ctx, "proposals")

	click(t, ctx, `#proposals a[href$="/proposal/1"]`)
	waitText(t, ctx, "What it changes in version 1")
	del := eval[string](t, ctx, `[...document.querySelectorAll("#against-base tr.del .text")].map(e => e.innerText).join("\n")`)
	add := eval[string](t, ctx, `[...document.querySelectorAll("#against-base tr.add .text")].map(e => e.innerText).join("\n")`)
	if del != "Record the trailer, then review the course page." || add != "Record the trailer, then review the course page with Ana." {
		t.Fatalf("change 1's diff: removed %q, added %q", del, add)
	}
	if got := pageText(t, ctx); !strings.Contains(got, "open, waiting for Ana's review") {
		t.Errorf("change 1's status:\n%s", got)
	}
	shot(t, ctx, "proposal")
	click(t, ctx, "#accept")
	waitText(t, ctx, "accepted change 1 as version 2")
	got := pageText(t, ctx)
	for _, want := range []string{"review the course page with Ana", "version 2 of 2", "north for Ana, accepted by Ana", "1 change waits for your review"} {
		if !strings.Contains(got, want) {
			t.Errorf("after accepting, the document lacks %q:\n%s", want, got)
		}
	}

	// The open page hears of a new proposal.
	s.agent(t, "append_document", "document="+id, "text=- [ ] print the posters")
	waitText(t, ctx, "north for Ana made change 3")
	waitText(t, ctx, "2 changes wait for your review")

	click(t, ctx, `#proposals a[href$="/proposal/2"]`)
	waitText(t, ctx, "Your decision")
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("textarea[name=why]"), "The invitations go out after the trailer.")); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, "#decline")
	waitText(t, ctx, "declined change 2")
	// Change 1 was decided before change 3 was made: old news, not told again.
	read := s.agent(t, "read_document", "document="+id)
	for _, want := range []string{"What became of your proposals:", "- change 2 was declined by Ana ", "“The invitations go out after the trailer.”", "Open proposals (1):\n- change 3 by north for Ana"} {
		if !strings.Contains(read, want) {
			t.Errorf("the agent's next read lacks %q:\n%s", want, read)
		}
	}
}

// Accepting a proposal that clashes with the person's own change since: the clash page keeps
// both sides; keeping the proposal's lines accepts it.
func TestAcceptAClashingProposal(t *testing.T) {
	s := reviewServer(t)
	_, id := s.write(t, "Launch plan", plan)
	s.agent(t, "edit_document", "document="+id, "old=review the course page", "new=review the course page with Ana")
	ctx := newBrowser(t)
	s.signIn(t, ctx, id)
	navigate(t, ctx, s.URL+"/document/"+id+"/edit")
	mine := strings.Replace(plan, "review the course page.", "review the course page on Friday.", 1)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("textarea[name=text]"), mine)); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, "form.editor button.primary")
	waitText(t, ctx, "as version 2")
	navigate(t, ctx, s.URL+"/document/"+id+"/proposal/1")
	waitText(t, ctx, "accepting it as it is clashes")
	click(t, ctx, "#accept")
	waitText(t, ctx, "Nothing was saved")
	// The clash page keeps both sides (waitText fails naming what the page said instead).
	waitText(t, ctx, "review the course page on Friday.")
	waitText(t, ctx, "review the course page with Ana.")
	shot(t, ctx, "proposal-clash")
	click(t, ctx, `form.editor button[value=mine]`)
	waitText(t, ctx, "accepted change 1, merged with the versions saved since, as version 3")
	if got := pageText(t, ctx); !strings.Contains(got, "review the course page with Ana.") || strings.Contains(got, "on Friday") {
		t.Errorf("after keeping the proposal's lines:\n%s", got)
	}
}

// The person's steps with comments: choose lines (click a line's number, shift-click
// another), write, comment; the agent sees it in read_document and replies; the person sees
// the reply and resolves it.
func TestCommentOnLines(t *testing.T) {
	s := startServer(t)
	_, id := s.write(t, "Launch plan", plan)
	ctx := newBrowser(t)
	s.signIn(t, ctx, id)
	click(t, ctx, "#comments")
	waitText(t, ctx, "No open comments")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#L3 td.n a`))); err != nil {
		t.Fatal(err)
	}
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(`#L5 td.n a`)))
	if err != nil || len(nodes) != 1 {
		t.Fatalf("line 5's number: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickNode(nodes[0], chromedp.ButtonModifiers(chromedp.ModifierShift))); err != nil {
		t.Fatal(err)
	}
	if from, to := eval[string](t, ctx, `document.getElementById("from").value`), eval[string](t, ctx, `document.getElementById("to").value`); from != "3" || to != "5" {
		t.Fatalf("the lines chosen are %s to %s, want 3 to 5", from, to)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("tr.chosen").length`); n != 3 {
		t.Errorf("%d lines marked chosen, want 3", n)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#comment-text"), "Who records the trailer, and when?")); err != nil {
		t.Fatal(err)
	}
	shot(t, ctx, "comment-lines")
	click(t, ctx, "#add-comment")
	waitText(t, ctx, "comment 1 on lines 3-5")
	read := s.agent(t, "read_document", "document="+id)
	if !strings.Contains(read, "Open comments (1):\n- comment 1 on lines 3-5 · Ana: Who records the trailer, and when?") {
		t.Fatalf("the agent's read:\n%s", read)
	}
	if got := s.agent(t, "comment_document", "document="+id, "reply_to=1", "text=Ana does, on Tuesday."); !strings.HasPrefix(got, "Replied to comment 1") {
		t.Fatalf("the agent's reply: %s", got)
	}
	navigate(t, ctx, s.URL+"/document/"+id+"/comments")
	waitText(t, ctx, "Ana does, on Tuesday.")
	if got := pageText(t, ctx); !strings.Contains(got, "comment 2 · north for Ana") {
		t.Errorf("the reply is not shown as north's:\n%s", got)
	}
	shot(t, ctx, "comments")
	click(t, ctx, "#comment-1 button.resolve")
	waitText(t, ctx, "resolved comment 1")
	waitText(t, ctx, "No open comments")
	if read := s.agent(t, "read_document", "document="+id); strings.Contains(read, "Open comments") {
		t.Errorf("after resolving, the agent still reads comments:\n%s", read)
	}
}
