package pg_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// Change's read is served by the replica's cache with nothing checked; what it found counts
// only through its write, which checks it, or once Change has found the cache current. These
// are the cases where another replica committed after a's cache was filled: a's read sees the
// old n, and what a's Change then does must be what it would do on b's n.
func TestChangeStaleCache(t *testing.T) {
	for _, tc := range []struct {
		name string
		// read says, on the n it read, whether to write; write, on the n it reads, what to
		// put (when read saw another n, it works the change out again from its own).
		read      func(t *testing.T, tx kv.Tx, n int) (bool, error)
		want      int
		err       error
		readRuns  int // how many times a's read runs: twice when its answer had to be checked
		writeRuns int
	}{
		{"writes", func(t *testing.T, tx kv.Tx, n int) (bool, error) { return true, nil }, 102, nil, 1, 2},
		{"misses, then writes", func(t *testing.T, tx kv.Tx, n int) (bool, error) {
			get(t, tx, "never-read") // a miss: it finds the cache behind, and reads again
			return true, nil
		}, 102, nil, 2, 1},
		{"nothing to write on the old n", func(t *testing.T, tx kv.Tx, n int) (bool, error) {
			return n == 101, nil
		}, 102, nil, 2, 1},
		{"fails on the old n", func(t *testing.T, tx kv.Tx, n int) (bool, error) {
			if n != 101 {
				return false, errRefused
			}
			return true, nil
		}, 102, nil, 2, 1},
		{"fails on the new n too", func(t *testing.T, tx kv.Tx, n int) (bool, error) {
			return false, fmt.Errorf("%w at %d", errRefused, n)
		}, 101, errRefused, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := kvtest.URL(t)
			a, b := open(t, url), open(t, url)
			put(t, a, "n", "1")
			warm(t, a, "n")
			put(t, b, "n", "101") // a's cache doesn't know yet
			restarts := a.Restarts()
			readRuns, writeRuns, seen := 0, 0, 0
			err := kv.Change(context.Background(), a, func(tx kv.Tx) (bool, error) {
				readRuns++
				seen = get(t, tx, "n")
				if readRuns == 1 && seen != 1 {
					t.Errorf("a's first read found n = %d, want its cache's 1", seen)
				}
				return tc.read(t, tx, seen)
			}, func(tx kv.Tx) error {
				writeRuns++
				n := get(t, tx, "n")
				if writeRuns > 1 && n != 101 {
					t.Errorf("a's write run %d found n = %d, want b's 101", writeRuns, n)
				}
				return tx.Bucket([]byte("b")).Put([]byte("n"), []byte(strconv.Itoa(n+1)))
			})
			if !errors.Is(err, tc.err) {
				t.Fatalf("a's Change: %v, want %v", err, tc.err)
			}
			if tc.err != nil && err.Error() != "refused at 101" {
				t.Errorf("a's Change failed with %q, want the failure of the read on b's n", err)
			}
			if readRuns != tc.readRuns || writeRuns != tc.writeRuns {
				t.Errorf("a's read ran %d times and its write %d, want %d and %d", readRuns, writeRuns, tc.readRuns, tc.writeRuns)
			}
			if a.Restarts() != restarts+1 {
				t.Errorf("%d restarts, want 1", a.Restarts()-restarts)
			}
			for _, db := range []kv.DB{a, b} {
				if got := number(t, db, "n"); got != tc.want {
					t.Errorf("n = %d after, want %d", got, tc.want)
				}
			}
		})
	}
}

// With no other replica writing, a warm Change reads once and writes once, with nothing
// run again, and its read sees the Change before it.
func TestChangeWarmRunsOnce(t *testing.T) {
	a := open(t, kvtest.URL(t))
	put(t, a, "n", "1")
	warm(t, a, "n")
	restarts := a.Restarts()
	for i := range 5 {
		reads, writes, seen := 0, 0, 0
		if err := kv.Change(context.Background(), a, func(tx kv.Tx) (bool, error) {
			reads++
			seen = get(t, tx, "n")
			return true, nil
		}, func(tx kv.Tx) error {
			writes++
			return tx.Bucket([]byte("b")).Put([]byte("n"), []byte(strconv.Itoa(get(t, tx, "n")+1)))
		}); err != nil {
			t.Fatal(err)
		}
		if reads != 1 || writes != 1 || seen != i+1 {
			t.Errorf("Change %d: read %d times (saw n = %d, want %d), wrote %d times", i, reads, seen, i+1, writes)
		}
	}
	if got := number(t, a, "n"); got != 6 || a.Restarts() != restarts {
		t.Errorf("n = %d (want 6), %d restarts (want 0)", got, a.Restarts()-restarts)
	}
}
