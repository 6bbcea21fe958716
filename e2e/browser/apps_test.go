package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools whose answers the view shows.
var writingTools = []string{"write_document", "append_document", "edit_document", "comment_document"}

// loadView checks that every writing tool links one ui:// view (the nested key and the
// legacy flat one), reads it, and checks what it is: an MCP App's HTML with nothing from
// another origin. It returns the view's URI.
func (h *appHost) loadView(t *testing.T) string {
	t.Helper()
	uri := ""
	for _, name := range writingTools {
		tool := h.tool(name)
		if tool == nil {
			t.Fatalf("tools/list has no %s", name)
		}
		ui, _ := tool.Meta["ui"].(map[string]any)
		u, _ := ui["resourceUri"].(string)
		legacy, _ := tool.Meta["ui/resourceUri"].(string)
		if !strings.HasPrefix(u, "ui://") || legacy != u {
			t.Fatalf("%s's _meta links the view as %q (ui.resourceUri) and %q (ui/resourceUri): want one ui:// URI in both", name, u, legacy)
		}
		if vis, _ := ui["visibility"].([]any); len(vis) == 0 {
			t.Errorf("%s's _meta.ui has no visibility (VS Code skips app tools without it): %v", name, ui)
		}
		if uri != "" && u != uri {
			t.Errorf("%s links %s, %s links %s: want one view", writingTools[0], uri, name, u)
		}
		uri = u
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := h.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("reading %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%s has %d contents, want 1", uri, len(res.Contents))
	}
	c := res.Contents[0]
	if c.MIMEType != appMIME {
		t.Errorf("%s's mimeType is %q, want %q", uri, c.MIMEType, appMIME)
	}
	if c.Text == "" {
		t.Fatalf("%s has no text", uri)
	}
	if bad := outsideOrigins(c.Text); len(bad) > 0 {
		t.Errorf("%s loads from other origins: %q", uri, bad)
	}
	t.Logf("the view %s: %d bytes", uri, len(c.Text))
	h.view = c.Text
	return uri
}

// outsideOrigins is what in html would reach another origin: an absolute URL (or a
// protocol-relative one) in src, href, action or url(), or an @import.
func outsideOrigins(html string) []string {
	var bad []string
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(src|href|action|formaction|poster|data)\s*=\s*["']?\s*(https?:|//)[^"'\s>]*`),
		regexp.MustCompile(`(?i)url\(\s*["']?\s*(https?:|//)[^)]*\)`),
		regexp.MustCompile(`(?i)@import`),
		regexp.MustCompile(`(?i)\b(fetch|XMLHttpRequest|WebSocket|EventSource|sendBeacon)\s*\(`),
	} {
		bad = append(bad, re.FindAllString(html, -1)...)
	}
	return bad
}

// answer is what a tool's text answer says about the version it made.
type answer struct {
	raw     json.RawMessage
	text    string
	title   string
	link    string // the page's link for the document, as the answer gives it
	id      string
	version int

	oldLine, newLine string // an edit's old and new text, set by the test
}

var savedAnswer = regexp.MustCompile(`^(?:Saved|Proposed) \[((?:\\.|[^\]\\])*)\]\((http://[^)]+/document/([0-9A-Z]{26}))\)`)
var versionInAnswer = regexp.MustCompile(`(?:as version|change) (\d+)`)

func (h *appHost) write(t *testing.T, tool string, args map[string]any) answer {
	t.Helper()
	raw := h.callTool(t, tool, args)
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.IsError || len(r.Content) == 0 {
		t.Fatalf("%s(%v) answered %s", tool, args, raw)
	}
	a := answer{raw: raw, text: r.Content[0].Text}
	m := savedAnswer.FindStringSubmatch(a.text)
	v := versionInAnswer.FindStringSubmatch(a.text)
	if m == nil || v == nil {
		t.Fatalf("%s answered %q, not a saved version", tool, a.text)
	}
	a.title, a.link, a.id = m[1], m[2], m[3]
	fmt.Sscan(v[1], &a.version)
	return a
}

