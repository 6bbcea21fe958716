package kvtest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
)

// The contract every kv backend keeps (Run), and the cases of plain keys and values.

// Run checks that the stores open returns keep the kv contract: bbolt's semantics, which
// the stores above kv rely on. open must return a fresh, empty store for each test.
func Run(t *testing.T, open func(t *testing.T) kv.DB) {
	tests := []struct {
		name string
		fn   func(*testing.T, kv.DB)
	}{
		{"GetPutDelete", testGetPutDelete},
		{"KeysRefused", testKeysRefused},
		{"Writable", testWritable},
		{"NestedBuckets", testNestedBuckets},
		{"IncompatibleValue", testIncompatible},
		{"Order", testOrder},
		{"CursorWalk", testCursorWalk},
		{"CursorDelete", testCursorDelete},
		{"ReadYourWrites", testReadYourWrites},
		{"Rollback", testRollback},
		{"RolledBackBucketOpened", testRolledBackBucketOpened},
		{"Snapshot", testSnapshot},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"Batch", testBatch},
		{"Change", testChange},
		{"Canceled", testCanceled},
		{"BigValues", testBigValues},
		{"KeyN", testKeyN},
		{"DeleteBucket", testDeleteBucket},
		{"ReplaceValueAndBucket", testReplaceValueAndBucket},
		{"DeleteBucketThenWriteMuch", testDeleteBucketThenWriteMuch},
		{"DeletedBucketSeenByOlderView", testDeletedBucketSeenByOlderView},
		{"TopLevelBuckets", testTopLevelBuckets},
		{"GetAllChangesNoAnswer", testGetAllChangesNoAnswer},
		{"GetAll", testGetAll},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func update(t *testing.T, db kv.DB, fn func(kv.Tx) error) {
	t.Helper()
	must(t, db.Update(context.Background(), fn))
}

func view(t *testing.T, db kv.DB, fn func(kv.Tx) error) {
	t.Helper()
	must(t, db.View(context.Background(), fn))
}

var name = []byte("b")

func testGetPutDelete(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		if tx.Bucket(name) != nil {
			t.Error("a missing bucket is not nil")
		}
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		must(t, b.Put([]byte("k"), []byte("v")))
		must(t, b.Put([]byte("empty"), []byte{}))
		must(t, b.Put([]byte("gone"), []byte("x")))
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if got := b.Get([]byte("k")); string(got) != "v" {
			t.Errorf("Get(k) = %q, want v", got)
		}
		if got := b.Get([]byte("empty")); got == nil || len(got) != 0 {
			t.Errorf("Get(empty) = %#v, want an empty, non-nil value", got)
		}
		if got := b.Get([]byte("missing")); got != nil {
			t.Errorf("Get(missing) = %q, want nil", got)
		}
		must(t, b.Delete([]byte("gone")))
		must(t, b.Delete([]byte("never there")))
		must(t, b.Put([]byte("k"), []byte("v2")))
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if got := b.Get([]byte("gone")); got != nil {
			t.Errorf("a deleted key reads %q", got)
		}
		if got := b.Get([]byte("k")); string(got) != "v2" {
			t.Errorf("Get(k) = %q, want v2", got)
		}
		return nil
	})
}

func testKeysRefused(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		if err := b.Put(nil, []byte("v")); !errors.Is(err, kv.ErrKeyRequired) {
			t.Errorf("Put(nil key) = %v, want ErrKeyRequired", err)
		}
		if err := b.Put(make([]byte, kv.MaxKeySize+1), []byte("v")); !errors.Is(err, kv.ErrKeyTooLarge) {
			t.Errorf("Put(too long a key) = %v, want ErrKeyTooLarge", err)
		}
		must(t, b.Put(bytes.Repeat([]byte{0xff}, kv.MaxKeySize), []byte("longest")))
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if got := b.Get(bytes.Repeat([]byte{0xff}, kv.MaxKeySize)); string(got) != "longest" {
			t.Errorf("the longest key reads %q", got)
		}
		if err := b.Put([]byte("k"), []byte("v")); !errors.Is(err, kv.ErrTxNotWritable) {
			t.Errorf("Put in a View = %v, want ErrTxNotWritable", err)
		}
		if err := b.Delete([]byte("k")); !errors.Is(err, kv.ErrTxNotWritable) {
			t.Errorf("Delete in a View = %v, want ErrTxNotWritable", err)
		}
		if _, err := tx.CreateBucketIfNotExists([]byte("new")); !errors.Is(err, kv.ErrTxNotWritable) {
			t.Errorf("CreateBucketIfNotExists in a View = %v, want ErrTxNotWritable", err)
		}
		return nil
	})
}

func testWritable(t *testing.T, db kv.DB) {
	view(t, db, func(tx kv.Tx) error {
		if tx.Writable() {
			t.Error("a View's transaction says it is writable")
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		if !tx.Writable() {
			t.Error("an Update's transaction says it is not writable")
		}
		return nil
	})
}

func testBigValues(t *testing.T, db kv.DB) {
	big := func(n int, seed byte) []byte {
		v := make([]byte, n)
		for i := range v {
			v[i] = seed + byte(i*7)
		}
		return v
	}
	sizes := []int{8<<20 + 1, 8 << 20, 300 << 10}
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		for i, n := range sizes {
			must(t, b.Put([]byte{byte(i)}, big(n, byte(i))))
		}
		if !bytes.Equal(b.Get([]byte{0}), big(sizes[0], 0)) {
			t.Error("a big value reads back wrong in its own transaction")
		}
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		for i, n := range sizes {
			if !bytes.Equal(b.Get([]byte{byte(i)}), big(n, byte(i))) {
				t.Errorf("the %d-byte value reads back wrong", n)
			}
		}
		c := b.Cursor()
		i := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if !bytes.Equal(v, big(sizes[i], byte(i))) {
				t.Errorf("a cursor reads the %d-byte value wrong (%d bytes)", sizes[i], len(v))
			}
			i++
		}
		return nil
	})
}

func testKeyN(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		for _, k := range []string{"a", "b", "c"} {
			must(t, b.Put([]byte(k), []byte("v")))
		}
		sub, err := b.CreateBucketIfNotExists([]byte("sub"))
		must(t, err)
		must(t, sub.Put([]byte("x"), []byte("v")))
		must(t, sub.Put([]byte("y"), []byte("v")))
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		if n := tx.Bucket(name).KeyN(); n != 6 {
			t.Errorf("KeyN = %d, want 6 (3 values, a bucket and its 2 values)", n)
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		must(t, b.Delete([]byte("a")))
		must(t, b.Bucket([]byte("sub")).Put([]byte("z"), []byte("v")))
		if n := b.KeyN(); n != 6 {
			t.Errorf("KeyN with the transaction's writes = %d, want 6", n)
		}
		return nil
	})
}

// testTopLevelBuckets: the transaction lists its top-level buckets in order.
func testTopLevelBuckets(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		for _, n := range []string{"b", "\xff", "a", "\x00"} {
			if _, err := tx.CreateBucketIfNotExists([]byte(n)); err != nil {
				return err
			}
		}
		return nil
	})
	var got []string
	view(t, db, func(tx kv.Tx) error {
		return tx.ForEachBucket(func(n []byte) error { got = append(got, string(n)); return nil })
	})
	if want := []string{"\x00", "a", "b", "\xff"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("top-level buckets %q, want %q", got, want)
	}
}
