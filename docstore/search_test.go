package docstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/search"
)

// scan is the brute-force answer to a query (Reader.Scan): when nothing has its quoted
// phrases, the answer to its words, unquoted (as Search gives then).
func scan(t testing.TB, s *docstore.Store, query string) []string {
	t.Helper()
	ids, err := view(t, s, func(r *docstore.Reader) ([]string, error) { return r.Scan(query) })
	if err != nil {
		t.Fatal(err)
	}
	if unquoted := search.Unquoted(query); len(ids) == 0 && unquoted != query {
		return scan(t, s, unquoted)
	}
	return ids
}

// searched is the ids Search gives for query, sorted, after checking that each found
// document's lines hold a term.
func searched(t testing.TB, s *docstore.Store, query string) []string {
	t.Helper()
	res, err := view(t, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(query, 0) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != len(res.Found) {
		t.Fatalf("%q: total %d, %d found with no limit", query, res.Total, len(res.Found))
	}
	ids := make([]string, len(res.Found))
	for i, f := range res.Found {
		ids[i] = f.Document.ID
	}
	slices.Sort(ids)
	return ids
}

// agree checks that Search and the scan give the same documents for each query, and that
// the index is what a rebuild would make.
func agree(t *testing.T, s *docstore.Store, step string, queries ...string) {
	t.Helper()
	ctx := t.Context()
	for _, q := range queries {
		if got, want := searched(t, s, q), scan(t, s, q); !slices.Equal(got, want) {
			t.Errorf("after %s, %q found %v; a scan finds %v", step, q, got, want)
		}
		sameFirst(t, s, q)
	}
	if err := s.CheckIndex(ctx); err != nil {
		t.Errorf("after %s: %v", step, err)
	}
}

// sameFirst checks that a search with a limit gives the first documents of the whole
// ranking, in its order, and the same total.
func sameFirst(t *testing.T, s *docstore.Store, query string) {
	t.Helper()
	all, err := view(t, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(query, 0) })
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 2, 5} {
		some, err := view(t, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(query, limit) })
		if err != nil {
			t.Fatal(err)
		}
		want := all.Found[:min(limit, len(all.Found))]
		if some.Total != all.Total || !slices.EqualFunc(some.Found, want, func(a, b docstore.Found) bool { return a.Document.ID == b.Document.ID }) {
			t.Errorf("%q with limit %d: %d of %d, not the first of the %d", query, limit, len(some.Found), some.Total, all.Total)
		}
	}
}

func TestSearchIndexKeptRightAcrossEveryChange(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	by := docstore.Author{By: "person:ana"}
	long := strings.Repeat("x", 100)
	queries := []string{"trailer", "course page", `"review the course"`, "tuesday", "café", "pricing", "東京", "plan", long + "a", long + "b", long, "y" + long}
	plan := mustCreate(t, s, "Launch plan", "# Launch\n\nRecord the trailer, then review the course page.\n")
	mustCreate(t, s, "Pricing", "We settled on 12 a month at the Café in 東京都.\n")
	agree(t, s, "the first search (the index built)", queries...)

	steps := []struct {
		name string
		do   func() error
	}{
		{"create", func() error {
			_, err := s.Create(ctx, "Tuesday notes", "Trailer on tuesday.\n", docstore.KindWrite, north)
			return err
		}},
		{"write", func() error {
			_, err := s.Write(ctx, plan.ID, "", "# Launch\n\nRecord the trailer on Tuesday.\nThen review the course page.\n", 0, north)
			return err
		}},
		{"append", func() error { _, err := s.Append(ctx, plan.ID, "Pricing: see the pricing page.", north); return err }},
		{"edit", func() error { _, err := s.Edit(ctx, plan.ID, "Tuesday", "Wednesday", north); return err }},
		{"merge", func() error {
			_, err := s.Save(ctx, plan.ID, 2, "# Launch plan\n\nRecord the trailer on Tuesday.\nThen review the course page.\n", by, linediff.Clash)
			return err
		}},
		{"restore", func() error { _, err := s.Restore(ctx, plan.ID, 1, by); return err }},
		{"rename", func() error { _, err := s.Rename(ctx, plan.ID, "Course plan for Tokyo 東京", by); return err }},
		{"delete", func() error { _, err := s.Delete(ctx, plan.ID, by); return err }},
		{"undelete", func() error { _, err := s.Undelete(ctx, plan.ID); return err }},
		{"delete again", func() error { _, err := s.Delete(ctx, "Pricing", by); return err }},
		{"purge", func() error { _, err := s.Purge(ctx, "Pricing"); return err }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		agree(t, s, st.name, queries...)
	}
}

func TestSearchAnswer(t *testing.T) {
	s := open(t, "personal")
	mustCreate(t, s, "Notes", "Shopping list.\n\nThe trailer is long.\nA trailer, and another trailer.\n")
	trailer := mustCreate(t, s, "Trailer", "To record.\n")
	mustCreate(t, s, "Other", "Nothing here.\n")
	res, err := view(t, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search("TRAILER", 10) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 2 || res.Found[0].Document.ID != trailer.ID {
		t.Fatalf("want the titled one first of 2, got %+v", res)
	}
	lines := res.Found[1].Hit.Lines
	if len(lines) != 2 || lines[0].Number != 3 || lines[0].Text != "The trailer is long." || lines[1].Number != 4 {
		t.Errorf("lines %+v", lines)
	}
	if _, err := view(t, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(" ** ", 10) }); !errors.Is(err, docstore.ErrQuery) {
		t.Errorf("a query of punctuation: %v, want ErrQuery", err)
	}
	res, err = view(t, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search("trailer", 1) })
	if err != nil || res.Total != 2 || len(res.Found) != 1 {
		t.Errorf("limit 1: %+v, %v", res, err)
	}
}

