package kvtest

// The contract's Change case: a change worked out on a read and put by a write.

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
)

// kv.Change: read's error, or its nothing to write, is what Change returns, with no write;
// writes that count from their own reads lose no call among many at once; and a Change's
// read sees the Changes committed before it.
func testChange(t *testing.T, db kv.DB) {
	refused := errors.New("refused")
	wrote := false
	if err := kv.Change(context.Background(), db, func(kv.Tx) (bool, error) { return true, refused }, func(kv.Tx) error { wrote = true; return nil }); err != refused || wrote {
		t.Errorf("a read that fails: %v, wrote %v", err, wrote)
	}
	if err := kv.Change(context.Background(), db, func(kv.Tx) (bool, error) { return false, nil }, func(kv.Tx) error { wrote = true; return nil }); err != nil || wrote {
		t.Errorf("a read with nothing to write: %v, wrote %v", err, wrote)
	}
	const writers, each = 8, 10
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				err := kv.Change(context.Background(), db, func(tx kv.Tx) (bool, error) {
					if b := tx.Bucket(name); b != nil {
						b.Get([]byte("c"))
					}
					return true, nil
				}, func(tx kv.Tx) error { return increment(tx, []byte("c")) })
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := counter(t, db, []byte("c")); n != writers*each {
		t.Errorf("Change: counter %d, want %d", n, writers*each)
	}
	for i := range 3 {
		var seen int
		if err := kv.Change(context.Background(), db, func(tx kv.Tx) (bool, error) {
			seen, _ = strconv.Atoi(string(tx.Bucket(name).Get([]byte("c"))))
			return true, nil
		}, func(tx kv.Tx) error { return increment(tx, []byte("c")) }); err != nil {
			t.Fatal(err)
		}
		if seen != writers*each+i {
			t.Errorf("Change %d after the others read %d, want %d", i, seen, writers*each+i)
		}
	}
}
