package semantic_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/semantic"
)

// BenchmarkSimilar is a query's cost on the tier's side at 5,000 documents of one passage,
// 512 dimensions (the shim's): the query's embedding by a fake endpoint on 127.0.0.1 (its
// model's time is the endpoint's own), every passage's similarity, and the fusion's search
// (the lexical search of 20 and the reordering), -short 500 documents.
//
//	go test -run '^$' -bench Similar -benchtime 50x ./semantic
func BenchmarkSimilar(b *testing.B) {
	n := 5000
	if testing.Short() {
		n = 500
	}
	f := newFake(b, 512)
	db, err := bolt.Open(filepath.Join(b.TempDir(), "bench.db"), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.NoSync = true
	kdb := bolt.Wrap(db)
	s := docstore.New(kdb, "personal")
	words := []string{"copper", "lantern", "harbor", "meadow", "orbit", "pepper", "quartz", "signal", "timber", "velvet", "winter", "anchor"}
	for i := range n {
		text := fmt.Sprintf("Note %d about %s and %s near the %s, with %s.", i, words[i%12], words[(i/12)%12], words[(i/144)%12], words[(i*7)%12])
		if _, err := s.Create(b.Context(), fmt.Sprintf("Note %d", i), text, docstore.KindWrite, author); err != nil {
			b.Fatal(err)
		}
	}
	ix := semantic.NewIndex(kdb, "personal", &semantic.Client{URL: f.URL(), Model: "fake"}, semantic.Options{Interval: time.Microsecond, Logger: quiet()})
	if err := ix.Update(b.Context(), nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		sim, err := ix.Similar(b.Context(), "a lantern in the harbor in winter")
		if err != nil || len(sim) != n {
			b.Fatalf("%d similarities, %v", len(sim), err)
		}
		if err := s.View(b.Context(), func(r *docstore.Reader) error {
			_, _, err := semantic.Fused.Search(r, "a lantern in the harbor in winter", 10, sim)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}
