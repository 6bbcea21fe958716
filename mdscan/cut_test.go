package mdscan

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// cutPalette is lines of every kind of block the walker knows, and of inline text that
// spans lines (code spans, links broken across lines, tables), to make texts of.
var cutPalette = []string{
	"", "", "  ", "\t", "Plain words", "more words [[A]]", "See [[B]] and [[C|c]]",
	"- [[A]] item", "- ", "-", "* [[B]] star", "+ plus [[C]]", "- - -", "* * *", "---", "===", "***",
	"1. [[A]] one", "2. [[B]] two", "1) x", "  - nested [[C]]", "    [[Indented]]", "\t[[Tabbed]]",
	"  continued [[D]]", "      deep [[E]]", "> quoted [[Q]]", "> ", ">", ">> [[QQ]]", "> - [[QL]]",
	"# Heading [[H]]", "## [[H2]] ##", "#", "#nope [[N]]", "Setext [[S]]",
	"| [[T1]] | b |", "|---|---|", "| c | [[T2]] |", "a | [[T3]]",
	"`open [[Code]]", "close` [[After]]", "``", "[split", "link](/document/" + id + ")",
	"[x](/document/" + id + ")", "<compass://document/" + id + ">", "[ref]: /document/" + id,
	"[ref]:", "/document/" + id, "\"title\"", "[[A", "]] [[Z]]", "![[Img]]", "\\[[Esc]]",
	"<a href=\"/document/" + id + "\">[[Html]]</a>", "<div>", "</div>", "x\r", "- [[R]]\r", "Über [[Ü]]",
}

// Cut holds: wherever it says a text can be cut (and Fence says no fence is open there), the
// text's links are those of its two parts, each read as a text of its own.
func TestCutSplitsTheLinks(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	cuts, fenced := 0, 0
	for range 20000 {
		lines := make([]string, 1+r.IntN(12))
		for i := range lines {
			lines[i] = cutPalette[r.IntN(len(cutPalette))] + "\n"
			if r.IntN(12) == 0 {
				lines[i] = []string{"```\n", "~~~\n", "````\n", "```go\n", "~~~~ x\n", "``` `x\n", "Text ```\n", "  ```\n", "> ```\n", "- ```\n"}[r.IntN(10)]
			}
		}
		text := strings.Join(lines, "")
		whole := links(text)
		var fence Fence
		for k := 1; k < len(lines); k++ {
			next, ok := fence.Next(lines[k-1])
			if !ok {
				break
			}
			if fence = next; fence.Open() || !Cut(lines[k-1], lines[k]) {
				continue
			}
			before, after := strings.Join(lines[:k], ""), strings.Join(lines[k:], "")
			cuts++
			if strings.Contains(before, "```") || strings.Contains(before, "~~~") {
				fenced++
			}
			if got := append(links(before), links(after)...); !slices.Equal(got, whole) {
				t.Fatalf("cut before line %d of\n%s\nlinks %q, but the parts' are %q", k+1, text, whole, got)
			}
		}
	}
	t.Logf("%d cuts checked, %d after a fence", cuts, fenced)
	if cuts < 10000 || fenced < 1000 {
		t.Errorf("only %d cuts, %d after a fence: the palette doesn't test Cut", cuts, fenced)
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		prev, line string
		cut        bool
	}{
		{"\n", "Words\n", true},
		{"Words\n", "Words\n", false},
		{"Words\n", "- [[A]] item\n", true},
		{"Words\n", "-\n", false}, // a setext underline
		{"Words\n", "- \n", false},
		{"Words\n", "# Heading\n", true},
		{"Words\n", "#tag\n", false},
		{"Words\n", "2. two\n", false}, // continues the paragraph
		{"\n", "    code\n", false},
		{"\n", "> quote\n", false},
		{"\n", "\n", false},
		{"  \r\n", "x\n", true},
		{"Words\n", "```go\n", true},
		{"Words\n", "``` `x\n", false},
	} {
		if got := Cut(tc.prev, tc.line); got != tc.cut {
			t.Errorf("Cut(%q, %q) = %v, want %v", tc.prev, tc.line, got, tc.cut)
		}
	}
}
