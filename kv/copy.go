package kv

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
)

// Counts says how much a Copy or a Digest went through.
type Counts struct {
	Buckets int   // buckets, top-level and nested
	Keys    int   // keys holding values
	Bytes   int64 // bytes of keys and values
}

// Copy writes every bucket, key and value of from into to, byte for byte, reading from one
// read transaction of from and writing in one write transaction of to: all or nothing (a
// copy that fails leaves to as empty as it was, and is simply run again). to must be empty,
// so that a copy never mixes two stores.
//
// The read runs inside the write, not the other way round: from's View may run its
// function again (kv.DB), and a write committed by an earlier run would have made to
// "not empty" for the next; so each run first takes out what an earlier run wrote, in the
// same uncommitted transaction, and only the last run's copy is committed. (A top-level
// bucket an earlier run made stays, empty, should the last run's snapshot lack it: the
// top-level buckets are the store's fixed few, which no write deletes.)
func Copy(ctx context.Context, from, to DB) (Counts, error) {
	var n Counts
	err := to.Update(ctx, func(dst Tx) error {
		empty := true
		if err := dst.ForEachBucket(func([]byte) error { empty = false; return errStop }); err != nil && !errors.Is(err, errStop) {
			return err
		}
		if !empty {
			return ErrNotEmpty
		}
		var made [][]byte // the top-level buckets a run made
		return from.View(ctx, func(src Tx) error {
			for _, name := range made {
				if err := emptyOut(dst.Bucket(name)); err != nil {
					return err
				}
			}
			made, n = made[:0], Counts{}
			return src.ForEachBucket(func(name []byte) error {
				b, err := dst.CreateBucketIfNotExists(name)
				if err != nil {
					return fmt.Errorf("making bucket %q: %w", name, err)
				}
				made = append(made, append([]byte(nil), name...))
				n.Buckets++
				n.Bytes += int64(len(name))
				return copyBucket(src.Bucket(name), b, &n)
			})
		})
	})
	return n, err
}

// emptyOut deletes every key and nested bucket of b (a top-level bucket of a write
// transaction, which kv has no way to delete).
func emptyOut(b Bucket) error {
	var keys [][]byte
	var nested []bool
	if err := b.ForEach(func(k, v []byte) error {
		keys = append(keys, append([]byte(nil), k...))
		nested = append(nested, v == nil && b.Bucket(k) != nil)
		return nil
	}); err != nil {
		return err
	}
	for i, k := range keys {
		var err error
		if nested[i] {
			err = b.DeleteBucket(k)
		} else {
			err = b.Delete(k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

var errStop = errors.New("stop")

func copyBucket(src, dst Bucket, n *Counts) error {
	return src.ForEach(func(k, v []byte) error {
		n.Bytes += int64(len(k))
		if v == nil {
			nested := src.Bucket(k)
			if nested == nil { // a key whose value is empty, on a backend that says nil
				n.Keys++
				return dst.Put(k, []byte{})
			}
			b, err := dst.CreateBucketIfNotExists(k)
			if err != nil {
				return fmt.Errorf("making bucket %q: %w", k, err)
			}
			n.Buckets++
			return copyBucket(nested, b, n)
		}
		n.Keys++
		n.Bytes += int64(len(v))
		return dst.Put(k, v)
	})
}

// Digest is a SHA-256 over every bucket, key and value of db in order (with their nesting),
// in one read transaction: two stores with the same digest hold the same bytes.
func Digest(ctx context.Context, db DB) (string, Counts, error) {
	var n Counts
	h := sha256.New()
	err := db.View(ctx, func(tx Tx) error {
		n = Counts{}
		h.Reset()
		return tx.ForEachBucket(func(name []byte) error {
			n.Buckets++
			n.Bytes += int64(len(name))
			field(h, 'B', name)
			if err := digestBucket(h, tx.Bucket(name), &n); err != nil {
				return err
			}
			field(h, 'E', nil)
			return nil
		})
	})
	return hex.EncodeToString(h.Sum(nil)), n, err
}

func digestBucket(h hash.Hash, b Bucket, n *Counts) error {
	return b.ForEach(func(k, v []byte) error {
		n.Bytes += int64(len(k))
		if v == nil {
			if nested := b.Bucket(k); nested != nil {
				n.Buckets++
				field(h, 'B', k)
				if err := digestBucket(h, nested, n); err != nil {
					return err
				}
				field(h, 'E', nil)
				return nil
			}
		}
		n.Keys++
		n.Bytes += int64(len(v))
		field(h, 'K', k)
		field(h, 'V', v)
		return nil
	})
}

// field writes a tag and a length-prefixed value, so that no two layouts hash alike.
func field(h hash.Hash, tag byte, b []byte) {
	var head [9]byte
	head[0] = tag
	binary.BigEndian.PutUint64(head[1:], uint64(len(b)))
	h.Write(head[:])
	h.Write(b)
}

// DiffersError is returned by CopyChecked when the copy, read back, differs from what was
// copied.
type DiffersError struct {
	Want, Got             string // the digests of what was copied and of the copy
	WantCounts, GotCounts Counts
}

func (e *DiffersError) Error() string {
	return fmt.Sprintf("the copy differs from its source (sha256 %s, %d buckets, %d keys, %d bytes, against sha256 %s, %d buckets, %d keys, %d bytes): don't use it",
		e.Got, e.GotCounts.Buckets, e.GotCounts.Keys, e.GotCounts.Bytes, e.Want, e.WantCounts.Buckets, e.WantCounts.Keys, e.WantCounts.Bytes)
}

// CopyChecked is Copy, then a check that to holds the bytes that were copied: the digest of
// from is taken in the copy's own snapshot (so that servers writing to from meanwhile don't
// make a good copy look wrong), the copy's is read back from to. It returns what was copied
// and its digest; a *DiffersError when the two differ, and Copy's errors.
func CopyChecked(ctx context.Context, from, to DB) (Counts, string, error) {
	var (
		n    Counts
		want string
	)
	err := from.View(ctx, func(tx Tx) error {
		snap := snapshot{tx}
		// The digest first: from's View may run this again (kv.DB.View), which must not
		// happen once the copy is committed, so nothing of tx is read after it.
		var err error
		if want, _, err = Digest(ctx, snap); err != nil {
			return err
		}
		n, err = Copy(ctx, snap, to)
		return err
	})
	if err != nil {
		return n, "", err
	}
	got, gn, err := Digest(ctx, to)
	if err != nil {
		return n, "", fmt.Errorf("reading the copy back: %w", err)
	}
	if got != want || gn != n {
		return n, "", &DiffersError{Want: want, Got: got, WantCounts: n, GotCounts: gn}
	}
	return n, got, nil
}

// snapshot is one read transaction seen as a read-only DB.
type snapshot struct{ tx Tx }

func (s snapshot) View(_ context.Context, fn func(Tx) error) error { return fn(s.tx) }
func (s snapshot) Update(context.Context, func(Tx) error) error    { return ErrTxNotWritable }
func (s snapshot) Batch(context.Context, func(Tx) error) error     { return ErrTxNotWritable }