// text is the latest text of the document id and its version, as the agent reads it.
func (h *appHost) latest(t *testing.T, id string) (version int, text string) {
	t.Helper()
	raw := h.callTool(t, "read_document", map[string]any{"document": id})
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("read_document %s: %s", id, raw)
	}
	head, body, _ := strings.Cut(r.Content[0].Text, "\n\n")
	m := regexp.MustCompile(`version (\d+) of`).FindStringSubmatch(head)
	if m == nil {
		t.Fatalf("read_document's answer starts %q", head)
	}
	fmt.Sscan(m[1], &version)
	return version, body
}

// plan40 is a document of 40 lines.
func plan40() string {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "Step %d of the launch: the studio, the trailer and the course page.\n", i)
	}
	return b.String()
}

// luminance is the relative luminance (0 black, 1 white) of a computed CSS color.
func luminance(css string) float64 {
	var r, g, b float64
	if _, err := fmt.Sscanf(strings.ReplaceAll(css, " ", ""), "rgb(%g,%g,%g)", &r, &g, &b); err != nil {
		if _, err := fmt.Sscanf(strings.ReplaceAll(css, " ", ""), "rgba(%g,%g,%g", &r, &g, &b); err != nil {
			return -1
		}
	}
	return (0.2126*r + 0.7152*g + 0.0722*b) / 255
}

// The change as a host shows it: the agent edits a line of a 40-line document through a
// client that renders MCP Apps, and the host puts the server's view in a sandboxed frame
// beside the answer, at a phone's 320 px and a wide chat's 700, light and dark. The view
// shows the title, the version, the counts and the changed lines, stays within 500 px
// high, has targets of 44 px, "Open on your page" asks the host to open that version's
// page, and "Undo this change" reaches the server, which restores the version before.
func TestAppViewShowsTheChange(t *testing.T) {
	s := startServer(t)
	h := newAppHost(t, s)
	h.loadView(t)
	first := h.write(t, "write_document", map[string]any{"title": "Launch plan", "text": plan40()})
	step := 10
	for _, width := range []int{320, 700} {
		b := newAppBrowser(t, h, width+40)
		for _, theme := range []string{"light", "dark"} {
			step++
			t.Run(fmt.Sprintf("%d/%s", width, theme), func(t *testing.T) {
				old := fmt.Sprintf("Step %d of the launch", step)
				args := map[string]any{"document": first.id, "old": old, "new": fmt.Sprintf("Step %d (%s at %d px) of the launch", step, theme, width)}
				edit := h.write(t, "edit_document", args)
				edit.oldLine, edit.newLine = old, args["new"].(string)
				b.open(t, h.show(hostCase{Theme: theme, Width: width, Tool: h.tool("edit_document"), Input: args, Result: edit.raw}))
				got := waitView(t, b, args["new"].(string))
				for _, want := range []string{"Launch plan", old} {
					if !strings.Contains(got, want) {
						t.Errorf("the view lacks %q:\n%s", want, got)
					}
				}
				if !regexp.MustCompile(fmt.Sprintf(`(?i)\bversion %d\b`, edit.version)).MatchString(got) {
					t.Errorf("the view doesn't say version %d:\n%s", edit.version, got)
				}
				if !regexp.MustCompile(`\+\s*1\b`).MatchString(got) || !regexp.MustCompile(`[−-]\s*1\b`).MatchString(got) {
					t.Errorf("the view doesn't say +1 −1:\n%s", got)
				}
				b.checkFits(t, width)
				b.checkTheme(t, theme)
				if theme == "light" {
					// The person switches the host to dark while the view is shown.
					eval[bool](t, b.ctx, `(setTheme("dark"), true)`)
					time.Sleep(100 * time.Millisecond)
					b.checkTheme(t, "dark")
					eval[bool](t, b.ctx, `(setTheme("light"), true)`)
					time.Sleep(100 * time.Millisecond)
					b.checkTheme(t, "light")
				}
				b.checkTargets(t)
				if width == 320 && theme == "light" || width == 700 && theme == "dark" {
					shot(t, b.ctx, fmt.Sprintf("app-%d-%s", width, theme))
				}

				clickInView(t, b, "Open on your page")
				b.waitHost(t, "hostLog.links.length == 1", "Open on your page sent no ui/open-link")
				checkVersionLink(t, s, b.hostJSON(t, "hostLog.links[0]"), edit)

				_, edited := h.latest(t, first.id)
				clickInView(t, b, "Undo this change")
				b.waitHost(t, "hostLog.answers.length == 1", "Undo this change sent no tools/call the host answered")
				b.checkUndo(t, h, edit, edited)
				b.checkContained(t)
			})
		}
	}
}

