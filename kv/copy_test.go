package kv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

func boltStore(t *testing.T) kv.DB {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return bolt.Wrap(db)
}

// fill writes nested buckets with keys of every byte, empty values and a large one.
func fill(t *testing.T, db kv.DB) {
	t.Helper()
	err := db.Update(context.Background(), func(tx kv.Tx) error {
		for _, top := range []string{"docs", "threads", "\x00odd\xff"} {
			b, err := tx.CreateBucketIfNotExists([]byte(top))
			if err != nil {
				return err
			}
			for i := range 300 {
				if err := b.Put([]byte{byte(i), 0, byte(i >> 8)}, bytes.Repeat([]byte{byte(i)}, i%7)); err != nil {
					return err
				}
			}
			nested, err := b.CreateBucketIfNotExists([]byte("nested"))
			if err != nil {
				return err
			}
			deeper, err := nested.CreateBucketIfNotExists([]byte{0xff, 0x00})
			if err != nil {
				return err
			}
			if err := deeper.Put([]byte("big"), bytes.Repeat([]byte("x"), 1<<20)); err != nil {
				return err
			}
			if err := nested.Put([]byte("empty"), []byte{}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A copy from a bbolt file into the tests' store (kvtest.Open: PostgreSQL with
// COMPASS_TEST_DATA) and back into a bbolt file holds the same bytes.
func TestCopyIsByteForByte(t *testing.T) {
	from, to, back := boltStore(t), kvtest.Open(t), boltStore(t)
	fill(t, from)
	n, err := kv.Copy(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	if n.Buckets != 9 || n.Keys != 3*(300+2) {
		t.Errorf("copied %+v, want 9 buckets and %d keys", n, 3*302)
	}
	if _, err := kv.Copy(context.Background(), to, back); err != nil {
		t.Fatal(err)
	}
	d1, c1, err := kv.Digest(context.Background(), from)
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []kv.DB{to, back} {
		d, c, err := kv.Digest(context.Background(), db)
		if err != nil || d != d1 || c != c1 {
			t.Errorf("digest %s %+v (%v), want %s %+v", d, c, err, d1, c1)
		}
	}
	// The digest tells a changed byte.
	if err := back.Update(context.Background(), func(tx kv.Tx) error {
		return tx.Bucket([]byte("docs")).Bucket([]byte("nested")).Put([]byte("empty"), []byte{0})
	}); err != nil {
		t.Fatal(err)
	}
	if d, _, _ := kv.Digest(context.Background(), back); d == d1 {
		t.Error("a changed value left the digest the same")
	}
}

func TestCopyRefusesAStoreWithData(t *testing.T) {
	from, to := boltStore(t), kvtest.Open(t)
	fill(t, from)
	if err := to.Update(context.Background(), func(tx kv.Tx) error { _, err := tx.CreateBucketIfNotExists([]byte("x")); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Copy(context.Background(), from, to); !errors.Is(err, kv.ErrNotEmpty) {
		t.Errorf("copy into a store with data = %v, want ErrNotEmpty", err)
	}
}

// failing is a store whose writes fail after a number of puts: the copy must leave nothing.
type failing struct {
	kv.DB
	after int
}

func (f *failing) Update(ctx context.Context, fn func(kv.Tx) error) error {
	return f.DB.Update(ctx, func(tx kv.Tx) error { return fn(failingTx{tx, &f.after}) })
}

type failingTx struct {
	kv.Tx
	left *int
}

func (t failingTx) CreateBucketIfNotExists(name []byte) (kv.Bucket, error) {
	b, err := t.Tx.CreateBucketIfNotExists(name)
	return failingBucket{b, t.left}, err
}

type failingBucket struct {
	inner
	left *int
}

type inner = kv.Bucket

func (b failingBucket) Put(k, v []byte) error {
	if *b.left--; *b.left < 0 {
		return fmt.Errorf("disk full")
	}
	return b.inner.Put(k, v)
}

func (b failingBucket) CreateBucketIfNotExists(name []byte) (kv.Bucket, error) {
	nb, err := b.inner.CreateBucketIfNotExists(name)
	return failingBucket{nb, b.left}, err
}

func TestCopyIsAllOrNothing(t *testing.T) {
	from, to := boltStore(t), kvtest.Open(t)
	fill(t, from)
	if _, err := kv.Copy(context.Background(), from, &failing{DB: to, after: 500}); err == nil {
		t.Fatal("a copy whose writes fail succeeded")
	}
	_, n, err := kv.Digest(context.Background(), to)
	if err != nil || n != (kv.Counts{}) {
		t.Errorf("after a failed copy the store holds %+v (%v), want nothing", n, err)
	}
	if _, err := kv.Copy(context.Background(), from, to); err != nil {
		t.Errorf("copying again after a failure: %v", err)
	}
}

// CopyChecked checks the copy against the snapshot it was made from: a writer changing the
// source while it copies doesn't make a good copy look wrong, and the digest it returns is
// the copy's.
func TestCopyCheckedWhileWritten(t *testing.T) {
	from, to := boltStore(t), kvtest.Open(t)
	fill(t, from)
	writes := make(chan error, 1)
	go func() {
		var err error
		for i := 0; i < 200 && err == nil; i++ {
			err = from.Update(context.Background(), func(tx kv.Tx) error {
				return tx.Bucket([]byte("docs")).Put([]byte(fmt.Sprint("during-", i)), []byte("x"))
			})
		}
		writes <- err
	}()
	n, digest, err := kv.CopyChecked(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-writes; err != nil {
		t.Fatal(err)
	}
	if d, c, _ := kv.Digest(context.Background(), to); d != digest || c != n {
		t.Errorf("CopyChecked said %s %+v; the copy's digest is %s %+v", digest, n, d, c)
	}
	if _, _, err := kv.CopyChecked(context.Background(), from, to); !errors.Is(err, kv.ErrNotEmpty) {
		t.Errorf("CopyChecked into the copy again = %v, want ErrNotEmpty", err)
	}
}
