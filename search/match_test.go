package search_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/search"
)

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"Record the Trailer.", []string{"record", "the", "trailer"}},
		{"Café NAÏVE straße Ærø ﬁne Ｃafe", []string{"cafe", "naive", "strasse", "aero", "fine", "cafe"}},
		{"Cafe\u0301 with a combining accent", []string{"cafe", "with", "a", "combining", "accent"}},
		{"**bold** _em_ `code` [link](http://x.y/z) # Title\n- [ ] task", []string{"bold", "em", "code", "link", "http", "x", "y", "z", "title", "task"}},
		{"e-mail don't v1.2 snake_case", []string{"e", "mail", "don", "t", "v1", "2", "snake", "case"}},
		{"東京都に行く", []string{"東", "京", "都", "に", "行", "く"}},
		{"서울 coffee코피", []string{"서", "울", "coffee", "코", "피"}},
		{"Москва Ёлка", []string{"москва", "елка"}},
		{"", nil},
	} {
		if got := search.Tokens(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  [][]string
		err   error
	}{
		{"launch plan", [][]string{{"launch"}, {"plan"}}, nil},
		{`"course page" trailer`, [][]string{{"course", "page"}, {"trailer"}}, nil},
		{`“curly quotes” and "unclosed phrase`, [][]string{{"curly", "quotes"}, {"and"}, {"unclosed", "phrase"}}, nil},
		{"e-mail 東京", [][]string{{"e", "mail"}, {"東", "京"}}, nil},
		{"Plan plan PLAN", [][]string{{"plan"}}, nil},
		{"** -- ``", nil, search.ErrEmptyQuery},
		{"", nil, search.ErrEmptyQuery},
		{`"e-mail" e-mail`, [][]string{{"e", "mail"}, {"e", "mail"}}, nil},
	} {
		q, err := search.Parse(tc.query)
		if !errors.Is(err, tc.err) {
			t.Errorf("Parse(%q): %v, want %v", tc.query, err, tc.err)
			continue
		}
		var got [][]string
		for _, term := range q.Terms {
			got = append(got, term.Tokens)
		}
		if !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("Parse(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
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
		{"a hyphenated word is a phrase", "e-mail", "", "send an e-mail, or an E mail", true, []int{1}},
		{"CJK substring", "京都", "", "東京都に行く", true, []int{1}},
		{"CJK not in order", "都京", "", "東京都に行く", false, nil},
		{"CJK in a Latin query", "tokyo 東京", "", "Tokyo (東京)", true, []int{1}},
		{"three lines at most, best first", "a b", "", "a\nb\na b\nb a\na\na b", true, []int{3, 4, 6}},
		{"stems", "recorded studies", "", "we record it\nin a study", true, []int{1, 2}},
		{"a stem in the query too", "records", "", "it was recorded", true, []int{1}},
		{"a quoted word is not stemmed", `"records"`, "", "it was recorded", false, nil},
		{"a quoted phrase is not stemmed", `"the records"`, "", "the record\nthe records", true, []int{2}},
		{"stop words needn't be there", "the trailer of", "", "a trailer", true, []int{1}},
		{"only stop words: all needed", "the of", "", "the end", false, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := search.Parse(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			h := search.Match(q, tc.title, tc.text, 3)
			var lines []int
			for _, l := range h.Lines {
				lines = append(lines, l.Number)
			}
			if h.Every(q) != tc.found || !slices.Equal(lines, tc.lines) {
				t.Errorf("Match(%q, %q, %q) found every term %v on lines %v, want %v on %v", tc.query, tc.title, tc.text, h.Every(q), lines, tc.found, tc.lines)
			}
		})
	}
}

func TestMatchingLinesAreCutAroundTheMatch(t *testing.T) {
	long := ""
	for range 40 {
		long += "filler words "
	}
	q, _ := search.Parse("needle")
	h := search.Match(q, "", "  "+long+"needle "+long+"\n", 3)
	if len(h.Lines) != 1 {
		t.Fatalf("lines %+v", h.Lines)
	}
	got := h.Lines[0].Text
	if len(got) > search.LineWidth+8 || !slices.Contains(search.Tokens(got), "needle") || got[:3] != "…" || got[len(got)-3:] != "…" {
		t.Errorf("cut line %q", got)
	}
}

// Match finds what a comparison of every run of tokens finds, over random texts.
func TestMatchAgreesWithTokens(t *testing.T) {
	words := []string{"plan", "PLAN", "planned", "café", "cafe", "naïve", "straße", "strasse", "e-mail", "**bold**", "`code`",
		"[link](http://x.y/plan)", "東京", "京都", "コーヒー", "a\u0301", "x1", "1.5", "don't", "\n", "  ", "—", "tokyo東京", "studies", "study", "dying", "die", "oed", "o", "skies", "sky"}
	queries := []string{"plan", "cafe", "cafe naive", `"plan cafe"`, "e-mail", "mail e", "bold code", `"x1 1 5"`, "a", `"plan plan"`,
		"tokyo", `"don t plan"`, "東京", "plan 京", "planning", `"planned"`, "study", `"studies plan"`, `plan "plan" planned`, "die", "o", "oed", "sky", `"dying"`}
	r := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteString([]string{" ", "", ", ", "\n"}[r.IntN(4)])
		}
		text, title := b.String(), words[r.IntN(len(words))]+" "+words[r.IntN(len(words))]
		for _, qs := range queries {
			q, _ := search.Parse(qs)
			if m, want := search.Match(q, title, text, 3), brute(q, title, text); m.In != want {
				t.Fatalf("%q in %q / %q: Match found %b, the tokens have %b", qs, title, text, m.In, want)
			}
		}
	}
}