// checkVersionLink: the view asked the host to open the page of the version the edit made.
func checkVersionLink(t *testing.T, s *server, got string, edit answer) {
	t.Helper()
	var url string
	json.Unmarshal([]byte(got), &url)
	t.Logf("Open on your page: %s", url)
	want := fmt.Sprintf("%s/document/%s", s.URL, edit.id)
	if !strings.HasPrefix(url, want) || !regexp.MustCompile(fmt.Sprintf(`(/v/|[?&](to|version)=)%d\b`, edit.version)).MatchString(url) {
		t.Errorf("Open on your page asked to open %q, want %s's page of version %d", url, want, edit.version)
	}
}

// checkUndo: the view's tools/call was the app-only tool, the server restored the text of
// the version before the edit as a new version, and the view says so.
func (b *appBrowser) checkUndo(t *testing.T, h *appHost, edit answer, edited string) {
	t.Helper()
	var calls []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	json.Unmarshal([]byte(b.hostJSON(t, "hostLog.calls")), &calls)
	if len(calls) != 1 {
		t.Fatalf("the view made %d tools/call, want 1: %v", len(calls), calls)
	}
	tool := h.tool(calls[0].Name)
	if tool == nil {
		t.Fatalf("the view called %q, which tools/list doesn't have", calls[0].Name)
	}
	ui, _ := tool.Meta["ui"].(map[string]any)
	if vis, _ := ui["visibility"].([]any); len(vis) != 1 || vis[0] != "app" {
		t.Errorf("the view's undo tool %s has visibility %v, want [app] only", tool.Name, ui["visibility"])
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	json.Unmarshal([]byte(b.hostJSON(t, "hostLog.answers[0]")), &res)
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("the undo's answer: %s", b.hostJSON(t, "hostLog.answers[0]"))
	}
	version, text := h.latest(t, edit.id)
	if version != edit.version+1 {
		t.Errorf("after the undo the latest version is %d, want %d (the edit's %d restored as a new version)", version, edit.version+1, edit.version)
	}
	if strings.Contains(text, edit.newLine) || !strings.Contains(text, edit.oldLine) || text == edited {
		t.Errorf("after the undo the document reads:\n%s", text)
	}
	t.Logf("the undo answered: %s", res.Content[0].Text)
	waitView(t, b, res.Content[0].Text)
}

// checkFits: the view said its size, at most 500 px high, and nothing scrolls sideways.
func (b *appBrowser) checkFits(t *testing.T, width int) {
	t.Helper()
	b.waitHost(t, "hostLog.sizes.length > 0", "the view never sent ui/notifications/size-changed")
	var sizes []struct{ Width, Height float64 }
	json.Unmarshal([]byte(b.hostJSON(t, "hostLog.sizes")), &sizes)
	last := sizes[len(sizes)-1]
	if last.Height <= 0 || last.Height > 500 {
		t.Errorf("the view asked for %v px of height, want 1 to 500 (sizes: %v)", last.Height, sizes)
	}
	if w := inView[float64](t, b, `document.documentElement.scrollWidth`); w > float64(width) {
		t.Errorf("at %d px the view is %v px wide: it scrolls sideways", width, w)
	}
}

