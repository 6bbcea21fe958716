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