// Words close together are nearer than words apart; a phrase's words are nearest.
func TestNear(t *testing.T) {
	q, _ := search.Parse("pricing decision")
	far := search.Match(q, "", "pricing is here.\nMuch later, after many more words than six, a decision.", 0)
	close := search.Match(q, "", "the pricing of the decision", 0)
	next := search.Match(q, "", "the pricing decision", 0)
	if !(far.Near == 0 && close.Near > 0 && next.Near > close.Near) {
		t.Errorf("Near: far %v, close %v, next to each other %v", far.Near, close.Near, next.Near)
	}
}

// A long query is not refused: what is past the limits is left out, and said.
func TestLongQueries(t *testing.T) {
	var words []string
	for i := range 100 {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	q, err := search.Parse(strings.Join(words, " "))
	if err != nil || len(q.Terms) != search.MaxTerms || !q.Partial {
		t.Errorf("100 words: %d terms, partial %v, %v", len(q.Terms), q.Partial, err)
	}
	q, err = search.Parse(`"` + strings.Repeat("a ", 1000) + `"`)
	if err != nil || len(q.Terms) != 1 || len(q.Terms[0].Tokens) != search.MaxTokens || !q.Partial {
		t.Errorf("a phrase of 1,000 words: %+v, %v", q.Terms, err)
	}
	q, err = search.Parse("the effect of aspirin on cancer")
	if err != nil || q.Partial || len(q.Terms) != 6 {
		t.Errorf("a question: %+v %v", q, err)
	}
	// Full of stop words: the words after them take their places, the last stop word too.
	long := strings.Repeat("the of what did ", 20) + strings.Join(words[:70], " ")
	q, err = search.Parse(long)
	if err != nil || len(q.Terms) != search.MaxTerms || !q.Partial {
		t.Fatalf("stop words, then 70 words: %d terms, partial %v, %v", len(q.Terms), q.Partial, err)
	}
	var got []string
	for _, term := range q.Terms {
		got = append(got, term.Text)
	}
	if want := strings.Join(words[:64], " "); strings.Join(got, " ") != want {
		t.Errorf("stop words, then 70 words: looked for %q, want %q", got, want)
	}
}

// Past MaxWords words, nothing more of a query is read: not even a repeat.
func TestQueryReadUpToMaxWords(t *testing.T) {
	q, err := search.Parse("lantern" + strings.Repeat(" harbor", search.MaxWords-2) + " lantern lantern")
	if err != nil || len(q.Terms) != 2 || q.Repeats[0] != 2 || q.Repeats[1] != search.MaxWords-2 || !q.Partial {
		t.Errorf("%d words: %d terms, repeats %v, partial %v, %v", search.MaxWords+1, len(q.Terms), q.Repeats, q.Partial, err)
	}
}

// A word given again is one term that weighs as many times as it was given.
func TestRepeatedWords(t *testing.T) {
	q, err := search.Parse(`retrieval of titles: Retrieval, "retrieval" and RETRIEVAL again`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, term := range q.Terms {
		got = append(got, fmt.Sprintf("%s×%d", term.Text, q.Repeats[i]))
	}
	if want := `retrieval×3 of×1 titles:×1 "retrieval"×1 and×1 again×1`; strings.Join(got, " ") != want {
		t.Errorf("terms %s, want %s", strings.Join(got, " "), want)
	}
}