// checkTheme: the host's theme is the view's: a dark background with light text, or the
// other way round.
func (b *appBrowser) checkTheme(t *testing.T, theme string) {
	t.Helper()
	colors := inView[[]string](t, b, `(() => { const s = getComputedStyle(document.body); let bg = s.backgroundColor; if (/rgba\(.*,\s*0\)$/.test(bg) || bg === "transparent") bg = getComputedStyle(document.documentElement).backgroundColor; return [bg, s.color] })()`)
	bg, fg := luminance(colors[0]), luminance(colors[1])
	if dark := theme == "dark"; (dark && !(bg < 0.3 && fg > 0.6)) || (!dark && !(bg > 0.7 && fg < 0.4)) {
		t.Errorf("with the %s theme the view has background %s and text %s", theme, colors[0], colors[1])
	}
}

// checkTargets: every button and link is at least 44 × 44 px.
func (b *appBrowser) checkTargets(t *testing.T) {
	t.Helper()
	small := inView[[]string](t, b, `[...document.querySelectorAll("button, a[href], [role=button], input, select, summary")].filter(e => e.getClientRects().length).map(e => [e.innerText.trim() || e.tagName, e.getBoundingClientRect()]).filter(([, r]) => r.width < 44 || r.height < 44).map(([n, r]) => n + " " + Math.round(r.width) + "×" + Math.round(r.height))`)
	if len(small) > 0 {
		t.Errorf("targets under 44 px: %q", small)
	}
}

// Nothing an agent writes runs in the view or the host: the red team's XSS corpus, each
// vector as a document's title and its lines, shown in the view; no vector calls alert (or
// confirm, prompt, print: a hook in every frame counts them), the host page keeps only its
// own elements, and the browser asks for nothing but the host's page and the view.
func TestAppViewHostileText(t *testing.T) {
	t.Parallel() // the two corpus runs, the longest, beside each other
	s := startServer(t)
	h := newAppHost(t, s)
	h.loadView(t)
	b := newAppBrowser(t, h, 740)

	checkCounterCounts(t, h, b, false)

	showCorpus(t, h, b, false)
	time.Sleep(200 * time.Millisecond) // a late timer's alert would be counted
	if got := b.hits(); len(got) > 0 {
		t.Errorf("late: %q", got)
	}
	b.checkContained(t)
}

// A long change stays within 500 px high inline and scrolls inside, once: the agent
// appends 80 lines, and the view asks for at most 500 px, with one scrolling box (its own
// document or one element in it, never one inside another).
func TestAppViewLongChangeScrollsInside(t *testing.T) {
	s := startServer(t)
	h := newAppHost(t, s)
	h.loadView(t)
	first := h.write(t, "write_document", map[string]any{"title": "Launch plan", "text": plan40()})
	var more strings.Builder
	for i := 1; i <= 80; i++ {
		fmt.Fprintf(&more, "- [ ] task %d: call the printer about the posters\n", i)
	}
	args := map[string]any{"document": first.id, "text": more.String()}
	appended := h.write(t, "append_document", args)
	for _, width := range []int{320, 700} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			b := newAppBrowser(t, h, width+40)
			b.open(t, h.show(hostCase{Theme: "light", Width: width, Tool: h.tool("append_document"), Input: args, Result: appended.raw}))
			got := waitView(t, b, "task 1:")
			// Folded in the middle, the change keeps its ends and says how much it folds.
			if !strings.Contains(got, "task 80:") || !regexp.MustCompile(`\d+ added lines`).MatchString(got) {
				t.Errorf("the long change's view lacks its last line or its fold:\n%s", got)
			}
			b.checkFits(t, width)
			scrollers := inView[[]string](t, b, `(() => {
				const out = [];
				const de = document.scrollingElement;
				if (de.scrollHeight > innerHeight + 1) out.push("the document");
				for (const e of document.querySelectorAll("body *")) {
					const oy = getComputedStyle(e).overflowY;
					if ((oy === "auto" || oy === "scroll") && e.scrollHeight > e.clientHeight + 1) out.push(e.tagName + (e.className ? "." + e.className : ""));
				}
				return out;
			})()`)
			if len(scrollers) != 1 {
				t.Errorf("at %d px the long change scrolls in %d boxes, want 1: %q", width, len(scrollers), scrollers)
			}
			frame := eval[float64](t, b.ctx, `document.getElementById("view").getBoundingClientRect().height`)
			if frame > 500 {
				t.Errorf("the host's frame is %v px high, from the view's size", frame)
			}
			b.checkContained(t)
			if width == 700 {
				shot(t, b.ctx, "app-long")
			}

			// A host that gives less room (containerDimensions.maxHeight) gets a view that fits it.
			b.open(t, h.show(hostCase{Theme: "light", Width: width, MaxHeight: 300, Tool: h.tool("append_document"), Input: args, Result: appended.raw}))
			waitView(t, b, "task 1:")
			b.waitHost(t, "hostLog.sizes.length > 0", "the view never sent ui/notifications/size-changed")
			var sizes []struct{ Height float64 }
			json.Unmarshal([]byte(b.hostJSON(t, "hostLog.sizes")), &sizes)
			if last := sizes[len(sizes)-1].Height; last > 300 {
				t.Errorf("with a container of at most 300 px the view asked for %v px", last)
			}
			b.checkContained(t)
		})
	}
}

