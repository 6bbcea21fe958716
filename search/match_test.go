package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// ones weighs each of q's terms 1, so that a line's score is how many terms it holds.
func ones(q Query) []float64 {
	w := make([]float64, len(q.Terms))
	for i := range w {
		w[i] = 1
	}
	return w
}

// matchText is what Rank's scanner finds in one item of title and text, each term
// weighing 1, keeping up to lines lines.
func matchText(q Query, title, text string, lines int) Hit {
	return newScanner(q, ones(q)).match(Doc{Title: title, Parts: []string{text}}, lines)
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		name, query, title, text string
		found                    bool
		lines                    []int
	}{
		{"a word", "trailer", "Plan", "Intro.\nRecord the trailer.\n", true, []int{2}},
		{"case", "TRAILER", "Plan", "the Trailer", true, []int{1}},
		{"accents folded in the text", "cafe", "", "At the Café.", true, []int{1}},
		{"accents folded in the query", "café", "", "at the CAFE", true, []int{1}},
		{"a word at a line's end", "trailer", "", "record the\ntrailer\nnext", true, []int{2}},
		{"a word at the text's end", "trailer", "", "record the trailer", true, []int{1}},
		{"not part of a word", "trail", "", "the trailer", false, nil},
		{"Markdown punctuation", "bold link", "", "**Bold** and [link](x)", true, []int{1}},
		{"every word must be there", "trailer tuesday", "", "the trailer", false, []int{1}},
		{"title or text", "plan trailer", "Launch plan", "the trailer", true, []int{1}},
		{"only the title", "launch", "Launch plan", "the trailer", true, nil},
		{"a phrase", `"the trailer"`, "", "first\nrecord the trailer", true, []int{2}},
		{"a phrase out of order", `"trailer the"`, "", "record the trailer", false, nil},
		{"a phrase across a line break", `"the trailer"`, "", "record the\ntrailer", true, []int{1}},
		{"a phrase across punctuation", `"trailer review"`, "", "the trailer. Review it", true, []int{1}},
		{"a phrase not from the title into the text", `"launch plan"`, "Launch", "plan it", false, nil},
		{"a hyphenated word is a phrase", "e-mail", "", "send an e-mail, or an E mail", true, []int{1}},
		{"CJK substring", "京都", "", "東京都に行く", true, []int{1}},
		{"CJK not in order", "都京", "", "東京都に行く", false, nil},
		{"CJK in a Latin query", "tokyo 東京", "", "Tokyo (東京)", true, []int{1}},
		{"a lone combining mark is no token", `"a a"`, "", "A \u06df A", true, []int{1}},
		{"three lines at most, best first", "a b", "", "a\nb\na b\nb a\na\na b", true, []int{3, 4, 6}},
		{"stems", "recorded studies", "", "we record it\nin a study", true, []int{1, 2}},
		{"a stem in the query too", "records", "", "it was recorded", true, []int{1}},
		{"a quoted word is not stemmed", `"records"`, "", "it was recorded", false, nil},
		{"a quoted phrase is not stemmed", `"the records"`, "", "the record\nthe records", true, []int{2}},
		{"stop words needn't be there", "the trailer of", "", "a trailer", true, []int{1}},
		{"no line for stop words alone", "the trailer", "", "the end\na trailer", true, []int{2}},
		{"only stop words: all needed", "the of", "", "the end", false, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := Parse(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			h := matchText(q, tc.title, tc.text, 3)
			var lines []int
			for _, l := range h.Lines {
				lines = append(lines, l.Number)
			}
			if h.Every(q) != tc.found || !slices.Equal(lines, tc.lines) {
				t.Errorf("%q in %q, %q: every term, lines:\n-%v %v\n+%v %v", tc.query, tc.title, tc.text, tc.found, tc.lines, h.Every(q), lines)
			}
		})
	}
}