// A word the query says three times outweighs one it says once: the same two documents
// come in the other order when the query names harbor once (lantern is said twice in its
// document, harbor once in its).
func TestSearchWeighsRepeatedWords(t *testing.T) {
	s := open(t, "personal")
	lantern := mustCreate(t, s, "One", "A lantern, a lantern by the door.\n")
	harbor := mustCreate(t, s, "Two", "A harbor, and a quay by the door.\n")
	mustCreate(t, s, "Three", "Nothing here by the door.\n")
	for q, first := range map[string]string{"lantern harbor": lantern.ID, "lantern harbor, the harbor: which harbor?": harbor.ID} {
		res, err := view(t, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(q, 10) })
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Found) != 2 || res.Found[0].Document.ID != first {
			t.Errorf("%q: %+v, want %s first of 2", q, res.Found, first)
		}
	}
}

func TestSearchIsolatedBySpace(t *testing.T) {
	db := kvtest.Open(t)
	s := docstore.New(db, "personal")
	other := docstore.New(db, "work")
	mustCreate(t, s, "Mine", "secret plans\n")
	mustCreate(t, other, "Theirs", "secret plans too\n")
	for _, st := range []*docstore.Store{s, other} {
		res, err := view(t, st, func(r *docstore.Reader) (docstore.Results, error) { return r.Search("secret", 10) })
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 1 {
			t.Errorf("space %s found %d documents", st.Space(), res.Total)
		}
	}
}

// A file with documents from before the index: the first search builds it, and writes
// before that leave it alone.
func TestSearchBuildsTheIndexOfAnOlderFile(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	for i := range 250 {
		mustCreate(t, s, fmt.Sprintf("Doc %d", i), fmt.Sprintf("word%d and common text\n", i%7))
	}
	if err := s.CheckIndex(ctx); err != nil {
		t.Fatal(err) // no index yet: nothing to compare
	}
	var calls [][2]int
	if err := s.EnsureIndex(ctx, func(done, total int) { calls = append(calls, [2]int{done, total}) }); err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{100, 250}, {200, 250}, {250, 250}}; !slices.Equal(calls, want) {
		t.Errorf("progress %v, want %v", calls, want)
	}
	agree(t, s, "building", "word3 common", "doc 12")
}

