package docstore_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// Random edits of a text with links of every kind, in blocks of every kind, leave the links
// index as reading every text whole makes it: after each save the index is dumped, built
// again from the texts, and dumped again, and the two must be the same. Most saves take the
// change's way (the lines around it alone), in texts with code fences too; edits inside
// long fenced blocks, or after a fence in a list item or a quote, take the whole text's.
// On whichever store (PostgreSQL when COMPASS_TEST_POSTGRES is set).
func TestLinksKeptByTheChangeAreTheWholeTexts(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	alpha := mustCreate(t, s, "Alpha", "a\n")
	beta := mustCreate(t, s, "Beta", "b\n")
	mustCreate(t, s, "Doc", "Start\n")
	idLink := func(id string) string { return "[x](/document/" + id + ")" }
	palette := []string{
		"", "", "", "Plain words here", "More prose, with commas.",
		"See [[Alpha]] and [[Beta]]", "see [[alpha]] again", "[[Nowhere]] is broken", "[[nowhere]] also",
		"[[Doc]] links to itself", "- [[Alpha]] is about one", "- [[Beta]] is about two", "- [[Gamma]] item",
		"* [[Nowhere|shown]] star", "1. [[Alpha]] first", "2. [[Beta]] second", "  - nested [[Gamma]]",
		"    [[Alpha]] indented", "  continued [[Beta]]", "> quoted [[Alpha]]", "> ", "# Heading [[Beta]]",
		"Setext [[Alpha]]", "---", "===", "-", "| [[Alpha]] | b |", "|---|---|", "| c | [[Beta]] |",
		"`code [[Alpha]]`", "`open [[Beta]]", "close` [[Alpha]]", "[split", "link](/document/" + beta.ID + ")",
		idLink(alpha.ID), idLink(beta.ID), "<compass://document/" + alpha.ID + ">", idLink("01M8PGKZD91FPDJN4QQFFR0WBP"),
		"[ref]: /document/" + beta.ID, "[ref]: /document/01M8PGKZD91FPDJN4QQFFR0WBQ", "\\[[Escaped]]", "![[Image]]",
	}
	fences := []string{"```", "```", "~~~", "````", "```go", "~~~~", "  ```", "> ```", "- ```"}
	r := rand.New(rand.NewPCG(25, 26))
	pick := func() string {
		if r.IntN(100) == 0 {
			return fences[r.IntN(len(fences))]
		}
		return palette[r.IntN(len(palette))]
	}
	lines := []string{"Start"}
	const steps = 1500
	byChange, fenced, gamma := 0, 0, false
	for step := range steps {
		before := strings.Join(lines, "\n") + "\n"
		edit := func() {
			switch k := r.IntN(10); {
			case k < 3 && len(lines) > 0: // replace a line
				lines[r.IntN(len(lines))] = pick()
			case k < 5: // insert one to three
				at := r.IntN(len(lines) + 1)
				var add []string
				for range 1 + r.IntN(3) {
					add = append(add, pick())
				}
				lines = append(lines[:at], append(add, lines[at:]...)...)
			case k < 7 && len(lines) > 1: // delete one or two
				at := r.IntN(len(lines))
				lines = append(lines[:at], lines[min(at+1+r.IntN(2), len(lines)):]...)
			case k < 8 && len(lines) > 0: // a word in a line: in a link, or beside it
				at := r.IntN(len(lines))
				lines[at] = strings.Replace(lines[at], []string{"Alpha", "Beta", "one", "[[", "]]", "- "}[r.IntN(6)], []string{"Beta", "Alpha", "two", "[", "]", ""}[r.IntN(6)], 1)
			case k < 9: // a fence comes, or, when there are two, goes
				var at []int
				for i, l := range lines {
					if strings.Contains(l, "```") || strings.Contains(l, "~~~") {
						at = append(at, i)
					}
				}
				if len(at) >= 2 {
					i := at[r.IntN(len(at))]
					lines = append(lines[:i], lines[i+1:]...)
					return
				}
				i := r.IntN(len(lines) + 1)
				lines = append(lines[:i], append([]string{fences[r.IntN(len(fences))]}, lines[i:]...)...)
			default: // at the end
				lines = append(lines, pick())
			}
		}
		for range 1 + r.IntN(2) { // one change, or two apart
			edit()
		}
		for len(lines) > 80 {
			lines = append(lines[:r.IntN(len(lines))], lines[len(lines)-1])[:len(lines)-1]
		}
		after := strings.Join(lines, "\n") + "\n"
		if docstore.LinkDeltaRead(before, after) {
			byChange++
			if strings.Contains(before, "```") || strings.Contains(before, "~~~") {
				fenced++
			}
		}
		if _, err := s.Save(ctx, "Doc", 0, after, ana, 0); err != nil {
			t.Fatal(err)
		}
		if step == steps/2 {
			mustCreate(t, s, "Nowhere", "It exists now.\n") // the broken links to it resolve
		}
		if !gamma && step == steps*3/4 {
			gamma = true
			mustCreate(t, s, "Gamma", "g\n")
		}
		kept, err := s.LinksDump()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RebuildLinks(); err != nil {
			t.Fatal(err)
		}
		whole, err := s.LinksDump()
		if err != nil {
			t.Fatal(err)
		}
		if kept != whole {
			t.Fatalf("step %d: the change from\n%s\nto\n%s\nkept the index as\n%s\nbut the texts make\n%s", step, before, after, kept, whole)
		}
		checkLinks(t, s)
	}
	t.Logf("%d of %d saves read the lines around the change alone, %d of them in a text with a fence", byChange, steps, fenced)
	if byChange < steps/5 || fenced < steps/10 {
		t.Errorf("only %d of %d saves took the change's way, %d with a fence: the test doesn't test it", byChange, steps, fenced)
	}
}

