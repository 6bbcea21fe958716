package search

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// wordsIndex is an index of 1,000 items holding 100,000 distinct made-up words of 5 to 10
// letters a to z between them (100 each), the vocabulary a typo is looked for in.
func wordsIndex(b *testing.B) (index, []string) {
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	var words []string
	for len(words) < 100_000 {
		n := 5 + r.IntN(6)
		w := make([]byte, n)
		for i := range w {
			w[i] = byte('a' + r.IntN(26))
		}
		if s := string(w); !seen[Stem(s)] {
			seen[Stem(s)] = true
			words = append(words, s)
		}
	}
	var items []Item
	for i := 0; i < len(words); i += 100 {
		items = append(items, Item{Key: strings.Repeat("k", 1+i/100%7) + words[i], Title: "t", Text: strings.Join(words[i:i+100], " ")})
	}
	return newBenchIndex(b, items), words
}

// newBenchIndex is newIndex for a benchmark.
func newBenchIndex(b *testing.B, items []Item) index {
	b.Helper()
	x := index{db: kvtest.Open(b), items: map[string]Item{}}
	if err := x.db.Update(b.Context(), func(tx kv.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(indexName)
		if err != nil {
			return err
		}
		w, err := WriteIndex(bk)
		if err != nil {
			return err
		}
		return w.Rebuild(func(add func(Item) error) error {
			for _, it := range items {
				if err := add(it); err != nil {
					return err
				}
			}
			return nil
		})
	}); err != nil {
		b.Fatal(err)
	}
	return x
}

// BenchmarkTypo is Plan of a query of two words that no item has, each one edit from a word
// of an index of 100,000 distinct words (wordsIndex): the walk of the keys that finds their
// nearest (typo.go), bounded by MaxTypoSteps whatever the vocabulary.
//
//	go test -run '^$' -bench 'Typo' -benchtime 20x ./search
func BenchmarkTypo(b *testing.B) {
	x, words := wordsIndex(b)
	typo := func(w string) string { return w[:2] + w[3:] } // a letter dropped
	query := typo(words[500]) + " " + typo(words[77_000])
	q, err := Parse(query)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := x.db.View(b.Context(), func(tx kv.Tx) error {
			p, err := ReadIndex(tx.Bucket(indexName)).Plan(q, Ranking)
			if err == nil && len(p.Query.Fixes) != 2 {
				b.Fatalf("%q: fixes %v", query, p.Query.Fixes)
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTypoQuery1MiB is Plan of a query of 1 MiB of made-up words none of which the
// index of 100,000 words has: Narrow's choice among MaxCandidates and MaxFixes walks.
//
//	go test -run '^$' -bench 'Typo' -benchtime 20x ./search
func BenchmarkTypoQuery1MiB(b *testing.B) {
	x, _ := wordsIndex(b)
	r := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		for range 4 + r.IntN(8) {
			sb.WriteByte(byte('a' + r.IntN(26)))
		}
		sb.WriteByte(' ')
	}
	q, err := Parse(sb.String())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := x.db.View(b.Context(), func(tx kv.Tx) error {
			_, err := ReadIndex(tx.Bucket(indexName)).Plan(q, Ranking)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}