// An item of several parts (a conversation's messages): no phrase nor nearness runs from
// one part into the next, and lines are numbered in their part.
func TestMatchParts(t *testing.T) {
	doc := Doc{Parts: []string{"record the", "trailer\npricing", "x\ndecision trailer"}}
	for _, tc := range []struct {
		query string
		found bool
		lines [][2]int // part, number
	}{
		{`"the trailer"`, false, nil},
		{`"decision trailer"`, true, [][2]int{{2, 2}}},
		{"trailer", true, [][2]int{{1, 1}, {2, 2}}},
		{"record x", true, [][2]int{{0, 1}, {2, 1}}},
	} {
		q, _ := Parse(tc.query)
		h := newScanner(q, ones(q)).match(doc, 3)
		var lines [][2]int
		for _, l := range h.Lines {
			lines = append(lines, [2]int{l.Part, l.Number})
		}
		if h.Every(q) != tc.found || !slices.Equal(lines, tc.lines) {
			t.Errorf("%q: every term, lines:\n-%v %v\n+%v %v", tc.query, tc.found, tc.lines, h.Every(q), lines)
		}
	}
	q, _ := Parse("pricing decision")
	if h := newScanner(q, ones(q)).match(doc, 3); h.Near != 0 {
		t.Errorf("pricing at the end of a part, decision at the start of the next: Near %v, want 0", h.Near)
	}
}

// The lines kept are the best by the terms' weights (Plan.Weights), not by how many terms.
func TestMatchLinesByWeight(t *testing.T) {
	q, _ := Parse("rare common")
	text := "common\nrare\ncommon common"
	for _, tc := range []struct {
		w    []float64
		want int
	}{
		{[]float64{5, 1}, 2},
		{[]float64{1, 5}, 1}, // a tie between lines 1 and 3: the earlier
		{[]float64{1, 1}, 1},
	} {
		h := newScanner(q, tc.w).match(Doc{Parts: []string{text}}, 1)
		if len(h.Lines) != 1 || h.Lines[0].Number != tc.want {
			t.Errorf("weights %v: lines %+v, want line %d", tc.w, h.Lines, tc.want)
		}
	}
}

func TestMatchingLinesAreCutAroundTheMatch(t *testing.T) {
	long := ""
	for range 40 {
		long += "filler words "
	}
	q, _ := Parse("needle")
	h := matchText(q, "", "  "+long+"needle "+long+"\n", 3)
	if len(h.Lines) != 1 {
		t.Fatalf("lines %+v", h.Lines)
	}
	got := h.Lines[0].Text
	if len(got) > LineWidth+8 || !slices.Contains(Tokens(got), "needle") || got[:3] != "…" || got[len(got)-3:] != "…" {
		t.Errorf("cut line %q", got)
	}
	// A line of LineWidth bytes is kept whole; one byte more is cut.
	whole := "needle " + strings.Repeat("x", LineWidth-7)
	if got := matchText(q, "", whole, 1).Lines[0].Text; got != whole {
		t.Errorf("a line of %d bytes: %q, want it whole", len(whole), got)
	}
	if got := matchText(q, "", whole+"y", 1).Lines[0].Text; got != whole+"…" {
		t.Errorf("a line of %d bytes: %q, want %q", len(whole)+1, got, whole+"…")
	}
}

// The scanner finds what a comparison of every run of tokens finds, over random items,
// one scanner for each query matching item after item as Rank's does.
func TestMatchAgreesWithTokens(t *testing.T) {
	words := []string{"plan", "PLAN", "planned", "café", "cafe", "naïve", "straße", "strasse", "e-mail", "**bold**", "`code`",
		"[link](http://x.y/plan)", "東京", "京都", "コーヒー", "a\u0301", "x1", "1.5", "don't", "\n", "  ", "—", "tokyo東京", "studies", "study", "dying", "die", "oed", "o", "skies", "sky"}
	queries := []string{"plan", "cafe", "cafe naive", `"plan cafe"`, "e-mail", "mail e", "bold code", `"x1 1 5"`, "a", `"plan plan"`,
		"tokyo", `"don t plan"`, "東京", "plan 京", "planning", `"planned"`, "study", `"studies plan"`, `plan "plan" planned`, "die", "o", "oed", "sky", `"dying"`}
	r := rand.New(rand.NewPCG(1, 1))
	docs := make([]Doc, 2000)
	for i := range docs {
		docs[i].Title = words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
		for range 1 + r.IntN(3) {
			var b strings.Builder
			for range r.IntN(15) {
				b.WriteString(words[r.IntN(len(words))])
				b.WriteString([]string{" ", "", ", ", "\n"}[r.IntN(4)])
			}
			docs[i].Parts = append(docs[i].Parts, b.String())
		}
	}
	for _, qs := range queries {
		q, _ := Parse(qs)
		sc := newScanner(q, ones(q))
		for _, d := range docs {
			if h, want := sc.match(d, 3), brute(q, d.Title, d.Parts); h.In != want {
				t.Fatalf("%q in %q / %q: the scanner found %b, the tokens have %b", qs, d.Title, d.Parts, h.In, want)
			}
		}
	}
}

