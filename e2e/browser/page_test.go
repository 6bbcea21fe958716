package browser

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

const plan = "# Launch plan\n\nRecord the trailer, then review the course page.\n\n| step | who |\n|---|---|\n| trailer | Ana |\n| course page | north |\n\n- [x] book the studio\n- [ ] write the script\n"

// A link from a tool's answer, opened in a browser not signed in, says how to sign in and
// nothing else; the one-time link from "compass-mcp open" opens the document; used twice,
// it is refused.
func TestSignInThenALinkFromAnAnswer(t *testing.T) {
	s := startServer(t)
	link, id := s.write(t, "Launch plan", plan)
	ctx := newBrowser(t)

	navigate(t, ctx, link)
	got := pageText(t, ctx)
	if !strings.Contains(got, "compass-mcp open "+id) || strings.Contains(got, "Record the trailer") || strings.Contains(got, "Launch plan") {
		t.Fatalf("not signed in, the link shows:\n%s", got)
	}
	shot(t, ctx, "signin")

	open := strings.TrimSpace(s.run(t, "open", "--browser=false", link))
	navigate(t, ctx, open)
	waitText(t, ctx, "Record the trailer, then review the course page.")
	got = pageText(t, ctx)
	for _, want := range []string{"Launch plan", "version 1 of 1", "north for Ana", "course page\tnorth"} {
		if !strings.Contains(got, want) {
			t.Errorf("the document page lacks %q:\n%s", want, got)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("input[type=checkbox][disabled]").length`); n != 2 {
		t.Errorf("%d task-list checkboxes, want 2", n)
	}
	// The link the tool gave opens the document now.
	navigate(t, ctx, link)
	waitText(t, ctx, "Record the trailer")
	shot(t, ctx, "document")

	// The one-time link is used up: a fresh browser can't sign in with it.
	other := newBrowser(t)
	navigate(t, other, open)
	if got := pageText(t, other); !strings.Contains(got, "can't be used") {
		t.Fatalf("a used sign-in link: the page says\n%s", got)
	}
	navigate(t, other, link)
	if got := pageText(t, other); strings.Contains(got, "Record the trailer") {
		t.Fatal("a browser whose sign-in was refused sees the document")
	}
}

// The history lists each version with who and +a −r, and its diff shows the lines changed.
func TestHistoryAndDiff(t *testing.T) {
	s := startServer(t)
	_, id := s.write(t, "Launch plan", plan)
	s.agent(t, "edit_document", "document="+id, "old=review the course page", "new=review the course page with Ana")
	s.agent(t, "append_document", "document="+id, "text=- [ ] send the invitations")
	ctx := newBrowser(t)
	s.signIn(t, ctx, id)
	navigate(t, ctx, s.URL+"/document/"+id+"/history")
	got := pageText(t, ctx)
	for _, want := range []string{"3\tappend\tnorth for Ana", "2\tedit\tnorth for Ana", "1\twrite\tnorth for Ana", "+1 −1", "+2 −0"} {
		if !strings.Contains(got, want) {
			t.Errorf("the history lacks %q:\n%s", want, got)
		}
	}
	shot(t, ctx, "history")
	click(t, ctx, `a[href$="diff?from=1&to=2"]`)
	waitText(t, ctx, "what changed")
	del := eval[string](t, ctx, `[...document.querySelectorAll("table.diff tr.del .text")].map(e => e.innerText).join("\n")`)
	add := eval[string](t, ctx, `[...document.querySelectorAll("table.diff tr.add .text")].map(e => e.innerText).join("\n")`)
	if del != "Record the trailer, then review the course page." || add != "Record the trailer, then review the course page with Ana." {
		t.Fatalf("diff 1→2: removed %q, added %q", del, add)
	}
	// Not by color alone: each changed line has its sign.
	if signs := eval[string](t, ctx, `[...document.querySelectorAll("table.diff tr.del .sign, table.diff tr.add .sign")].map(e => e.innerText).join("")`); signs != "−+" {
		t.Errorf("the changed lines' signs are %q, want −+", signs)
	}
	navigate(t, ctx, s.URL+"/document/"+id+"/diff?from=1&to=3")
	waitText(t, ctx, "+3 added")
	shot(t, ctx, "diff")
}

// The person edits from version 1 while the agent saves version 2 elsewhere in the text:
// the page says so, and the save merges both.
func TestEditFromAnOldBaseMerges(t *testing.T) {
	s := startServer(t)
	_, id := s.write(t, "Launch plan", plan)
	ctx := newBrowser(t)
	s.signIn(t, ctx, id)
	navigate(t, ctx, s.URL+"/document/"+id+"/edit")
	text := eval[string](t, ctx, `document.querySelector("textarea[name=text]").value`)
	if text != plan {
		t.Fatalf("the editor holds %q, want the text", text)
	}
	mine := strings.Replace(plan, "# Launch plan", "# Launch plan for May", 1)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("textarea[name=text]"), mine)); err != nil {
		t.Fatal(err)
	}
	s.agent(t, "append_document", "document="+id, "text=- [ ] send the invitations")
	waitText(t, ctx, "north for Ana saved version 2")
	waitText(t, ctx, "saving merges")
	if base := eval[string](t, ctx, `document.querySelector("input[name=base]").value`); base != "1" {
		t.Fatalf("with unsaved text the base moved to %s", base)
	}
	click(t, ctx, "form.editor button.primary")
	waitText(t, ctx, "merged with the versions saved meanwhile as version 3")
	got := pageText(t, ctx)
	if !strings.Contains(got, "Launch plan for May") || !strings.Contains(got, "send the invitations") {
		t.Fatalf("the merged document lacks one side's change:\n%s", got)
	}
	if h := s.run(t, "docs", "history", id); !strings.Contains(h, "merge") || !strings.Contains(h, "Ana") {
		t.Errorf("the history doesn't show the person's merge:\n%s", h)
	}
}

// Both change the same line: nothing is saved, both sides are shown, the person's text is
// kept, and "mine" saves it.
func TestClashThenMine(t *testing.T) {
	s := startServer(t)
	_, id := s.write(t, "Launch plan", plan)
	ctx := newBrowser(t)
	s.signIn(t, ctx, id)
	navigate(t, ctx, s.URL+"/document/"+id+"/edit")
	mine := strings.Replace(plan, "Record the trailer", "Record the long trailer", 1)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("textarea[name=text]"), mine)); err != nil {
		t.Fatal(err)
	}
	s.agent(t, "edit_document", "document="+id, "old=Record the trailer", "new=Record the short trailer")
	waitText(t, ctx, "saved version 2")
	click(t, ctx, "form.editor button.primary")
	waitText(t, ctx, "Nothing was saved")
	got := pageText(t, ctx)
	for _, want := range []string{"Record the short trailer", "Record the long trailer", "Keep mine where we clash", "Keep theirs where we clash"} {
		if !strings.Contains(got, want) {
			t.Errorf("the clash page lacks %q:\n%s", want, got)
		}
	}
	if kept := eval[string](t, ctx, `document.querySelector("textarea[name=text]").value`); kept != mine {
		t.Fatalf("the clash page lost the person's text: %q", kept)
	}
	if h := s.run(t, "docs", "history", id); strings.Count(h, "\n") > 3 && strings.Contains(h, "version 3") {
		t.Fatalf("a clash saved a version:\n%s", h)
	}
	shot(t, ctx, "clash")
	click(t, ctx, `button[name=choose][value=mine]`)
	waitText(t, ctx, "as version 3")
	if got := pageText(t, ctx); !strings.Contains(got, "Record the long trailer") || strings.Contains(got, "short trailer") {
		t.Fatalf("after mine:\n%s", got)
	}
}

// An open page with nothing unsaved shows the agent's new version as soon as it's saved,
// by another process, without a reload.
func TestLiveUpdate(t *testing.T) {
	s := startServer(t)
	_, id := s.write(t, "Launch plan", plan)
	ctx := newBrowser(t)
	s.signIn(t, ctx, id)
	waitText(t, ctx, "version 1 of 1")
	eval[bool](t, ctx, `window.sameDocument = true`)
	s.agent(t, "append_document", "document="+id, "text=Live: the studio is booked.")
	took := waitText(t, ctx, "Live: the studio is booked.")
	waitText(t, ctx, "version 2 of 2")
	waitText(t, ctx, "north for Ana saved version 2")
	if !eval[bool](t, ctx, `window.sameDocument === true`) {
		t.Fatal("the page reloaded instead of updating")
	}
	t.Logf("the new version showed %v after the agent's process returned", took)
	shot(t, ctx, "live")

	// The editor with nothing changed follows too: its text and base move to the new version.
	navigate(t, ctx, s.URL+"/document/"+id+"/edit")
	waitText(t, ctx, "Editing from version 2")
	s.agent(t, "append_document", "document="+id, "text=Live: the script is written.")
	waitText(t, ctx, "the editor now holds it")
	if text := eval[string](t, ctx, `document.querySelector("textarea[name=text]").value`); !strings.HasSuffix(text, "Live: the script is written.\n") {
		t.Fatalf("the untouched editor holds %q", text)
	}
	if base := eval[string](t, ctx, `document.querySelector("input[name=base]").value`); base != "3" {
		t.Fatalf("the untouched editor's base is %s, want 3", base)
	}
}

// Nothing an agent writes runs in the person's browser: every vector of the corpus is
// rendered with no dialog, no script element but the page's own (live.js, doccomments.js),
// no event attribute and no script URL.
func TestXSSCorpus(t *testing.T) {
	s := startServer(t)
	ctx := newBrowser(t)
	corpus := readCorpus(t)
	var ids []string
	for i, v := range corpus {
		_, id := s.write(t, fmt.Sprintf("Vector %02d", i), v+"\n\nafter the vector\n")
		ids = append(ids, id)
	}
	s.signIn(t, ctx, "")
	const check = `(() => {
		const bad = [];
		for (const s of document.scripts) if (!/\/static\/(live|doccomments)\.js$/.test(s.src)) bad.push("script " + s.outerHTML);
		for (const e of document.querySelectorAll("*")) {
			for (const a of e.attributes) {
				if (/^on/i.test(a.name)) bad.push("event attribute " + a.name + " on " + e.tagName);
				if (/^(href|src|action|formaction|data|srcdoc|xlink:href)$/i.test(a.name) && /^\s*(javascript|vbscript|data):/i.test(a.value)) bad.push(a.name + "=" + a.value);
			}
			if (/^(IFRAME|OBJECT|EMBED|SVG|MATH|STYLE|FORM|BASE|META)$/i.test(e.tagName) && e.closest(".markdown")) bad.push("element " + e.tagName);
		}
		return bad.join("\n");
	})()`
	for i, id := range ids {
		navigate(t, ctx, s.URL+"/document/"+id)
		waitText(t, ctx, fmt.Sprintf("Vector %02d", i))
		// Hover and click every link the text made: none may run anything.
		chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { for (const a of document.querySelectorAll(".markdown a, .markdown img")) { a.dispatchEvent(new MouseEvent("mouseover", {bubbles: true})); } return true })()`))
		if bad := eval[string](t, ctx, check); bad != "" {
			t.Errorf("vector %d %q reached the DOM as:\n%s", i, corpus[i], bad)
		}
		if eval[bool](t, ctx, `window.xssRan === true`) {
			t.Errorf("vector %d ran", i)
		}
	}
	time.Sleep(200 * time.Millisecond) // a dialog opened by a late timer would fail the test through newBrowser
}