// A save that names another document in one line of a text of 2,000 links writes the keys
// of the two targets and the digest, as in a text of one link.
func TestRetargetWritesTheTargetsAlone(t *testing.T) {
	ctx := t.Context()
	c := &counting{DB: kvtest.Open(t)}
	s := docstore.New(c, "personal")
	for i := range 2001 {
		mustCreate(t, s, docTitle(i), "A document.\n")
	}
	retarget := func(lines []string, line int) int {
		d := mustCreate(t, s, fmt.Sprintf("Index %d", len(lines)), strings.Join(lines, ""))
		before := c.writes
		if _, err := s.Edit(ctx, d.ID, lines[line], strings.Replace(lines[line], docTitle(0), docTitle(2000), 1), north); err != nil {
			t.Fatal(err)
		}
		return c.writes - before
	}
	many, one := retarget(linked(2000, true), 0), retarget(linked(1, true), 0)
	t.Logf("keys written by a save that changes a link's target: %d in a text of 2,000 links, %d in one of 1", many, one)
	if many != one {
		t.Errorf("a link's new target in a text of 2,000 links wrote %d keys, in a text of one %d", many, one)
	}
	checkLinks(t, s)
}

// A save that changes links all over an 8 MiB text costs no more than one that reads the
// whole text: a link's target in every fiftieth of 440,000 lines (8,800 runs of changed
// lines, each read with its neighbours), a blank line after every other (the line diff's
// bounded work makes it one change of all, read whole), and back; and a link added to 8 MiB
// of fenced blocks (the fences are found once, and past maxFences the text is read whole).
func TestHostileLinkEditsAreBounded(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	for i := range 10 {
		mustCreate(t, s, docTitle(i), "A document.\n")
	}
	lines := make([]string, 0, 440000)
	for i := 0; len(lines) < cap(lines); i++ {
		lines = append(lines, fmt.Sprintf("- [[%s]] x\n", docTitle(i%10)))
	}
	text := strings.Join(lines, "")
	if len(text) > docstore.MaxText {
		t.Fatalf("%d bytes, more than a text may have", len(text))
	}
	d := mustCreate(t, s, "Hostile", text)
	every := func(k int, change func(string) string) string {
		next := slices.Clone(lines)
		for i := 0; i < len(next); i += k {
			next[i] = change(next[i])
		}
		return strings.Join(next, "")
	}
	retargeted := every(50, func(l string) string { return strings.Replace(l, "Doc 0000", "Doc 0001", 1) })
	spaced := every(2, func(l string) string { return l + "\n" })
	for _, tc := range []struct{ name, text string }{{"retargeted", retargeted}, {"spaced", spaced}, {"back", text}} {
		runtime.LockOSThread()
		c0 := threadCPU()
		_, err := s.Save(ctx, d.ID, 0, tc.text, ana, 0)
		took := threadCPU() - c0
		runtime.UnlockOSThread()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d MiB saved in %.0f ms of CPU (delta read: %v)", tc.name, len(tc.text)>>20, took.Seconds()*1000, docstore.LinkDeltaRead(text, tc.text))
		if overCPU(took) {
			t.Errorf("saving %s cost %v of CPU, want at most 1 s", tc.name, took)
		}
		text = tc.text
	}
	// A text of fences: every other line of 8 MiB opens or closes one, the rest link.
	fenced := strings.Repeat("```\n[[Doc 00001]]\n", (docstore.MaxText-64)/18)
	f := mustCreate(t, s, "Fences", fenced)
	for _, next := range []string{fenced + "[[Doc 00002]]\n", "[[Doc 00002]]\n" + fenced} {
		runtime.LockOSThread()
		c0 := threadCPU()
		_, err := s.Save(ctx, f.ID, 0, next, ana, 0)
		took := threadCPU() - c0
		runtime.UnlockOSThread()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("a link added to 8 MiB of fences: %.0f ms of CPU (delta read: %v)", took.Seconds()*1000, docstore.LinkDeltaRead(fenced, next))
		if overCPU(took) {
			t.Errorf("a link added to 8 MiB of fences cost %v of CPU, want at most 1 s", took)
		}
		fenced = next
	}
	checkLinks(t, s)
}

