package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The person's steps on /activity, at 1280 and 390 px: the header links to it; it shows
// each of the agent's sessions as a line with its changes under it; it shows a new change
// as it comes, without a reload; Undo on a session's line takes that session's change back,
// leaving the later session's lines, and says what it did. Nothing is wider than the page.
func TestActivityAndUndo(t *testing.T) {
	for _, width := range []int{1280, 390} {
		s := startServer(t)
		_, id := s.write(t, "Launch plan", "# Launch plan\n\n1 intro\n\n2 Record the trailer.\n\n3 middle\n\n4 Book the studio.\n")
		s.agent(t, "edit_document", "document="+id, "old=2 Record the trailer.", "new=2 Record the trailer on Monday.")
		s.agent(t, "edit_document", "document="+id, "old=4 Book the studio.", "new=4 Book the big studio.")
		ctx := newBrowser(t)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), 844)); err != nil {
			t.Fatal(err)
		}
		s.signIn(t, ctx, "")
		waitText(t, ctx, "Documents")
		click(t, ctx, "#activity-link")
		waitText(t, ctx, "What happened in")
		got := pageText(t, ctx)
		if n := strings.Count(got, "north for Ana via "); n != 3 {
			t.Errorf("at %d px /activity shows %d sessions of north's, want 3 (a write, two edits):\n%s", width, n, got)
		}
		for _, want := range []string{"Launch plan: version 3, edit +1 −1", "Launch plan: version 2, edit +1 −1", "Undo this session"} {
			if !strings.Contains(got, want) {
				t.Errorf("at %d px /activity lacks %q:\n%s", width, want, got)
			}
		}
		if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > width {
			t.Errorf("at %d px /activity is %d px wide", width, w)
		}
		if right := eval[float64](t, ctx, `Math.max(...[...document.querySelectorAll("form.undo button")].map(b => b.getBoundingClientRect().right))`); right > float64(width) {
			t.Errorf("at %d px an Undo button ends at %.0f px, outside the page", width, right)
		}
		shot(t, ctx, map[int]string{1280: "activity", 390: "activity-narrow"}[width])

		// Live: the agent's next change shows without a reload.
		eval[bool](t, ctx, `window.activityStayed = true`)
		s.agent(t, "append_document", "document="+id, "text=5 Send the invitations.")
		waitText(t, ctx, "Something happened: shown below.")
		waitText(t, ctx, "version 4, append")
		if !eval[bool](t, ctx, `window.activityStayed === true`) {
			t.Errorf("at %d px the activity reloaded to show the new change", width)
		}

		// Undo the session of version 2 (the third line from the top: newest first).
		sel := `li.session:nth-of-type(3) form.undo button`
		if line := eval[string](t, ctx, `document.querySelector("li.session:nth-of-type(3) .heading").innerText + " | " + document.querySelector("li.session:nth-of-type(3) .events").innerText`); !strings.Contains(line, "version 2, edit") {
			t.Fatalf("at %d px the third session's line is not version 2's: %s", width, line)
		}
		click(t, ctx, sel)
		waitText(t, ctx, "undone:")
		waitText(t, ctx, "Launch plan: 1 of the session's versions taken back, as version 5")
		text := s.run(t, "docs", "show", id)
		if !strings.Contains(text, "2 Record the trailer.\n") || !strings.Contains(text, "4 Book the big studio.") || !strings.Contains(text, "5 Send the invitations.") {
			t.Errorf("at %d px after the undo the plan reads:\n%s", width, text)
		}
		if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > width {
			t.Errorf("at %d px the undo's answer is %d px wide", width, w)
		}
	}
}
