package pg_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/pgproxy"
	"github.com/compass-mcp/compass-mcp/internal/testkit/wait"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// A replica cut off from the database in the middle of its commits (its every connection
// closed at once, as when its process is killed; 8 writers, each round trip held 1 ms)
// leaves no half change: every commit the database has is in the change feed with all its
// keys, and no row of the feed names a key its commit didn't write; the counter is the
// feed's last count, with no gap; and another replica, whose cache was warm before, reads
// exactly what the database holds.
func TestKilledMidCommit(t *testing.T) {
	url := kvtest.URL(t)
	other := open(t, url)
	proxy, via := pgproxy.In(t, url, time.Millisecond)
	name := fmt.Sprintf("killed-%d", time.Now().UnixNano())
	a := open(t, via+sep(via)+"application_name="+name, pg.WithTimeout(5*time.Second))
	put(t, other, "seed", "0")
	readAll := func(db *pg.DB) map[string]string {
		got := map[string]string{}
		if err := db.View(context.Background(), func(tx kv.Tx) error {
			clear(got)
			return tx.Bucket([]byte("b")).ForEach(func(k, v []byte) error { got[string(k)] = string(v); return nil })
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	before := readAll(other) // other's cache warm: the page of b's rows
	var wg sync.WaitGroup
	var made atomic.Int64 // commits acknowledged
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				err := a.Update(context.Background(), func(tx kv.Tx) error {
					b := tx.Bucket([]byte("b"))
					for j := range 3 { // each commit's keys: w.i.0, w.i.1, w.i.2
						if err := b.Put(fmt.Appendf(nil, "%d.%d.%d", w, i, j), []byte("v")); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return // cut off
				}
				made.Add(1)
			}
		})
	}
	// The cut comes once the writers are well under way: 40 commits made, the 8 writers
	// in the middle of theirs.
	wait.Until(t, time.Minute, "40 commits before the cut", func() bool { return made.Load() >= 40 })
	proxy.Close()
	wg.Wait()
	// A connection cut off lives on in the database until it has done what it was sent: a
	// commit may land after the cut. Only once a's are gone is every commit settled.
	wait.Until(t, time.Minute, "the cut replica's connections gone from the database", func() bool {
		n, err := other.Backends(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		return n == 0
	})

	count, ns, keys, whole, err := other.Feed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if whole {
		t.Error("a row of the feed is whole: these commits' keys fit in it")
	}
	for i, n := range ns {
		if n != ns[0]+int64(i) {
			t.Fatalf("the feed's counts have a gap: %v", ns)
		}
	}
	if len(ns) == 0 || ns[len(ns)-1] != count {
		t.Fatalf("the counter is at %d, the feed's last row at %v", count, ns[len(ns)-1:])
	}
	got := readAll(other)
	commits := map[string]int{} // w.i: keys of it written
	for k := range got {
		if _, ok := before[k]; ok {
			continue
		}
		if !keys[k] {
			t.Errorf("%s is in the store but in no row of the feed", k)
		}
		commits[k[:strings.LastIndexByte(k, '.')]]++
	}
	for k := range keys {
		if _, ok := got[k]; !ok && k != "b" {
			t.Errorf("the feed names %q, which the store doesn't hold", k)
		}
	}
	for c, n := range commits {
		if n != 3 {
			t.Errorf("commit %s has %d of its 3 keys in the store", c, n)
		}
	}
	t.Logf("%d commits made before the cut, all whole in the store and the feed", len(commits))
	if len(commits) == 0 {
		t.Error("no commit was made before the cut")
	}
	// other read through its cache, moved on by the feed: the same as the database.
	fresh := readAll(open(t, url, pg.WithCache(0)))
	if fmt.Sprint(got) != fmt.Sprint(fresh) {
		t.Errorf("the replica whose cache followed the feed reads %d keys, the database holds %d", len(got), len(fresh))
	}
}

// sep is what joins a query parameter to u.
func sep(u string) string {
	if strings.Contains(u, "?") {
		return "&"
	}
	return "?"
}

// The feed keeps its length and its age: each commit deletes the oldest rows past either.
func TestFeedPruned(t *testing.T) {
	url := kvtest.URL(t)
	for _, c := range []struct {
		name   string
		length int
		age    time.Duration
		older  time.Duration // how much older the rows are made before each commit
		want   int
	}{
		{"by length", 5, time.Hour, 0, 5},
		{"by age", 1000, time.Minute, time.Hour, 1},
	} {
		db := open(t, url, pg.WithFeed(c.length, c.age))
		for i := range 20 {
			if i > 0 { // the rows so far made older, as time passing would: the last one is not
				if err := db.AgeFeed(context.Background(), c.older); err != nil {
					t.Fatal(err)
				}
			}
			put(t, db, "k"+strconv.Itoa(i), "v")
		}
		if n, err := db.FeedRows(context.Background()); err != nil || n != c.want {
			t.Errorf("%s: the feed holds %d rows (%v), want %d", c.name, n, err, c.want)
		}
	}
}