// Nearness (Hit.Near) worked by hand: for each pair of terms, a = Σ 1/d² over the times
// the second starts d tokens after the first ends (d ≤ Near), and the pair adds
// min(w₁, w₂)·a/(a+1). Here w = (2, 3), so min is 2.
func TestNear(t *testing.T) {
	q, _ := Parse("pricing decision")
	for _, tc := range []struct {
		text string
		want float64
	}{
		{"pricing is here.\nMuch later, after many more words than six, a decision.", 0},
		{"the pricing of the decision", 2 * (1.0 / 9) / (1.0/9 + 1)},                    // d = 3: a = 1/9, a/(a+1) = 1/10
		{"the pricing decision", 2 * 0.5},                                               // d = 1: a = 1
		{"pricing decision pricing", 2 * 2.0 / 3},                                       // d = 1 twice: a = 2
		{"decision pricing", 2 * 0.5},                                                   // either order
		{"pricing a b c d e decision", 2 * (1.0 / 36) / (1.0/36 + 1)},                   // d = Near = 6: counted
		{"pricing a b c d e f decision", 0},                                             // d = 7: not
		{"pricing pricing", 0},                                                          // a term is not near itself
		{"pricing a decision b c d e f g h pricing", 2 * (1.0 / 4) / (1.0/4 + 1)},       // d = 2, and 8: too far
		{"pricing\n\ndecision", 2 * 0.5},                                                // lines don't part them
		{"pricing. Decision", 2 * 0.5},                                                  // nor punctuation
		{"pricing the decision", 2 * (1.0 / 4) / (1.0/4 + 1)},                           // stop words are tokens
		{"pricing decision decision", 2 * (1 + 1.0/4) / (1 + 1.0/4 + 1)},                // d = 1 and 2
		{"decision pricing decision", 2 * 2.0 / 3},                                      // d = 1 twice
		{"priced decisions", 2 * 0.5},                                                   // stems
		{"pricing a b c d e decision a b c d e pricing", 2 * (2.0 / 36) / (2.0/36 + 1)}, // d = 6 twice
	} {
		h := newScanner(q, []float64{2, 3}).match(Doc{Parts: []string{tc.text}}, 0)
		if math.Abs(h.Near-tc.want) > 1e-12 {
			t.Errorf("%q: Near %v, want %v", tc.text, h.Near, tc.want)
		}
	}
	// Only the text counts: not the title.
	if h := newScanner(q, []float64{2, 3}).match(Doc{Title: "the pricing decision", Parts: []string{"decision"}}, 0); h.Near != 0 {
		t.Errorf("both words in the title: Near %v, want 0", h.Near)
	}
}

// A scanner keeps nothing of one item that changes what it finds in the next.
func TestScannerReused(t *testing.T) {
	q, _ := Parse(`pricing decision "the plan"`)
	docs := []Doc{
		{Title: "The plan", Parts: []string{"pricing decision", "the\nplan pricing"}},
		{Parts: []string{"decision"}},
		{Title: "pricing", Parts: []string{"the pricing of the decision", "decision the plan"}},
		{},
	}
	sc := newScanner(q, []float64{1, 2, 3})
	for range 2 {
		for i, d := range docs {
			got, want := sc.match(d, 3), newScanner(q, []float64{1, 2, 3}).match(d, 3)
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
				t.Errorf("item %d, after others:\n-%+v\n+%+v", i, want, got)
			}
		}
	}
}
