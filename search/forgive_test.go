package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A quoted word in a question ranks but doesn't filter (issue 36, item 13): CISI's "a
// single "virtual" system" found only the texts that had "virtual". A short query that is
// a phrase, or a phrase and a few words, still means the phrase.
func TestQuotesInQuestions(t *testing.T) {
	for _, tc := range []struct {
		query string
		loose bool
	}{
		{`"virtual"`, false},
		{`"launch plan"`, false},
		{`"launch plan" budget owner draft`, false},
		{`the "launch plan" of the team`, false}, // stop words don't make a question
		{`how could a single "virtual" system share the catalogues of many libraries`, true},
		{`"launch plan" budget owner draft review`, true},
		{`budget owner draft review`, false}, // nothing quoted
	} {
		q, err := Parse(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		if q.Loose != tc.loose || (q.Quoted() == 0) != (tc.loose || !strings.Contains(tc.query, `"`)) {
			t.Errorf("Parse(%q): Loose %v, Quoted %b; want Loose %v", tc.query, q.Loose, q.Quoted(), tc.loose)
		}
	}
	x := newIndex(t,
		Item{Key: "virtual", Title: "Virtual", Text: "a virtual thing"},
		Item{Key: "shared", Title: "Shared catalogues", Text: "libraries share one system of catalogues across many libraries"},
		Item{Key: "both", Title: "Both", Text: "how could a single virtual system share the catalogues of many libraries"},
	)
	_, every, some := x.everySome(`how could a single "virtual" system share the catalogues of many libraries`)
	if got := append(every, some...); !slices.Contains(got, "shared") || !slices.Contains(got, "virtual") || !slices.Contains(got, "both") {
		t.Errorf("the question found %v and %v, want all three: the quoted word doesn't filter", every, some)
	}
	res, keys := x.rank(`how could a single "virtual" system share the catalogues of many libraries`, Ranking)
	if len(keys) == 0 || keys[0] != "both" || !res.Ranked[0].Every {
		t.Errorf("the question ranked %v, want both first", keys)
	}
	_, every, some = x.everySome(`"virtual"`)
	if got := append(every, some...); slices.Contains(got, "shared") || len(got) != 2 {
		t.Errorf(`"virtual" found %v and %v, want only those with the word`, every, some)
	}
	// The quoted word weighs more: of two texts alike but for the word, the one with the
	// quoted word comes first.
	y := newIndex(t,
		Item{Key: "a", Title: "A", Text: "alpha beta gamma delta epsilon"},
		Item{Key: "b", Title: "B", Text: "alpha beta gamma delta zeta"},
	)
	p, _ := y.plan(`alpha beta gamma delta "epsilon" zeta`, Ranking)
	q, _ := y.plan(`alpha beta gamma delta epsilon zeta`, Ranking)
	if !p.Query.Loose || p.Candidates[0].Score <= q.Candidates[0].Score {
		t.Errorf("the quoted word's item scores %v, unquoted %v: want more (Loose %v)", p.Candidates[0].Score, q.Candidates[0].Score, p.Query.Loose)
	}
}

// A long question keeps its rarest words, not its first (issue 36, item 14): a word that
// only one text has, said after 70 words every text has, is looked for.
func TestLongQueryKeepsRarest(t *testing.T) {
	var common []string
	for i := range 70 {
		common = append(common, fmt.Sprintf("common%c%c", 'a'+i/26, 'a'+i%26))
	}
	text := strings.Join(common, " ")
	var items []Item
	for i := range 20 {
		items = append(items, Item{Key: fmt.Sprint(i), Title: "Item", Text: text})
	}
	items = append(items, Item{Key: "rare", Title: "Item", Text: text + " zephyrine"})
	x := newIndex(t, items...)
	query := text + " zephyrine"
	p, _ := x.plan(query, Ranking)
	if len(p.Query.Terms) != MaxTerms || !p.Query.Partial {
		t.Fatalf("planned %d terms (Partial %v), want %d", len(p.Query.Terms), p.Query.Partial, MaxTerms)
	}
	if !slices.ContainsFunc(p.Query.Terms, func(t Term) bool { return t.Text == "zephyrine" }) {
		t.Errorf("the planned query left out the rare last word: %q", p.Query.Text)
	}
	_, keys := x.rank(query, Ranking)
	if len(keys) == 0 || keys[0] != "rare" {
		t.Errorf("ranked %v, want rare first", keys[:min(len(keys), 3)])
	}
	// The kept terms are in the query's order, with their repeats.
	q, err := Parse(query + " zephyrine")
	if err != nil {
		t.Fatal(err)
	}
	n := q.Narrow(func(keys []string) int {
		if keys[0] == "zephyrin" || keys[0] == "zephyrine" {
			return 1
		}
		return 100
	})
	if last := len(n.Terms) - 1; n.Terms[last].Text != "zephyrine" || n.Repeats[last] != 2 || n.Terms[0].Text != common[0] {
		t.Errorf("Narrow kept %q (repeats %v)", n.Text, n.Repeats)
	}
	// A query of at most MaxTerms terms is kept as it is.
	short, _ := Parse("alpha beta")
	if got := short.Narrow(func([]string) int { t.Fatal("asked a size"); return 0 }); got.Text != "alpha beta" {
		t.Errorf("Narrow changed a short query: %q", got.Text)
	}
}

// A word no item has is searched for as the nearest word the index has (issue 36, item
// 12): within one edit for a short word, two for a longer, the most common of the nearest;
// a word the index has, a quoted one, or one of another script is never changed.
func TestTypos(t *testing.T) {
	x := newIndex(t,
		Item{Key: "refund", Title: "Refund policy", Text: "Refunds are paid within 14 days. The policy covers every order."},
		Item{Key: "policies", Title: "Policies", Text: "Our policies, and the police station nearby."},
		Item{Key: "cat", Title: "Pets", Text: "a cat and a car and a cart"},
		Item{Key: "carts", Title: "Carts", Text: "cart cart cart"},
	)
	for _, tc := range []struct {
		query string
		fixes []Fix
		found []string
	}{
		{"rfund polciy", []Fix{{"rfund", "refund"}, {"polciy", "polici"}}, []string{"refund", "policies"}},
		{"refund policy", nil, []string{"refund", "policies"}},
		{"refnud", []Fix{{"refnud", "refund"}}, []string{"refund"}}, // two letters swapped: one edit
		{"crat", []Fix{{"crat", "cart"}}, []string{"carts", "cat"}}, // of cart, cat, car: the most common
		{`"rfund"`, nil, nil},
		{"xyzzyplugh", nil, nil},
		{"ab", nil, nil}, // too short to guess
		{"rfund refund", []Fix{{"rfund", "refund"}}, []string{"refund"}},
		{"prlicies", []Fix{{"prlicies", "polici"}}, []string{"policies", "refund"}},
	} {
		p, keys := x.plan(tc.query, Ranking)
		if !slices.Equal(p.Query.Fixes, tc.fixes) {
			t.Errorf("%q: fixes %v, want %v", tc.query, p.Query.Fixes, tc.fixes)
		}
		slices.Sort(keys)
		slices.Sort(tc.found)
		if !slices.Equal(keys, tc.found) {
			t.Errorf("%q (as %q): found %v, want %v", tc.query, p.Query.Text, keys, tc.found)
		}
	}
	_, every, _ := x.everySome("rfund polciy")
	if !slices.Equal(every, []string{"refund"}) {
		t.Errorf("rfund polciy: every word in %v, want refund", every)
	}
}