// An index of format 1 (no counts in out/, the digest alone in sums/) is built again at
// start, and then kept as any other.
func TestLinksOfFormat1AreBuiltAgain(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	mustCreate(t, s, "Pricing", "See [[Launch plan]].\n")
	mustCreate(t, s, "Launch plan", "- [[Pricing]] twice: [[pricing]]\n- [[Budget]]\n")
	want, err := s.LinksDump()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DowngradeLinks(); err != nil {
		t.Fatal(err)
	}
	if old, err := s.LinksDump(); err != nil || old == want {
		t.Fatalf("the index of format 1 reads as format 2's (%v):\n%s", err, old)
	}
	if err := s.EnsureLinks(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LinksDump(); err != nil || got != want {
		t.Fatalf("built again:\n%s\nwant\n%s (%v)", got, want, err)
	}
	if _, err := s.Edit(ctx, "Launch plan", "[[Budget]]", "[[Pricing]]", north); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, s, "Launch plan", "to: Pricing · from: Pricing · broken: ")
	checkLinks(t, s)
}

// Which saves read the lines around their change alone, and which the whole text.
func TestLinkDeltaRead(t *testing.T) {
	body := strings.Join(linked(100, true), "")
	retarget := func(before string) (string, string) {
		return before + body, before + strings.Replace(body, docTitle(50), docTitle(51), 1)
	}
	for _, tc := range []struct {
		name, old, new string
		read           bool
	}{
		{"a link's target", body, strings.Replace(body, docTitle(50), docTitle(51), 1), true},
		{"prose lines", body, strings.ReplaceAll(body, "Tuesday", "Monday"), false}, // the line diff alone says the links stay
		{"a new fence, never closed", body, "```\n" + body, false},
		{"a new fenced block", body, "```\n[[Code]]\n```\n" + body, true},
		{"a line in a fenced block", "```\n[[Code]]\n```\n" + body, "```\n[[Other]]\n```\n" + body, true},
	} {
		if got := docstore.LinkDeltaRead(tc.old, tc.new); got != tc.read {
			t.Errorf("%s: LinkDeltaRead = %v, want %v", tc.name, got, tc.read)
		}
	}
	for _, tc := range []struct {
		before string
		read   bool
	}{
		{"```go\nx := `[[Code]]`\n```\n\n", true},
		{"Text\n~~~~\n[[Code]]\n~~~\n~~~~\n", true},
		{"- item\n  ```\n  [[Code]]\n  ```\n", false}, // a fence in a list item: the whole text
		{"> ```\n> [[Code]]\n> ```\n", false},
		{"Text ``` and `[[Code]]`\n\n", true}, // not a fence's line
	} {
		if got := docstore.LinkDeltaRead(retarget(tc.before)); got != tc.read {
			t.Errorf("a link's target after %q: LinkDeltaRead = %v, want %v", tc.before, got, tc.read)
		}
	}
}