// The property: over random texts, every document a query returns has every term, and
// every document that has them all is returned.
func TestSearchAgreesWithAScan(t *testing.T) {
	ctx := t.Context()
	words := []string{"plan", "Plan", "PLAN", "café", "cafe", "Café", "naïve", "straße", "strasse", "e-mail", "email",
		"**bold**", "_under_", "`code`", "[link](http://x.y/plan)", "東京", "京都", "東", "コーヒー", "trailer.", "trailer,", "don't", "x1", "1.5"}
	queries := []string{"plan", "cafe", "café naïve", "strasse", "e-mail", "email", "mail", "bold", "code link", "東京", "京", "京都 東",
		"コーヒー", `"plan cafe"`, `"trailer trailer"`, "don't", "x1", "1 5", `"東 京"`, "http plan", "PLAN café"}
	r := rand.New(rand.NewPCG(7, 7))
	s := open(t, "personal")
	text := func() string {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(6) == 0 {
				b.WriteString("\n")
			} else {
				b.WriteString(" ")
			}
		}
		return b.String()
	}
	var ids []string
	for i := range 60 {
		d := mustCreate(t, s, fmt.Sprintf("%d %s", i, words[r.IntN(len(words))]), text())
		ids = append(ids, d.ID)
	}
	agree(t, s, "creating 60", queries...)
	for round := range 200 {
		id := ids[r.IntN(len(ids))]
		var err error
		switch r.IntN(5) {
		case 0:
			_, err = s.Write(ctx, id, "", text(), 0, north)
		case 1:
			_, err = s.Append(ctx, id, text(), north)
		case 2:
			_, err = s.Rename(ctx, id, fmt.Sprintf("%d %s %s", round, words[r.IntN(len(words))], words[r.IntN(len(words))]), north)
		case 3:
			_, d, _ := read(t, s, id, 0)
			if toks := strings.Fields(d.Text); len(toks) > 0 {
				old := toks[r.IntN(len(toks))]
				if _, err = s.Edit(ctx, id, old, words[r.IntN(len(words))], north); err != nil {
					err = nil // not once in the text: no edit
				}
			}
		case 4:
			if _, err = s.Delete(ctx, id, north); err == nil {
				_, err = s.Undelete(ctx, id)
			}
		}
		if err != nil && !errors.As(err, new(*docstore.TitleTakenError)) {
			t.Fatalf("round %d: %v", round, err)
		}
		if round%20 == 19 {
			agree(t, s, fmt.Sprintf("round %d", round), queries...)
		}
	}
}

// transactions is a store that counts the transactions asked of it.
type transactions struct {
	kv.DB
	views, writes atomic.Int64
}

func (d *transactions) View(ctx context.Context, fn func(kv.Tx) error) error {
	d.views.Add(1)
	return d.DB.View(ctx, fn)
}

func (d *transactions) Update(ctx context.Context, fn func(kv.Tx) error) error {
	d.writes.Add(1)
	return d.DB.Update(ctx, fn)
}

func (d *transactions) Batch(ctx context.Context, fn func(kv.Tx) error) error {
	d.writes.Add(1)
	return d.DB.Batch(ctx, fn)
}

// A search is one read transaction, its index's plan and every text its ranking reads
// (search.Fetch) read in the View it runs in, whatever it reads. On texts of many lengths
// (the ranking reads the shortest first), for words, phrases, a word nothing has, and
// every limit. (Before a search was one snapshot, it read its first texts with its plan
// when that was exactly the ranking's first fetch: search.Plan.First, gone.)
func TestSearchIsOneTransaction(t *testing.T) {
	db := &transactions{DB: kvtest.Open(t)}
	s := docstore.New(db, "personal")
	r := rand.New(rand.NewPCG(7, 7))
	vocab := strings.Fields("copper lantern harbor meadow orbit pepper quartz signal timber velvet")
	for i := range 150 {
		var b strings.Builder
		for range 1 + r.IntN(60) {
			fmt.Fprintf(&b, "%s %s line.\n", vocab[r.IntN(len(vocab))], vocab[r.IntN(len(vocab))])
		}
		mustCreate(t, s, fmt.Sprintf("Note %d %s", i, vocab[i%len(vocab)]), b.String())
	}
	if err := s.EnsureIndex(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, q := range []string{"copper", "copper lantern", `"copper lantern"`, "harbor -orbit", "timber velvet quartz", "nothingatall", "note"} {
		for _, limit := range []int{0, 1, 5, 50, 1000} {
			views, writes := db.views.Load(), db.writes.Load()
			res, err := view(t, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(q, limit) })
			if err != nil {
				t.Fatalf("%q, limit %d: %v", q, limit, err)
			}
			if v, w := db.views.Load()-views, db.writes.Load()-writes; v != 1 || w != 0 {
				t.Errorf("%q, limit %d: %d read transactions and %d writes, want one read", q, limit, v, w)
			}
			read += res.Read
		}
	}
	if read == 0 {
		t.Fatal("no search read any text")
	}
}
