package search

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// brute is which terms of q an item of title and parts has, found the slow way: every
// run of tokens of each compared (stems for the terms not quoted).
func brute(q Query, title string, parts []string) uint64 {
	stems := func(toks []string) []string {
		out := make([]string, len(toks))
		for i, t := range toks {
			out[i] = Stem(t)
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
		for _, s := range append([]string{title}, parts...) {
			toks, run := Tokens(s), t.Tokens
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

// FuzzMatch: any query on any item (its text cut into parts at form feeds, as a
// conversation's messages) parses or is refused; Rank's scanner finds the terms a
// brute-force comparison of tokens finds, gives at most the lines asked, each a line of
// its part that holds a term, in order, and finds the same again in the same item.
//
//	go test -run '^$' -fuzz=FuzzMatch ./search
func FuzzMatch(f *testing.F) {
	f.Add(`trailer "course page"`, "Launch plan", "Record the trailer.\nReview the **course page**.\n")
	f.Add("café 東京", "Cafe", "At the CAFÉ in 東京都.")
	f.Add(`"a a"`, "", "a a a\na")
	f.Add("ﬁ Ｃ", "", "fine \ufdfa c\u0301")
	f.Add(`recorded "records" studies`, "", "we record the records of a study")
	f.Add(`a "a b" "b a b" b`, "", "a b a b a\nb a")
	f.Add(`"the trailer" pricing decision`, "", "record the\f trailer pricing\fdecision")
	f.Fuzz(func(t *testing.T, query, title, text string) {
		q, err := Parse(query)
		if err != nil {
			return
		}
		doc := Doc{Title: title, Parts: strings.Split(text, "\f")}
		sc := newScanner(q, ones(q))
		h := sc.match(doc, 3)
		if want := brute(q, title, doc.Parts); h.In != want {
			t.Fatalf("the scanner found terms %b, the tokens have %b", h.In, want)
		}
		if h.InTitle&^h.In != 0 || math.IsNaN(h.Near) || h.Near < 0 || len(h.Lines) > 3 {
			t.Fatalf("hit %+v", h)
		}
		for i, l := range h.Lines {
			if l.Part < 0 || l.Part >= len(doc.Parts) || l.Number < 1 || l.Number > strings.Count(doc.Parts[l.Part], "\n")+1 || l.Terms < 1 {
				t.Fatalf("line %+v of parts %q", l, doc.Parts)
			}
			if i == 0 {
				continue
			}
			if p := h.Lines[i-1]; l.Part < p.Part || l.Part == p.Part && l.Number <= p.Number {
				t.Fatalf("lines out of order: %+v", h.Lines)
			}
		}
		if again := sc.match(doc, 3); fmt.Sprintf("%+v", again) != fmt.Sprintf("%+v", h) {
			t.Fatalf("the same item again:\n-%+v\n+%+v", h, again)
		}
	})
}