// In review mode the agent's edit is a proposal: the view shows it with "Decide on your
// page", which opens the change's page, and offers no undo (deciding is the person's, on
// the page and the command line).
func TestAppViewReviewMode(t *testing.T) {
	s := reviewServer(t)
	h := newAppHost(t, s)
	h.loadView(t)
	_, id := s.write(t, "Launch plan", plan40())
	args := map[string]any{"document": id, "old": "Step 12 of the launch", "new": "Step 12, with Ana, of the launch"}
	proposed := h.write(t, "edit_document", args)
	if !strings.HasPrefix(proposed.text, "Proposed ") {
		t.Fatalf("in review mode the edit answered %q", proposed.text)
	}
	// The view's undo tool (undo_change), called by a scripted client in review mode, is
	// refused or unknown, and changes nothing: deciding is the person's.
	before, _ := h.latest(t, id)
	raw, err := h.call(context.Background(), "undo_change", map[string]any{"document": id, "version": before})
	if v, _ := h.latest(t, id); v != before || (err == nil && !strings.Contains(string(raw), `"isError":true`)) {
		t.Errorf("in review mode undo_change answered %s (%v), and the document is at version %d (was %d)", raw, err, v, before)
	}
	t.Logf("in review mode undo_change: %s %v", raw, err)
	for _, width := range []int{320, 700} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			b := newAppBrowser(t, h, width+40)
			b.open(t, h.show(hostCase{Theme: "dark", Width: width, Tool: h.tool("edit_document"), Input: args, Result: proposed.raw}))
			got := waitView(t, b, "Step 12, with Ana, of the launch")
			if strings.Contains(got, "Undo this change") {
				t.Errorf("in review mode the view offers Undo:\n%s", got)
			}
			b.checkTargets(t)
			b.checkTheme(t, "dark")
			if width == 320 {
				shot(t, b.ctx, "app-review")
			}
			clickInView(t, b, "Decide on your page")
			b.waitHost(t, "hostLog.links.length == 1", "Decide on your page sent no ui/open-link")
			var url string
			json.Unmarshal([]byte(b.hostJSON(t, "hostLog.links[0]")), &url)
			if want := fmt.Sprintf("%s/document/%s/proposal/%d", s.URL, id, proposed.version); url != want {
				t.Errorf("Decide on your page asked to open %q, want %q", url, want)
			}
			if calls := b.hostJSON(t, "hostLog.calls"); calls != "[]" {
				t.Errorf("in review mode the view called tools: %s", calls)
			}
			b.checkContained(t)
		})
	}
}

