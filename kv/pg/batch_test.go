package pg_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// A Batch's first run reads what the replica's cache holds with no round trip, at the
// cache's count, and checks that count under the lock in its first round trip (its commit,
// or a miss). These are the cases where another replica commits while it runs.

// get reads key k of bucket b in tx as a number (0 when absent).
func get(t *testing.T, tx kv.Tx, k string) int {
	t.Helper()
	v := tx.Bucket([]byte("b")).Get([]byte(k))
	if v == nil {
		return 0
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func number(t *testing.T, db kv.DB, k string) int {
	t.Helper()
	var n int
	if err := db.View(context.Background(), func(tx kv.Tx) error { n = get(t, tx, k); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// warm puts keys in a's cache at its latest count.
func warm(t *testing.T, a kv.DB, keys ...string) {
	for range 2 {
		viewRead(t, a, keys...)
	}
}

// Each case: a's Batch reads n from the cache; on its first run, b adds 100 to n before
// a's run goes on; what a's Batch then does must be what it would do on b's n.
func TestBatchStaleCache(t *testing.T) {
	for _, tc := range []struct {
		name string
		// after does the rest of a's run, having read n, and says what n should be after.
		after func(t *testing.T, tx kv.Tx, n int) error
		want  int
		err   error
	}{
		{"writes at commit", func(t *testing.T, tx kv.Tx, n int) error {
			return tx.Bucket([]byte("b")).Put([]byte("n"), []byte(strconv.Itoa(n+1)))
		}, 102, nil},
		{"misses, then writes", func(t *testing.T, tx kv.Tx, n int) error {
			get(t, tx, "never-read") // a miss: the first round trip
			return tx.Bucket([]byte("b")).Put([]byte("n"), []byte(strconv.Itoa(n+1)))
		}, 102, nil},
		{"writes nothing", func(t *testing.T, tx kv.Tx, n int) error {
			if n != 101 {
				return nil // on the old n, nothing to do
			}
			return tx.Bucket([]byte("b")).Put([]byte("n"), []byte("0"))
		}, 0, nil},
		{"fails", func(t *testing.T, tx kv.Tx, n int) error {
			if n != 101 {
				return errRefused // refused on the old n
			}
			return tx.Bucket([]byte("b")).Put([]byte("n"), []byte("7"))
		}, 7, nil},
		{"fails on the new n too", func(t *testing.T, tx kv.Tx, n int) error {
			return fmt.Errorf("%w at %d", errRefused, n)
		}, 101, errRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := kvtest.URL(t)
			a, b := open(t, url), open(t, url)
			put(t, a, "n", "1")
			warm(t, a, "n")
			restarts := a.Restarts()
			runs := 0
			err := a.Batch(context.Background(), func(tx kv.Tx) error {
				runs++
				n := get(t, tx, "n")
				if runs == 1 {
					if n != 1 {
						t.Errorf("a's first run read n = %d, want 1", n)
					}
					put(t, b, "n", "101")
				} else if n != 101 {
					t.Errorf("a's run %d read n = %d, want b's 101", runs, n)
				}
				return tc.after(t, tx, n)
			})
			if !errors.Is(err, tc.err) {
				t.Fatalf("a's Batch: %v, want %v", err, tc.err)
			}
			if tc.err != nil && err.Error() != "refused at 101" {
				t.Errorf("a's Batch failed with %q, want the failure of the run on b's n", err)
			}
			if runs != 2 || a.Restarts() != restarts+1 {
				t.Errorf("a's Batch ran %d times (%d restarts), want 2 (1)", runs, a.Restarts()-restarts)
			}
			for _, db := range []kv.DB{a, b} {
				if got := number(t, db, "n"); got != tc.want {
					t.Errorf("n = %d after, want %d", got, tc.want)
				}
			}
		})
	}
}

var errRefused = errors.New("refused")

// With no other replica writing, a warm Batch runs once and is not restarted.
func TestBatchOptimisticRunsOnce(t *testing.T) {
	a := open(t, kvtest.URL(t))
	put(t, a, "n", "1")
	warm(t, a, "n")
	restarts := a.Restarts()
	for i := range 5 {
		runs := 0
		if err := a.Batch(context.Background(), func(tx kv.Tx) error {
			runs++
			return tx.Bucket([]byte("b")).Put([]byte("n"), []byte(strconv.Itoa(get(t, tx, "n")+1)))
		}); err != nil {
			t.Fatal(err)
		}
		if runs != 1 {
			t.Errorf("Batch %d ran %d times", i, runs)
		}
	}
	if got := number(t, a, "n"); got != 6 || a.Restarts() != restarts {
		t.Errorf("n = %d (want 6), %d restarts (want 0)", got, a.Restarts()-restarts)
	}
}

// Two replicas, each with writers adding one to a shared n by Batch, at once: no addition
// is lost, whichever cache was stale when.
func TestBatchReplicasLoseNoWrite(t *testing.T) {
	url := kvtest.URL(t)
	dbs := []kv.DB{open(t, url), open(t, url)}
	put(t, dbs[0], "n", "0")
	const writers, each = 3, 40
	var wg sync.WaitGroup
	errs := make(chan error, len(dbs)*writers)
	for _, db := range dbs {
		for range writers {
			wg.Go(func() {
				for range each {
					err := db.Batch(context.Background(), func(tx kv.Tx) error {
						b := tx.Bucket([]byte("b"))
						n, _ := strconv.Atoi(string(b.Get([]byte("n"))))
						return b.Put([]byte("n"), []byte(strconv.Itoa(n+1)))
					})
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, db := range dbs {
		if got := number(t, db, "n"); got != len(dbs)*writers*each {
			t.Errorf("n = %d, want %d", got, len(dbs)*writers*each)
		}
	}
}

// A Batch right after another replica's commit, counted through a proxy, four times in a
// row (after two to warm up): its first round trip finds the store moved on, catches the cache up (the change
// feed) and writes nothing, and no statement fails in it (a failed one made pgx prepare
// every statement of the round trip again, after a round trip to deallocate them: 5 or 6
// round trips in all). When that round trip was the commit, the run again is its commit
// alone: 2 in all. When it was a miss, the run again goes on in the transaction it left
// open, under the lock: the miss again and the commit, 3 in all. What the first run wrote
// is not in the store, and the counter moved once, for the commit of the run again.
//
//	COMPASS_TEST_POSTGRES=postgres://… go test -run AfterAnotherReplica ./kv/pg
func TestBatchAfterAnotherReplica(t *testing.T) {
	for _, tc := range []struct {
		name string
		miss bool  // the first run's first round trip is a miss, not its commit
		want int64 // round trips
	}{
		{"writes at commit", false, 2},
		{"misses, then writes", true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The first rounds are not counted: a connection new to a statement prepares
			// it, a round trip more, the first time it sends it.
			const warmup, rounds = 2, 6
			url := kvtest.URL(t)
			b := open(t, url)
			put(t, b, "n", "0")
			// A bucket with keys a's cache will know nothing of (a opens after they are
			// written, and reads none but the one each run reads): each is a miss.
			if err := b.Update(context.Background(), func(tx kv.Tx) error {
				m, err := tx.CreateBucketIfNotExists([]byte("m"))
				for i := range rounds {
					if err == nil {
						err = m.Put([]byte(fmt.Sprintf("x%d", i)), []byte("1"))
					}
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			a, proxy := viaProxy(t, url)
			for i := range rounds {
				warm(t, a, "n")
				put(t, b, "n", strconv.Itoa(100*(i+1)))
				count, _, _, _, err := a.Feed(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				runs, before := 0, proxy.RoundTrips()
				err = a.Batch(context.Background(), func(tx kv.Tx) error {
					runs++
					bk := tx.Bucket([]byte("b"))
					n := get(t, tx, "n")
					if x := fmt.Sprintf("x%d", i); tc.miss && string(tx.Bucket([]byte("m")).Get([]byte(x))) != "1" {
						t.Errorf("run %d: m's %s is %q, want 1", runs, x, tx.Bucket([]byte("m")).Get([]byte(x)))
					}
					if runs == 1 {
						if err := bk.Put([]byte(fmt.Sprintf("first-run-%d", i)), []byte("1")); err != nil {
							return err
						}
					}
					return bk.Put([]byte("n"), []byte(strconv.Itoa(n+1)))
				})
				trips := proxy.RoundTrips() - before
				if err != nil {
					t.Fatal(err)
				}
				if runs != 2 || i >= warmup && trips > tc.want {
					t.Errorf("after b's commit %d: a's Batch ran %d times (want 2) in %d round trips (want %d)", i, runs, trips, tc.want)
				}
				after, _, _, _, err := a.Feed(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if after != count+1 {
					t.Errorf("after b's commit %d: a's Batch moved the counter from %d to %d, want one commit", i, count, after)
				}
				for _, db := range []kv.DB{a, b} {
					if got, want := number(t, db, "n"), 100*(i+1)+1; got != want {
						t.Errorf("after b's commit %d: n = %d, want %d", i, got, want)
					}
					if got := number(t, db, fmt.Sprintf("first-run-%d", i)); got != 0 {
						t.Errorf("after b's commit %d: the first run's write is in the store", i)
					}
				}
			}
		})
	}
}
