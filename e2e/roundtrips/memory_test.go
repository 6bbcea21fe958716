package roundtrips

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/jackc/pgx/v5"
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
		follow(b, db, docs, notes, heap, url)
		db.Close()
	}
}

// follow is the second half of BenchmarkCacheMemory: the warm replica (db, reading through
// docs) follows another replica's writes through the change feed. The writer appends a line
// to a note and makes a new one, in turn, notes/5 times (2,000 commits at 10,000 notes: the
// feed's length twice over), and after each the replica reads the note written, its
// listing's first page and a search, catching up on the commit in the read's first round trip.
// Measured then: the replica's heap over an empty replica's (read, what the reads above
// left, plus what the following added: the writer, in the same process, keeps no cache, so
// that the heap's change is the replica's), its cache's own count, how often it followed
// the feed and how often it had to empty its cache, and in the database the feed's rows and
// its size on disk with its index and TOAST (pg_total_relation_size).
func follow(b *testing.B, db *pg.DB, docs *docstore.Store, notes int, read int64, url string) {
	ctx := b.Context()
	writer, err := pg.Open(ctx, url, pg.WithCache(0))
	if err != nil {
		b.Fatal(err)
	}
	defer writer.Close()
	wdocs := docstore.New(writer, "personal")
	author := docstore.Author{By: "agent:south", For: "person:ana"}
	followed0, emptied0 := db.FeedStats()
	start := liveHeap()
	recent, _, err := list(ctx, docs, 1)
	if err != nil || len(recent) == 0 {
		b.Fatalf("no note to append to (%v)", err)
	}
	ids := []string{recent[0].ID}
	for i := range notes / 5 {
		var name string
		if i%2 == 0 {
			saved, err := wdocs.Append(ctx, ids[i%len(ids)], fmt.Sprintf("%d. appended by the other replica.\n", i), author)
			if err != nil {
				b.Fatal(err)
			}
			name = saved.Document.ID
		} else {
			saved, err := wdocs.Create(ctx, fmt.Sprintf("Later %05d", i), note(20, notes+i), docstore.KindWrite, author)
			if err != nil {
				b.Fatal(err)
			}
			name = saved.Document.ID
			ids = append(ids, name)
		}
		if _, v, err := latest(b, docs, name); err != nil || v.Number == 0 {
			b.Fatalf("reading %s after the other replica's write: %v", name, err)
		}
		if _, _, err := list(ctx, docs, 50); err != nil {
			b.Fatal(err)
		}
		if err := docs.View(ctx, func(r *docstore.Reader) error {
			_, err := r.Search(words[i%len(words)], 50)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	heap := read + liveHeap() - start
	bytes, items := db.CacheStats()
	followed, emptied := db.FeedStats()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows, disk int64
	if err := conn.QueryRow(ctx, "SELECT count(*), pg_total_relation_size('kv_changes') FROM kv_changes").Scan(&rows, &disk); err != nil {
		b.Fatal(err)
	}
	if followed-followed0 < int64(notes/10) {
		b.Fatalf("the replica followed the feed %d times over %d commits of another replica (emptied %d): the feed isn't being followed", followed-followed0, notes/5, emptied-emptied0)
	}
	b.ReportMetric(float64(heap)/(1<<20), "following-heap-MiB")
	b.ReportMetric(float64(bytes)/(1<<20), "following-cache-MiB")
	b.ReportMetric(float64(rows), "feed-rows")
	b.ReportMetric(float64(disk)/(1<<10), "feed-KiB")
	b.Logf("following %d commits of another replica: followed %d, emptied %d; the cache counts %d items, %.1f MiB; the heap grew %.1f MiB over the empty replica's; the feed holds %d rows, %.0f KiB on disk",
		notes/5, followed-followed0, emptied-emptied0, items, float64(bytes)/(1<<20), float64(heap)/(1<<20), rows, float64(disk)/(1<<10))
}

// list is the first n documents of the recent listing, as list_documents reads them.
func list(ctx context.Context, docs *docstore.Store, n int) (page []docstore.Document, next string, err error) {
	err = docs.View(ctx, func(r *docstore.Reader) error {
		page, next, _, err = r.Recent("", n)
		return err
	})
	return page, next, err
}

func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