// A form on another site can't make the signed-in browser change anything.
func TestCrossSitePostRefused(t *testing.T) {
	s := startServer(t)
	_, id := s.write(t, "Launch plan", plan)
	ctx := newBrowser(t)
	s.signIn(t, ctx, id)
	target := s.URL + "/document/" + id + "/delete"
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<form id=f method=post action=%q><input name=x value=1></form><script>document.getElementById("f").submit()</script>`, target)
	}))
	defer evil.Close()
	// localhost and 127.0.0.1 are different sites to the browser.
	navigate(t, ctx, strings.Replace(evil.URL, "127.0.0.1", "localhost", 1))
	// Its page posts as it loads: wait (10 s at most) for the page that answers the post.
	// Asked in the middle of the navigation, the browser may answer nothing, or an error.
	var loc string
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		loc, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState == "complete" ? location.href : ""`))
		if strings.HasPrefix(loc, target) {
			break
		}
	}
	if !strings.HasPrefix(loc, target) {
		t.Fatalf("the other site's form didn't post (the browser is at %s)", loc)
	}
	if got := pageText(t, ctx); !strings.Contains(got, "Refused: sent from another site") && !strings.Contains(got, "Sign in") {
		t.Errorf("the refused post's page says:\n%s", got)
	}
	if out := s.run(t, "docs", "list"); !strings.Contains(out, "Launch plan") {
		t.Fatalf("a cross-site post deleted the document:\n%s", out)
	}
	// The page's own form, from the page, works.
	navigate(t, ctx, s.URL+"/document/"+id)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("details.more summary"))); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, "button.danger")
	waitText(t, ctx, "Deleted documents")
	if out := s.run(t, "docs", "list"); strings.Contains(out, "Launch plan") {
		t.Fatalf("the page's own delete didn't delete:\n%s", out)
	}
}

