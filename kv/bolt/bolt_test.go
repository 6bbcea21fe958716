package bolt

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/compass-mcp/compass-mcp/kv"
)

// The adapter answers a missing bucket with a nil Bucket (not an interface holding a nil
// pointer, which callers' "== nil" would miss), and bbolt's errors as the shared ones.
func TestBoltMissingBucketsAndErrors(t *testing.T) {
	raw, err := bbolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	db := Wrap(raw)
	err = db.Update(context.Background(), func(tx kv.Tx) error {
		if b := tx.Bucket([]byte("none")); b != nil {
			t.Errorf("tx.Bucket of a missing bucket = %#v, want nil", b)
		}
		top, err := tx.CreateBucketIfNotExists([]byte("top"))
		if err != nil {
			return err
		}
		if b := top.Bucket([]byte("none")); b != nil {
			t.Errorf("Bucket of a missing nested bucket = %#v, want nil", b)
		}
		if err := top.DeleteBucket([]byte("none")); !errors.Is(err, kv.ErrBucketNotFound) {
			t.Errorf("DeleteBucket of a missing bucket = %v, want ErrBucketNotFound", err)
		}
		if err := top.Put([]byte("k"), []byte("v")); err != nil {
			return err
		}
		if _, err := top.CreateBucketIfNotExists([]byte("k")); !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("a bucket where a value is = %v, want ErrIncompatibleValue", err)
		}
		if err := top.Put(nil, []byte("v")); !errors.Is(err, kv.ErrKeyRequired) {
			t.Errorf("an empty key = %v, want ErrKeyRequired", err)
		}
		if err := top.Put(make([]byte, kv.MaxKeySize+1), []byte("v")); !errors.Is(err, kv.ErrKeyTooLarge) {
			t.Errorf("a key of %d bytes = %v, want ErrKeyTooLarge", kv.MaxKeySize+1, err)
		}
		nested, err := top.CreateBucketIfNotExists([]byte("nested"))
		if err != nil {
			return err
		}
		if err := nested.Put([]byte("a"), []byte("1")); err != nil {
			return err
		}
		if err := top.DeleteBucket([]byte("nested")); err != nil {
			return err
		}
		if top.Bucket([]byte("nested")) != nil {
			t.Error("the nested bucket is still there after DeleteBucket")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(context.Background(), func(tx kv.Tx) error {
		return tx.Bucket([]byte("top")).Put([]byte("k2"), []byte("v"))
	})
	if !errors.Is(err, kv.ErrTxNotWritable) {
		t.Errorf("a write in a read transaction = %v, want ErrTxNotWritable", err)
	}
}
