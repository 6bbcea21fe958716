package kvtest

// The contract's bucket cases: nesting, values and buckets under one key, deleting buckets.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

func testNestedBuckets(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		top, err := tx.CreateBucketIfNotExists([]byte("top"))
		must(t, err)
		for _, n := range []string{"c", "a"} {
			sub, err := top.CreateBucketIfNotExists([]byte(n))
			must(t, err)
			must(t, sub.Put([]byte("in "+n), []byte(n)))
			deep, err := sub.CreateBucketIfNotExists([]byte("deep"))
			must(t, err)
			must(t, deep.Put([]byte("k"), []byte("deep in "+n)))
		}
		must(t, top.Put([]byte("b"), []byte("value")))
		again, err := top.CreateBucketIfNotExists([]byte("a"))
		must(t, err)
		if got := again.Get([]byte("in a")); string(got) != "a" {
			t.Errorf("CreateBucketIfNotExists of an existing bucket: its key reads %q", got)
		}
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		top := tx.Bucket([]byte("top"))
		if top == nil {
			t.Fatal("top is missing")
		}
		if top.Bucket([]byte("b")) != nil || top.Bucket([]byte("missing")) != nil {
			t.Error("Bucket of a value or of a missing key is not nil")
		}
		if got := top.Get([]byte("a")); got != nil {
			t.Errorf("Get of a bucket's name = %q, want nil", got)
		}
		if got := top.Bucket([]byte("c")).Bucket([]byte("deep")).Get([]byte("k")); string(got) != "deep in c" {
			t.Errorf("a nested bucket's key reads %q", got)
		}
		var seen []string
		must(t, top.ForEach(func(k, v []byte) error {
			seen = append(seen, fmt.Sprintf("%s=%v", k, v != nil))
			return nil
		}))
		if want := []string{"a=false", "b=true", "c=false"}; !slices.Equal(seen, want) {
			t.Errorf("ForEach saw %v, want %v (a bucket's value nil)", seen, want)
		}
		seen = nil
		must(t, top.ForEachBucket(func(k []byte) error { seen = append(seen, string(k)); return nil }))
		if want := []string{"a", "c"}; !slices.Equal(seen, want) {
			t.Errorf("ForEachBucket saw %v, want %v", seen, want)
		}
		c := top.Cursor()
		if k, v := c.First(); string(k) != "a" || v != nil {
			t.Errorf("a cursor on a bucket: %q, %q; want a, nil", k, v)
		}
		stop := errors.New("stop")
		if err := top.ForEach(func(k, v []byte) error { return stop }); err != stop {
			t.Errorf("ForEach returned %v, want fn's error", err)
		}
		return nil
	})
}

func testIncompatible(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		_, err = b.CreateBucketIfNotExists([]byte("sub"))
		must(t, err)
		must(t, b.Put([]byte("val"), []byte("v")))
		// Within the transaction that made them.
		if err := b.Put([]byte("sub"), []byte("v")); !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("Put over a bucket = %v", err)
		}
		if _, err := b.CreateBucketIfNotExists([]byte("val")); !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("CreateBucketIfNotExists over a value = %v", err)
		}
		if err := b.Delete([]byte("sub")); !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("Delete of a bucket = %v", err)
		}
		c := b.Cursor()
		if k, _ := c.Seek([]byte("sub")); string(k) != "sub" {
			t.Fatalf("Seek(sub) = %q", k)
		}
		if err := c.Delete(); !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("a cursor's Delete of a bucket = %v", err)
		}
		return nil
	})
	// In later transactions: the write (or, on PostgreSQL, its commit) is refused.
	for what, fn := range map[string]func(b kv.Bucket) error{
		"Put over a bucket":  func(b kv.Bucket) error { return b.Put([]byte("sub"), []byte("v")) },
		"Delete of a bucket": func(b kv.Bucket) error { return b.Delete([]byte("sub")) },
		"CreateBucketIfNotExists over a value": func(b kv.Bucket) error {
			_, err := b.CreateBucketIfNotExists([]byte("val"))
			return err
		},
	} {
		err := db.Update(context.Background(), func(tx kv.Tx) error {
			b := tx.Bucket(name)
			must(t, b.Put([]byte("also"), []byte("rolled back")))
			return fn(b)
		})
		if !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("%s in a later transaction: Update = %v, want ErrIncompatibleValue", what, err)
		}
	}
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if b.Bucket([]byte("sub")) == nil || string(b.Get([]byte("val"))) != "v" || b.Get([]byte("also")) != nil {
			t.Error("a refused write changed the store")
		}
		return nil
	})
}