// At phone width nothing scrolls sideways; the list, for the README.
func TestPhoneWidth(t *testing.T) {
	s := startServer(t)
	_, id := s.write(t, "Launch plan", plan)
	s.write(t, "Pricing", "We settled on 12 a month.\n")
	s.write(t, "Course outline", "1. Welcome\n2. The first steps\n")
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	s.signIn(t, ctx, "")
	waitText(t, ctx, "Course outline")
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the list is %d px wide at a 390 px phone: it scrolls sideways", w)
	}
	shot(t, ctx, "phone")
	s.agent(t, "edit_document", "document="+id, "old=review the course page", "new=review the course page, then send the long announcement to everyone on the list before Friday")
	for _, path := range []string{"/document/" + id, "/document/" + id + "/history", "/document/" + id + "/diff", "/document/" + id + "/edit", "/conversations"} {
		navigate(t, ctx, s.URL+path)
		waitText(t, ctx, "Sign out")
		if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("%s is %d px wide at a 390 px phone: it scrolls sideways", path, w)
		}
	}
}

// readCorpus reads the XSS corpus the web package's tests render, testdata/xss.json there.
func readCorpus(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "web", "testdata", "xss.json"))
	if err != nil {
		t.Fatal(err)
	}
	var corpus []string
	if err := json.Unmarshal(raw, &corpus); err != nil {
		t.Fatal(err)
	}
	return corpus
}

