package kvtest

// The contract's transaction cases: what a transaction sees of its own writes and of
// others', rollback, snapshots, concurrent writers and Batch.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

func testReadYourWrites(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		must(t, b.Put([]byte("k"), []byte("committed")))
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		must(t, b.Put([]byte("k"), []byte("mine")))
		must(t, b.Put([]byte("new"), []byte("new")))
		if got := b.Get([]byte("k")); string(got) != "mine" {
			t.Errorf("an overwritten key reads %q", got)
		}
		sub, err := b.CreateBucketIfNotExists([]byte("sub"))
		must(t, err)
		must(t, sub.Put([]byte("x"), []byte("y")))
		if got := tx.Bucket(name).Bucket([]byte("sub")).Get([]byte("x")); string(got) != "y" {
			t.Errorf("a new bucket's key reads %q", got)
		}
		must(t, b.Delete([]byte("k")))
		if got := b.Get([]byte("k")); got != nil {
			t.Errorf("a key deleted in the transaction reads %q", got)
		}
		var keys []string
		must(t, b.ForEach(func(k, _ []byte) error { keys = append(keys, string(k)); return nil }))
		if want := []string{"new", "sub"}; !slices.Equal(keys, want) {
			t.Errorf("ForEach in the transaction: %v, want %v", keys, want)
		}
		return nil
	})
}

func testRollback(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		return b.Put([]byte("k"), []byte("before"))
	})
	failed := errors.New("fn failed")
	err := db.Update(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket(name)
		must(t, b.Put([]byte("k"), []byte("after")))
		must(t, b.Put([]byte("other"), []byte("x")))
		_, err := tx.CreateBucketIfNotExists([]byte("new bucket"))
		must(t, err)
		return failed
	})
	if err != failed {
		t.Errorf("Update returned %v, want fn's error", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a panic in fn did not reach Update's caller")
			}
		}()
		db.Update(context.Background(), func(tx kv.Tx) error {
			must(t, tx.Bucket(name).Put([]byte("k"), []byte("panicked")))
			panic("fn panicked")
		})
	}()
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if got := b.Get([]byte("k")); string(got) != "before" {
			t.Errorf("after failed Updates k reads %q, want before", got)
		}
		if b.Get([]byte("other")) != nil || tx.Bucket([]byte("new bucket")) != nil {
			t.Error("a failed Update left something behind")
		}
		return nil
	})
}

func testSnapshot(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		for i := range 50 {
			must(t, b.Put([]byte(fmt.Sprintf("%02d", i)), []byte("old")))
		}
		return nil
	})
	// A View's function may run again (kv.DB.View), so the Update is made by its first run
	// only; every run sees one snapshot: the first, the one of its first read (before the
	// Update); a second, one after the Update.
	before := "00=old 01=old 02=old … 24=old 25=old 26=old … 48=old 49=old, 50 keys, later: false"
	after := "00=new 01=old 02=old … 24=old 26=old … 48=old 49=new 99=new, 50 keys, later: true"
	runs := 0
	view(t, db, func(tx kv.Tx) error {
		runs++
		b := tx.Bucket(name)
		if runs == 1 {
			if got := b.Get([]byte("00")); string(got) != "old" {
				t.Fatalf("00 reads %q", got)
			}
			done := make(chan error, 1)
			go func() {
				done <- db.Update(context.Background(), func(tx kv.Tx) error {
					b := tx.Bucket(name)
					must(t, b.Put([]byte("00"), []byte("new")))
					must(t, b.Put([]byte("49"), []byte("new")))
					must(t, b.Delete([]byte("25")))
					later, err := tx.CreateBucketIfNotExists([]byte("later"))
					must(t, err)
					must(t, later.Put([]byte("k"), []byte("v")))
					return b.Put([]byte("99"), []byte("new"))
				})
			}()
			select {
			case err := <-done:
				must(t, err)
			case <-time.After(20 * time.Second):
				t.Fatal("an Update waited for a View to end")
			}
		}
		var seen []string
		n := 0
		must(t, b.ForEach(func(k, v []byte) error {
			n++
			if i, err := strconv.Atoi(string(k)); err != nil || i <= 2 || i >= 48 || 24 <= i && i <= 26 {
				seen = append(seen, fmt.Sprintf("%s=%s", k, v))
			} else if string(v) != "old" {
				seen = append(seen, fmt.Sprintf("%s=%s", k, v))
			} else if i == 3 || i == 27 {
				seen = append(seen, "…")
			}
			return nil
		}))
		later := tx.Bucket([]byte("later")) != nil
		got := fmt.Sprintf("%s, %d keys, later: %v", strings.Join(seen, " "), n, later)
		switch want := map[bool]string{true: before, false: after}[runs == 1]; {
		case runs > 2:
			t.Errorf("a View's function ran %d times", runs)
		case got != want && runs == 1:
			t.Errorf("a View sees a commit made after it began:\n%s\nwant\n%s", got, want)
		case got != want:
			t.Errorf("a View's second run does not see the commit made before it:\n%s\nwant\n%s", got, want)
		}
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		if got := tx.Bucket(name).Get([]byte("00")); string(got) != "new" {
			t.Errorf("a later View reads 00=%q, want new", got)
		}
		if tx.Bucket([]byte("later")) == nil {
			t.Error("a later View doesn't see the bucket committed before it")
		}
		return nil
	})
}

// increment adds one to the counter under key, read and written in tx.
func increment(tx kv.Tx, key []byte) error {
	b, err := tx.CreateBucketIfNotExists(name)
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(string(b.Get(key)))
	return b.Put(key, []byte(strconv.Itoa(n+1)))
}

func counter(t *testing.T, db kv.DB, key []byte) (n int) {
	view(t, db, func(tx kv.Tx) error {
		n, _ = strconv.Atoi(string(tx.Bucket(name).Get(key)))
		return nil
	})
	return n
}

func testConcurrentUpdates(t *testing.T, db kv.DB) {
	const writers, each = 16, 20
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				if err := db.Update(context.Background(), func(tx kv.Tx) error { return increment(tx, []byte("n")) }); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := counter(t, db, []byte("n")); n != writers*each {
		t.Errorf("%d writers × %d increments: counter %d, want %d (lost updates)", writers, each, n, writers*each)
	}
}

func testBatch(t *testing.T, db kv.DB) {
	const writers, each = 16, 10
	failed := errors.New("this one fails")
	var wg sync.WaitGroup
	var mu sync.Mutex
	runs := 0
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				err := db.Batch(context.Background(), func(tx kv.Tx) error {
					mu.Lock()
					runs++
					mu.Unlock()
					if err := increment(tx, []byte("n")); err != nil {
						return err
					}
					if w == 0 && i == 0 {
						return failed
					}
					return nil
				})
				if want := error(nil); w == 0 && i == 0 {
					want = failed
					if err != want {
						t.Errorf("the failing Batch call returned %v", err)
					}
				} else if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := counter(t, db, []byte("n")); n != writers*each-1 {
		t.Errorf("Batch: counter %d, want %d (every call but the failing one, once)", n, writers*each-1)
	}
	if runs < writers*each {
		t.Errorf("Batch ran fns %d times for %d calls", runs, writers*each)
	}
}
