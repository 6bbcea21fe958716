// Package bolt is the bbolt backend of kv: the same ordered, nested buckets, kept in one
// file on one machine. It opens the data file (Open, OpenFile, DefaultPath), holds it only
// while in use so that processes take turns (File), answers a damaged file with an error
// rather than a crash, and copies the file while servers use it (File.Backup).
//
// # Caveats
//
// bbolt lets one process hold a file at a time. Open waits at most the given timeout for
// another process's lock and then returns an error wrapping kv.ErrBusy, rather than bbolt's
// default of waiting forever, so a second server started on the same file says why instead
// of hanging.
package bolt

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/compass-mcp/compass-mcp/kv"
)

// WrapTx wraps a bbolt transaction as a kv.Tx.
func WrapTx(tx *bbolt.Tx) kv.Tx { return boltTx{tx} }

// Wrap wraps a bbolt database, held open by the caller, as a kv.DB. Its Batch is bbolt's
// own (which waits up to 10 ms for company); File has the one the server uses.
func Wrap(db *bbolt.DB) kv.DB { return boltDB{db} }

type boltDB struct{ db *bbolt.DB }

// The context is looked at before a transaction begins, as File's.
func (d boltDB) View(ctx context.Context, fn func(kv.Tx) error) error {
	if ctx.Err() != nil {
		return kv.Canceled(ctx)
	}
	return d.db.View(func(tx *bbolt.Tx) error { return fn(boltTx{tx}) })
}

func (d boltDB) Update(ctx context.Context, fn func(kv.Tx) error) error {
	if ctx.Err() != nil {
		return kv.Canceled(ctx)
	}
	return d.db.Update(func(tx *bbolt.Tx) error { return fn(boltTx{tx}) })
}

func (d boltDB) Batch(ctx context.Context, fn func(kv.Tx) error) error {
	if ctx.Err() != nil {
		return kv.Canceled(ctx)
	}
	return d.db.Batch(func(tx *bbolt.Tx) error { return fn(boltTx{tx}) })
}

type boltTx struct{ tx *bbolt.Tx }

func (t boltTx) Bucket(name []byte) kv.Bucket { return wrapBucket(t.tx.Bucket(name)) }

func (t boltTx) CreateBucketIfNotExists(name []byte) (kv.Bucket, error) {
	b, err := t.tx.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, boltErr(err)
	}
	return boltBucket{b}, nil
}

func (t boltTx) Writable() bool { return t.tx.Writable() }

func (t boltTx) ForEachBucket(fn func(name []byte) error) error {
	return t.tx.ForEach(func(name []byte, _ *bbolt.Bucket) error { return fn(name) })
}

// TxOf is the bbolt transaction under tx, for what only bbolt has (its consistency check,
// its transaction ids); ok is false on other backends.
func TxOf(tx kv.Tx) (btx *bbolt.Tx, ok bool) {
	b, ok := tx.(boltTx)
	return b.tx, ok
}

// BucketOf is the bbolt bucket under b, for what only bbolt has (its page statistics);
// ok is false on other backends.
func BucketOf(b kv.Bucket) (bb *bbolt.Bucket, ok bool) {
	w, ok := b.(boltBucket)
	return w.b, ok
}

// wrapBucket returns nil (not an interface holding a nil pointer) for a missing bucket.
func wrapBucket(b *bbolt.Bucket) kv.Bucket {
	if b == nil {
		return nil
	}
	return boltBucket{b}
}

type boltBucket struct{ b *bbolt.Bucket }

func (b boltBucket) Get(key []byte) []byte                    { return b.b.Get(key) }
func (b boltBucket) Put(key, value []byte) error              { return boltErr(b.b.Put(key, value)) }
func (b boltBucket) Delete(key []byte) error                  { return boltErr(b.b.Delete(key)) }
func (b boltBucket) Bucket(name []byte) kv.Bucket             { return wrapBucket(b.b.Bucket(name)) }
func (b boltBucket) DeleteBucket(name []byte) error           { return boltErr(b.b.DeleteBucket(name)) }
func (b boltBucket) Cursor() kv.Cursor                        { return boltCursor{b.b.Cursor()} }
func (b boltBucket) KeyN() int                                { return b.b.Stats().KeyN }
func (b boltBucket) Tune(fillPercent float64)                 { b.b.FillPercent = fillPercent }
func (b boltBucket) ForEach(fn func(k, v []byte) error) error { return b.b.ForEach(fn) }

func (b boltBucket) ForEachBucket(fn func(name []byte) error) error {
	return b.b.ForEachBucket(fn)
}

func (b boltBucket) CreateBucketIfNotExists(name []byte) (kv.Bucket, error) {
	nb, err := b.b.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, boltErr(err)
	}
	return boltBucket{nb}, nil
}

type boltCursor struct{ c *bbolt.Cursor }

func (c boltCursor) First() ([]byte, []byte)          { return c.c.First() }
func (c boltCursor) Last() ([]byte, []byte)           { return c.c.Last() }
func (c boltCursor) Next() ([]byte, []byte)           { return c.c.Next() }
func (c boltCursor) Prev() ([]byte, []byte)           { return c.c.Prev() }
func (c boltCursor) Seek(key []byte) ([]byte, []byte) { return c.c.Seek(key) }
func (c boltCursor) Delete() error                    { return boltErr(c.c.Delete()) }

// boltErr maps bbolt's errors onto the shared ones (still wrapping bbolt's).
func boltErr(err error) error {
	var shared error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bolterrors.ErrTxNotWritable):
		shared = kv.ErrTxNotWritable
	case errors.Is(err, bolterrors.ErrIncompatibleValue), errors.Is(err, bolterrors.ErrBucketExists):
		shared = kv.ErrIncompatibleValue
	case errors.Is(err, bolterrors.ErrKeyRequired), errors.Is(err, bolterrors.ErrBucketNameRequired):
		shared = kv.ErrKeyRequired
	case errors.Is(err, bolterrors.ErrKeyTooLarge):
		shared = kv.ErrKeyTooLarge
	case errors.Is(err, bolterrors.ErrBucketNotFound):
		shared = kv.ErrBucketNotFound
	default:
		return err
	}
	return fmt.Errorf("%w (%w)", shared, err)
}
