package search_test

import (
	"errors"
	"fmt"
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

// The cuts of a long query fall exactly at MaxTerms terms and MaxTokens tokens: at the
// limit nothing is left out, one past it the last is, and said (Partial).
func TestQueryCutBoundaries(t *testing.T) {
	words := func(from, n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprintf("w%d", from+i)
		}
		return strings.Join(ws, " ")
	}
	for _, tc := range []struct {
		name, query string
		terms       int    // terms kept
		last        string // the last term kept
		tokens      int    // tokens of that last term
		partial     bool
	}{
		{"MaxTerms words", words(0, search.MaxTerms), search.MaxTerms, "w63", 1, false},
		{"MaxTerms+1 words", words(0, search.MaxTerms+1), search.MaxTerms, "w63", 1, true},
		{"MaxTerms words and a repeat", words(0, search.MaxTerms) + " w0", search.MaxTerms, "w63", 1, false},
		{"a phrase of MaxTokens", `"` + words(0, search.MaxTokens) + `"`, 1, `"` + words(0, search.MaxTokens) + `"`, search.MaxTokens, false},
		{"a phrase of MaxTokens+1", `"` + words(0, search.MaxTokens+1) + `"`, 1, `"` + words(0, search.MaxTokens+1) + `"`, search.MaxTokens, true},
		{"a word after MaxTokens", words(0, 2) + ` "` + words(2, search.MaxTokens-2) + `" after`, 3, `"` + words(2, search.MaxTokens-2) + `"`, search.MaxTokens - 2, true},
	} {
		q, err := search.Parse(tc.query)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		last := q.Terms[len(q.Terms)-1]
		if got := fmt.Sprint(len(q.Terms), " ", last.Text, " ", len(last.Tokens), " ", q.Partial); got != fmt.Sprint(tc.terms, " ", tc.last, " ", tc.tokens, " ", tc.partial) {
			t.Errorf("%s: terms, last, its tokens, partial:\n-%v %s %v %v\n+%s", tc.name, tc.terms, tc.last, tc.tokens, tc.partial, got)
		}
		if n := len(q.Terms); q.All() != 1<<n-1 && !(n == 64 && q.All() == ^uint64(0)) {
			t.Errorf("%s: All() = %b for %d terms", tc.name, q.All(), n)
		}
	}
}