// A refused write is shown too (a host shows the view for every call of a tool that links
// it): the view says what the model read, and offers neither the page nor an undo.
func TestAppViewRefusal(t *testing.T) {
	s := startServer(t)
	h := newAppHost(t, s)
	h.loadView(t)
	first := h.write(t, "write_document", map[string]any{"title": "Launch plan", "text": plan40()})
	args := map[string]any{"document": first.id, "old": "Step 99 of the launch", "new": "Step 99, new"}
	raw := h.callTool(t, "edit_document", args)
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || !r.IsError || len(r.Content) == 0 {
		t.Fatalf("the edit of a line that isn't there answered %s", raw)
	}
	b := newAppBrowser(t, h, 360)
	b.open(t, h.show(hostCase{Theme: "light", Width: 320, Tool: h.tool("edit_document"), Input: args, Result: raw}))
	got := waitView(t, b, r.Content[0].Text)
	for _, label := range []string{"Undo this change", "Open on your page", "Decide on your page"} {
		if strings.Contains(got, label) {
			t.Errorf("the refusal's view offers %q:\n%s", label, got)
		}
	}
	b.checkFits(t, 320)
	b.checkContained(t)
	if v, _ := h.latest(t, first.id); v != 1 {
		t.Errorf("after the refusal the document is at version %d", v)
	}
}

// The largest change a write can make (1 MB of new lines, 20,000 of them) reaches the view
// folded: shown within the usual wait, within 500 px, with a bounded number of rows.
func TestAppViewHugeChange(t *testing.T) {
	s := startServer(t)
	h := newAppHost(t, s)
	h.loadView(t)
	var text strings.Builder
	for i := 1; text.Len() < 1<<20; i++ {
		fmt.Fprintf(&text, "line %05d of the archive, copied from the old wiki, word for word.\n", i)
	}
	args := map[string]any{"title": "Archive", "text": text.String()}
	a := h.write(t, "write_document", args)
	t.Logf("the answer is %d bytes for %d bytes of text", len(a.raw), text.Len())
	b := newAppBrowser(t, h, 740)
	start := time.Now()
	b.open(t, h.show(hostCase{Theme: "dark", Width: 700, Tool: h.tool("write_document"), Input: map[string]any{"title": "Archive", "text": "(1 MB)"}, Result: a.raw}))
	waitView(t, b, "line 00001 of the archive")
	t.Logf("shown in %v", time.Since(start).Round(time.Millisecond))
	b.checkFits(t, 700)
	rows := inView[int](t, b, `document.querySelectorAll("#diff > *").length`)
	if rows > 2000 {
		t.Errorf("the view made %d rows for the change", rows)
	}
	t.Logf("%d rows in the view", rows)
	b.checkContained(t)
}

// showCorpus shows each vector of the XSS corpus, as a new document's title and lines, in
// the view (through the sandbox proxy if proxied), and checks that none ran or reached the
// view's document or the host page.
func showCorpus(t *testing.T, h *appHost, b *appBrowser, proxied bool) {
	t.Helper()
	hostDOM := `[...document.body.querySelectorAll("*")].map(e => e.tagName + (e.id ? "#" + e.id : "")).join(" ")`
	corpus := readCorpus(t)
	for i, v := range corpus {
		title := []rune(fmt.Sprintf("V%02d %s", i, strings.Join(strings.Fields(v), " ")))
		if len(title) > 200 {
			title = title[:200]
		}
		args := map[string]any{"title": string(title), "text": v + "\n\nafter the vector\n"}
		a := h.write(t, "write_document", args)
		b.open(t, h.showIn(hostCase{Theme: "dark", Width: 700, Tool: h.tool("write_document"), Input: args, Result: a.raw}, proxied))
		waitView(t, b, fmt.Sprintf("V%02d", i))
		// Hover and click nothing of the person's, but let every handler and image have its go.
		inView[bool](t, b, `(() => { for (const e of document.querySelectorAll("a, img, svg, details, div")) e.dispatchEvent(new MouseEvent("mouseover", {bubbles: true})); return true })()`)
		time.Sleep(30 * time.Millisecond)
		if got := b.hits(); len(got) > 0 {
			t.Errorf("vector %d %q ran: %q", i, v, got)
		}
		bad := inView[string](t, b, `(() => {
			const bad = [];
			for (const e of document.querySelectorAll("body *")) {
				for (const a of e.attributes) {
					if (/^on/i.test(a.name)) bad.push("event attribute " + a.name + " on " + e.tagName);
					if (/^(href|src|action|formaction|data|srcdoc|xlink:href)$/i.test(a.name) && /^\s*(javascript|vbscript|data):/i.test(a.value)) bad.push(a.name + "=" + a.value);
				}
				if (/^(IFRAME|OBJECT|EMBED|FORM|BASE|META|IMG)$/.test(e.tagName)) bad.push("element " + e.tagName);
			}
			return bad.join("\n");
		})()`)
		if bad != "" {
			t.Errorf("vector %d %q reached the view's DOM as:\n%s", i, v, bad)
		}
		if got := eval[string](t, b.ctx, hostDOM); got != "SCRIPT#config DIV#chat P#said IFRAME#view SCRIPT" {
			t.Errorf("vector %d: the host page's elements are now %s", i, got)
		}
		b.checkContained(t)
	}
}