// A diff that starts with "⋯ N unchanged lines" keeps its columns: the line numbers narrow,
// the text the rest, at a laptop's width and a phone's. (table-layout: fixed took the
// widths from that first row, a cell across all four columns, and gave each a quarter: at
// 390 px words broke as "certific/ate".)
func TestDiffStartingWithUnchangedLinesKeepsTheTextWide(t *testing.T) {
	s := startServer(t)
	var text strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&text, "Line %d of the launch plan: the studio, the trailer and the course page.\n", i)
	}
	_, id := s.write(t, "Launch plan", text.String())
	s.agent(t, "edit_document", "document="+id, "old=Line 30 of the launch plan", "new=Line 30 of the launch plan, with the certificate")
	ctx := newBrowser(t)
	s.signIn(t, ctx, id)
	for _, width := range []int{1280, 390} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), 844)); err != nil {
			t.Fatal(err)
		}
		navigate(t, ctx, s.URL+"/document/"+id+"/diff?from=1&to=2")
		waitText(t, ctx, "with the certificate")
		if first := eval[string](t, ctx, `document.querySelector("table.diff tr").className`); first != "gap" {
			t.Fatalf("the diff starts with a %q row, want the unchanged lines' gap", first)
		}
		table := eval[float64](t, ctx, `document.querySelector("table.diff").getBoundingClientRect().width`)
		textCell := eval[float64](t, ctx, `document.querySelector("table.diff tr.add td.text").getBoundingClientRect().width`)
		number := eval[float64](t, ctx, `document.querySelector("table.diff tr.add td.n").getBoundingClientRect().width`)
		t.Logf("at %d px: the table %.0f px, a line number %.0f px, the text %.0f px", width, table, number, textCell)
		if textCell < 0.6*table || number > 64 {
			t.Errorf("at %d px: the text is %.0f px of the table's %.0f, a line number %.0f px; want the text at least 60%% and numbers at most 64 px", width, textCell, table, number)
		}
		if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > width {
			t.Errorf("at %d px the diff is %d px wide: it scrolls sideways", width, w)
		}
	}
}
