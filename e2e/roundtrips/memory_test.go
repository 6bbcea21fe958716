package roundtrips

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// BenchmarkCacheMemory measures what a replica's entry cache holds, and what it costs the
// process's heap, once a day's reads have gone through a space of 10,000 notes of 1 KB
// (300 with -short): every note read once, the whole listing paged through, and searches
// of each of the words. The heap is measured after a GC, before and after the reads, on a
// replica opened after the notes were written (its cache empty): the difference is what
// the reads left live, the cache and what it indexes.
//
//	COMPASS_TEST_POSTGRES=postgres://… go test -run '^$' -bench CacheMemory -benchtime 1x -v ./e2e/roundtrips
func BenchmarkCacheMemory(b *testing.B) {
	notes := 10000
	if testing.Short() {
		notes = 300
	}
	url := kvtest.URL(b)
	writer, err := pg.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { writer.Close() })
	ctx := b.Context()
	docs := docstore.New(writer, "personal")
	author := docstore.Author{By: "agent:north", For: "person:ana"}
	for i := range notes {
		if _, err := docs.Create(ctx, fmt.Sprintf("Note %05d", i), note(20, i), docstore.KindWrite, author); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		db, err := pg.Open(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		before := liveHeap()
		docs := docstore.New(db, "personal")
		after := ""
		read := 0
		for {
			var (
				page []docstore.Document
				next string
			)
			err := docs.View(ctx, func(r *docstore.Reader) (err error) {
				page, next, _, err = r.Recent(after, 500)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			for _, d := range page {
				if _, _, err := latest(b, docs, d.ID); err != nil {
					b.Fatal(err)
				}
				read++
			}
			if next == "" {
				break
			}
			after = next
		}
		for _, w := range words {
			err := docs.View(ctx, func(r *docstore.Reader) error {
				_, err := r.Search(w, 50)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		if read != notes {
			b.Fatalf("read %d notes, want %d", read, notes)
		}
		heap := liveHeap() - before
		bytes, items := db.CacheStats()
		b.ReportMetric(float64(bytes)/(1<<20), "cache-MiB")
		b.ReportMetric(float64(items), "items")
		b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
		b.Logf("%d notes: the cache counts %d items, %.1f MiB; the heap grew %.1f MiB", notes, items, float64(bytes)/(1<<20), float64(heap)/(1<<20))
		db.Close()
	}
}

func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