// testRolledBackBucketOpened: a bucket made, written (past any write buffer), opened again
// and then rolled back is gone for every later transaction, however it looks for it.
func testRolledBackBucketOpened(t *testing.T, db kv.DB) {
	failed := errors.New("fn failed")
	big := bytes.Repeat([]byte("x"), 4096)
	err := db.Update(context.Background(), func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		nb, err := b.CreateBucketIfNotExists([]byte("nested"))
		must(t, err)
		for i := range 4 {
			must(t, nb.Put([]byte{byte(i)}, big))
		}
		if tx.Bucket(name) == nil || tx.Bucket(name).Bucket([]byte("nested")) == nil {
			t.Error("a bucket made in the transaction is not there in it")
		}
		return failed
	})
	if err != failed {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	view(t, db, func(tx kv.Tx) error {
		if tx.Bucket(name) != nil {
			t.Error("a rolled-back bucket is there in a later View")
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		if tx.Bucket(name) != nil {
			t.Error("a rolled-back bucket is there in a later Update")
		}
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		return b.Put([]byte("k"), []byte("v"))
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if b == nil || string(b.Get([]byte("k"))) != "v" || b.Bucket([]byte("nested")) != nil {
			t.Error("the bucket made again after a rollback does not hold just what was written")
		}
		return nil
	})
}

// testDeleteBucket: a nested bucket goes with all it holds (buckets inside it too), in the
// transaction and after; a value or a missing name is refused; the parent's other keys stay.
func testDeleteBucket(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		top, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		must(t, top.Put([]byte("keep"), []byte("1")))
		for _, n := range []string{"doomed", "made-and-doomed"} {
			nb, err := top.CreateBucketIfNotExists([]byte(n))
			must(t, err)
			must(t, nb.Put([]byte("k"), []byte("v")))
			deep, err := nb.CreateBucketIfNotExists([]byte("deep"))
			must(t, err)
			must(t, deep.Put([]byte("k"), []byte("v")))
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		top := tx.Bucket(name)
		must(t, top.DeleteBucket([]byte("doomed")))
		if top.Bucket([]byte("doomed")) != nil {
			t.Error("a deleted bucket is still there in its transaction")
		}
		if err := top.DeleteBucket([]byte("keep")); !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("DeleteBucket of a value = %v, want ErrIncompatibleValue", err)
		}
		if err := top.DeleteBucket([]byte("missing")); !errors.Is(err, kv.ErrBucketNotFound) {
			t.Errorf("DeleteBucket of nothing = %v, want ErrBucketNotFound", err)
		}
		nb, err := top.CreateBucketIfNotExists([]byte("fresh"))
		must(t, err)
		must(t, nb.Put([]byte("k"), []byte("v")))
		must(t, top.DeleteBucket([]byte("fresh"))) // made and deleted in one transaction
		return top.DeleteBucket([]byte("made-and-doomed"))
	})
	view(t, db, func(tx kv.Tx) error {
		top := tx.Bucket(name)
		var left []string
		must(t, top.ForEach(func(k, _ []byte) error { left = append(left, string(k)); return nil }))
		if strings.Join(left, ",") != "keep" {
			t.Errorf("after deleting buckets the parent holds %q, want only keep", left)
		}
		if n := top.KeyN(); n != 1 {
			t.Errorf("KeyN after deleting buckets = %d, want 1 (nothing of theirs left)", n)
		}
		return nil
	})
	// The name can be made again, empty.
	update(t, db, func(tx kv.Tx) error {
		nb, err := tx.Bucket(name).CreateBucketIfNotExists([]byte("again"))
		must(t, err)
		return nb.Put([]byte("k"), []byte("v2"))
	})
	view(t, db, func(tx kv.Tx) error {
		if v := tx.Bucket(name).Bucket([]byte("again")).Get([]byte("k")); string(v) != "v2" {
			t.Errorf("a bucket made after deletes holds %q", v)
		}
		return nil
	})
}