// The same view through a sandbox proxy, as web hosts show it: the host page's frame is a
// page of another origin that loads the view's HTML into a srcdoc frame of its own
// (allow-scripts) and passes the messages. The steps of TestAppViewShowsTheChange at 320 px,
// then the XSS corpus.
func TestAppViewThroughASandboxProxy(t *testing.T) {
	t.Parallel() // the two corpus runs, the longest, beside each other
	s := startServer(t)
	h := newAppHost(t, s)
	h.loadView(t)
	first := h.write(t, "write_document", map[string]any{"title": "Launch plan", "text": plan40()})
	args := map[string]any{"document": first.id, "old": "Step 7 of the launch", "new": "Step 7, proxied, of the launch"}
	edit := h.write(t, "edit_document", args)
	edit.oldLine, edit.newLine = "Step 7 of the launch", "Step 7, proxied, of the launch"
	b := newAppBrowser(t, h, 360)
	b.open(t, h.showIn(hostCase{Theme: "dark", Width: 320, Tool: h.tool("edit_document"), Input: args, Result: edit.raw}, true))
	got := waitView(t, b, edit.newLine)
	if !strings.Contains(got, "Launch plan") || !strings.Contains(got, edit.oldLine) {
		t.Errorf("through the proxy the view says:\n%s", got)
	}
	if url := inView[string](t, b, `location.href`); url != "about:srcdoc" {
		t.Errorf("the view is at %s, want the proxy's srcdoc frame", url)
	}
	b.checkFits(t, 320)
	b.checkTheme(t, "dark")
	b.checkTargets(t)
	clickInView(t, b, "Open on your page")
	b.waitHost(t, "hostLog.links.length == 1", "Open on your page sent no ui/open-link through the proxy")
	checkVersionLink(t, s, b.hostJSON(t, "hostLog.links[0]"), edit)
	_, edited := h.latest(t, first.id)
	clickInView(t, b, "Undo this change")
	b.waitHost(t, "hostLog.answers.length == 1", "Undo this change sent no tools/call through the proxy")
	b.checkUndo(t, h, edit, edited)
	b.checkContained(t)

	checkCounterCounts(t, h, b, true)
	showCorpus(t, h, b, true)
	time.Sleep(200 * time.Millisecond)
	if got := b.hits(); len(got) > 0 {
		t.Errorf("late: %q", got)
	}
	b.checkContained(t)
}

// checkCounterCounts shows a view that calls alert once, in the view's frame under the same
// CSP (through the proxy if proxied), and checks that the hook counted it once: the
// counter of TestAppViewHostileText counts.
func checkCounterCounts(t *testing.T, h *appHost, b *appBrowser, proxied bool) {
	t.Helper()
	b.open(t, h.showIn(hostCase{Theme: "light", Width: 700, View: `<!doctype html><script>alert(1);parent.postMessage({jsonrpc:"2.0",method:"ui/notifications/initialized"},"*")</script>`, Tool: h.tool("write_document"), Input: map[string]any{}, Result: json.RawMessage(`{"content":[]}`)}, proxied))
	if got := b.hits(); len(got) != 1 {
		t.Fatalf("a view that calls alert once was counted %d times: %q", len(got), got)
	}
	b.checkContained(t)
}
