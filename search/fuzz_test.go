package search_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/search"
)

// brute is which terms of q a title and text have, found the slow way: every run of
// tokens compared (stems for the terms not quoted).
func brute(q search.Query, title, text string) uint64 {
	stems := func(toks []string) []string {
		out := make([]string, len(toks))
		for i, t := range toks {
			out[i] = search.Stem(t)
		}
		return out
	}
	has := func(toks, run []string) bool {
		for i := 0; i+len(run) <= len(toks); i++ {
			if slices.Equal(toks[i:i+len(run)], run) {
				return true
			}
		}
		return false
	}
	var in uint64
	for i, t := range q.Terms {
		for _, s := range []string{title, text} {
			toks, run := search.Tokens(s), t.Tokens
			if !t.Quoted {
				toks, run = stems(toks), stems(run)
			}
			if has(toks, run) {
				in |= 1 << i
			}
		}
	}
	return in
}

// FuzzMatch: any query on any title and text parses or is refused, Match finds the terms a
// brute-force comparison of tokens finds, and the lines it gives are lines of the text that
// hold a term.
//
//	go test -run '^$' -fuzz FuzzMatch ./search
func FuzzMatch(f *testing.F) {
	f.Add(`trailer "course page"`, "Launch plan", "Record the trailer.\nReview the **course page**.\n")
	f.Add("café 東京", "Cafe", "At the CAFÉ in 東京都.")
	f.Add(`"a a"`, "", "a a a\na")
	f.Add("ﬁ Ｃ", "", "fine \ufdfa c\u0301")
	f.Add(`recorded "records" studies`, "", "we record the records of a study")
	f.Add(`a "a b" "b a b" b`, "", "a b a b a\nb a")
	f.Fuzz(func(t *testing.T, query, title, text string) {
		q, err := search.Parse(query)
		if err != nil {
			return
		}
		m := search.Match(q, title, text, 3)
		if want := brute(q, title, text); m.In != want {
			t.Fatalf("Match found terms %b, the tokens have %b", m.In, want)
		}
		lines := strings.Split(text, "\n")
		for _, l := range m.Lines {
			if l.Number < 1 || l.Number > len(lines) || l.Terms < 1 {
				t.Fatalf("line %+v of a text of %d lines", l, len(lines))
			}
		}
	})
}