// testReplaceValueAndBucket: in one transaction, a value deleted (unread) can be made a
// bucket of the same name, and a bucket deleted can be made a value.
func testReplaceValueAndBucket(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		must(t, b.Put([]byte("was value"), []byte("v")))
		nb, err := b.CreateBucketIfNotExists([]byte("was bucket"))
		must(t, err)
		return nb.Put([]byte("k"), []byte("v"))
	})
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		must(t, b.Delete([]byte("was value")))
		nb, err := b.CreateBucketIfNotExists([]byte("was value"))
		must(t, err)
		must(t, nb.Put([]byte("k"), []byte("in the new bucket")))
		must(t, b.DeleteBucket([]byte("was bucket")))
		return b.Put([]byte("was bucket"), []byte("now a value"))
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if nb := b.Bucket([]byte("was value")); nb == nil || string(nb.Get([]byte("k"))) != "in the new bucket" {
			t.Error("a value deleted and made a bucket in one transaction is not that bucket")
		}
		if v := b.Get([]byte("was bucket")); string(v) != "now a value" || b.Bucket([]byte("was bucket")) != nil {
			t.Errorf("a bucket deleted and made a value in one transaction reads %q", v)
		}
		return nil
	})
}

// testDeleteBucketThenWriteMuch: a bucket deleted stays deleted for the rest of its
// transaction, however much it writes afterwards, and is made again empty.
func testDeleteBucketThenWriteMuch(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		nb, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		nb, err = nb.CreateBucketIfNotExists([]byte("nested"))
		must(t, err)
		return nb.Put([]byte("old"), []byte("v"))
	})
	view(t, db, func(tx kv.Tx) error { tx.Bucket(name).Bucket([]byte("nested")); return nil })
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		must(t, b.DeleteBucket([]byte("nested")))
		other, err := tx.CreateBucketIfNotExists([]byte("other"))
		must(t, err)
		for i := range 64 {
			must(t, other.Put([]byte{byte(i)}, bytes.Repeat([]byte("x"), 1024)))
		}
		if b.Bucket([]byte("nested")) != nil {
			t.Error("a deleted bucket is back in its transaction after it wrote more")
		}
		nb, err := b.CreateBucketIfNotExists([]byte("nested"))
		must(t, err)
		if nb.Get([]byte("old")) != nil {
			t.Error("a bucket deleted then made again in one transaction holds the old one's keys")
		}
		return nb.Put([]byte("new"), []byte("v"))
	})
	view(t, db, func(tx kv.Tx) error {
		nb := tx.Bucket(name).Bucket([]byte("nested"))
		if nb == nil || nb.Get([]byte("old")) != nil || string(nb.Get([]byte("new"))) != "v" {
			t.Error("after a bucket was deleted and made again, it does not hold just the new key")
		}
		return nil
	})
}

// testDeletedBucketSeenByOlderView: a View that began before a bucket was deleted still
// sees it; the transactions after the delete don't, whatever that View read.
func testDeletedBucketSeenByOlderView(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		must(t, b.Put([]byte("k"), []byte("v")))
		nb, err := b.CreateBucketIfNotExists([]byte("doomed"))
		must(t, err)
		return nb.Put([]byte("k"), []byte("v"))
	})
	// The View's function may run again (kv.DB.View): the delete is made by its first run,
	// which sees the bucket still; a second run began after the delete, and doesn't.
	runs := 0
	view(t, db, func(tx kv.Tx) error {
		runs++
		b := tx.Bucket(name)
		b.Get([]byte("k")) // the View has its snapshot
		if runs == 1 {
			done := make(chan error, 1)
			go func() {
				done <- db.Update(context.Background(), func(tx kv.Tx) error { return tx.Bucket(name).DeleteBucket([]byte("doomed")) })
			}()
			select {
			case err := <-done:
				must(t, err)
			case <-time.After(20 * time.Second):
				t.Fatal("an Update waited for a View to end")
			}
		}
		nb := b.Bucket([]byte("doomed"))
		switch {
		case runs > 2:
			t.Errorf("a View's function ran %d times", runs)
		case runs == 1 && (nb == nil || string(nb.Get([]byte("k"))) != "v"):
			t.Error("a View does not see a bucket deleted after it began")
		case runs == 2 && nb != nil && nb.Get([]byte("k")) != nil:
			t.Error("a View's second run sees a bucket deleted before it")
		}
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		if tx.Bucket(name).Bucket([]byte("doomed")) != nil {
			t.Error("a View after the delete sees the deleted bucket")
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		if tx.Bucket(name).Bucket([]byte("doomed")) != nil {
			t.Error("an Update after the delete sees the deleted bucket")
		}
		return nil
	})
}
