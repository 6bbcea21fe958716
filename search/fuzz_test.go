package search_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/search"
)

// FuzzMatch: any query on any title and text parses or is refused, Match and Rough agree
// on everything they both give, and the lines Match gives are lines of the text that hold
// a term.
//
//	go test -run '^$' -fuzz FuzzMatch ./search
func FuzzMatch(f *testing.F) {
	f.Add(`trailer "course page"`, "Launch plan", "Record the trailer.\nReview the **course page**.\n")
	f.Add("café 東京", "Cafe", "At the CAFÉ in 東京都.")
	f.Add(`"a a"`, "", "a a a\na")
	f.Add("ﬁ Ｃ", "", "fine \ufdfa c\u0301")
	f.Fuzz(func(t *testing.T, query, title, text string) {
		q, err := search.Parse(query)
		if err != nil {
			return
		}
		m, r := search.Match(q, title, text, 3), search.Rough(q, title, text)
		if m.Found != r.Found || m.In != r.In || m.TitleTerms != r.TitleTerms || m.Hits != r.Hits || m.Span != r.Span || !slices.Equal(m.Counts, r.Counts) {
			t.Fatalf("Match %+v, Rough %+v", m, r)
		}
		lines := strings.Split(text, "\n")
		for _, l := range m.Lines {
			if l.Number < 1 || l.Number > len(lines) || l.Terms < 1 {
				t.Fatalf("line %+v of a text of %d lines", l, len(lines))
			}
		}
	})
}
