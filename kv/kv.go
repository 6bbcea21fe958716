// Package kv is the store boundary: ordered, nested buckets of keys and values, read and
// written in transactions. Everything compass-mcp keeps (documents and their versions,
// conversations, people, members, tokens, sign-in sessions, OAuth grants, the search index)
// is written above it, once; below it are two backends that know nothing of MCP:
//
//   - bbolt (package kv/bolt), one file on one machine, the default;
//   - PostgreSQL (package kv/pg), one database shared by several servers.
//
// Nothing above kv links either backend: the stores take a DB and tell failures apart by
// the errors below, whichever backend answers (internal/style checks it with go list -deps).
//
// # Caveats
//
// The shape is bbolt's, because the stores were written on bbolt, and both backends keep
// its guarantees:
//
//   - a write transaction sees, and is seen by, nothing but whole committed transactions,
//     and no two write transactions of one store run at once (on PostgreSQL: across every
//     server on the database), so a write should be short: every other writer waits for it;
//   - a read transaction sees one snapshot for its whole life, and so holds the store back
//     until it ends (on bbolt a writer that must grow the file's map waits for it, and the
//     file stays held by this process; on PostgreSQL it keeps a connection of the pool);
//   - keys sort bytewise; a bucket's entry is either a value or a nested bucket (whose
//     value, seen through a cursor or ForEach, is nil);
//   - values returned by Get and cursors are valid only until the transaction ends, and
//     must not be changed;
//   - Batch's function may run more than once (when a write grouped with it fails), and so
//     may View's (on PostgreSQL, when the store changed while it read from the replica's
//     cache), so each must set its results afresh on every run: assign, don't append to
//     or count into what the caller holds, and send nothing anywhere (a page, another
//     store's commit) until the last read of the transaction;
//   - the context a transaction is given is the caller's: once it is done, a transaction not
//     yet begun is not begun, a backend that talks to a server stops the statement under
//     way (PostgreSQL: a cancel request), and the call returns an error wrapping
//     ErrCanceled and the context's own (context.Canceled, context.DeadlineExceeded). A write
//     whose commit was under way may or may not have been committed then; bbolt, which works
//     in memory and on its file, checks the context only before a transaction begins.
//
// A backend that cannot reach its data (a database that went away) panics with *Failure
// from the method that needed it; the DB's View, Update and Batch recover it and return
// its error, so the code above never sees a half-read value.
package kv

import (
	"context"
	"errors"
	"fmt"
)

// DB runs transactions, each for the context it is given (see Caveats: a context done
// ends it with ErrCanceled).
type DB interface {
	// View runs fn in a read-only transaction. fn may run more than once (a backend may
	// read optimistically, then again in a transaction when the store changed meanwhile:
	// kv/pg), seeing one snapshot each time; the run whose error View returns is the last.
	// So fn must set its results afresh on every run, as Batch's must, and do nothing it
	// could not do again before its last read of the transaction.
	View(ctx context.Context, fn func(Tx) error) error
	// Update runs fn in a read-write transaction, committed (durably) before it returns.
	Update(ctx context.Context, fn func(Tx) error) error
	// Batch is Update for callers that may be grouped into one commit with others; fn may
	// run more than once, so it must set its results afresh on every run. A call whose
	// context is done before its fn runs is left out of the commit, and answered with
	// ErrCanceled; a commit of several callers is stopped only when every one's context is
	// done.
	Batch(ctx context.Context, fn func(Tx) error) error
}

// Tx is one transaction.
type Tx interface {
	// Bucket is the top-level bucket name, or nil if there is none.
	Bucket(name []byte) Bucket
	// CreateBucketIfNotExists returns the top-level bucket name, making it if need be.
	CreateBucketIfNotExists(name []byte) (Bucket, error)
	// Writable tells whether this is a read-write transaction.
	Writable() bool
	// ForEachBucket calls fn for every top-level bucket's name, in order.
	ForEachBucket(fn func(name []byte) error) error
}

// Bucket is an ordered set of keys, each with a value or a nested bucket. Values returned
// are valid only until the transaction ends and must not be changed.
type Bucket interface {
	Get(key []byte) []byte
	Put(key, value []byte) error
	Delete(key []byte) error
	// Bucket is the nested bucket name, or nil if there is none.
	Bucket(name []byte) Bucket
	CreateBucketIfNotExists(name []byte) (Bucket, error)
	// DeleteBucket removes the nested bucket name and everything in it; it returns
	// ErrBucketNotFound when there is none.
	DeleteBucket(name []byte) error
	Cursor() Cursor
	// ForEach calls fn for every key in order; v is nil for a nested bucket.
	ForEach(fn func(k, v []byte) error) error
	// ForEachBucket calls fn for every nested bucket's name, in order.
	ForEachBucket(fn func(name []byte) error) error
	// KeyN counts the keys (values and nested buckets) of this bucket and of every bucket
	// nested in it, as bbolt's Stats().KeyN does. It may read the whole bucket.
	KeyN() int
	// Tune tells the backend how full to pack pages when keys are mostly added in order;
	// backends without pages ignore it.
	Tune(fillPercent float64)
}

// Cursor walks a bucket in key order. Every move returns the key and value it lands on, or
// a nil key past either end; v is nil for a nested bucket.
type Cursor interface {
	First() (k, v []byte)
	Last() (k, v []byte)
	Next() (k, v []byte)
	Prev() (k, v []byte)
	// Seek lands on key, or on the first key after it.
	Seek(key []byte) (k, v []byte)
	// Delete removes the key the cursor is on.
	Delete() error
}

// Errors the backends share, so that callers can tell them apart whatever the store. A
// backend's error wraps one of these (and its own cause) and says in its message which
// store and what to do.
var (
	// ErrTxNotWritable is returned by writes in a read-only transaction.
	ErrTxNotWritable = errors.New("kv: write in a read-only transaction")
	// ErrIncompatibleValue is returned when a key holds a value where a bucket is wanted,
	// or a bucket where a value is.
	ErrIncompatibleValue = errors.New("kv: incompatible value")
	// ErrKeyRequired and ErrKeyTooLarge refuse keys bbolt would refuse too.
	ErrKeyRequired = errors.New("kv: key required")
	ErrKeyTooLarge = errors.New("kv: key too large")
	// ErrBucketNotFound is returned by DeleteBucket when there is no such bucket.
	ErrBucketNotFound = errors.New("kv: bucket not found")
	// ErrBusy is returned by a transaction (or by opening the store) when the store admits
	// one process at a time and another has held it for longer than this one waits: a
	// bbolt file another compass-mcp process has open. Trying again later may succeed.
	ErrBusy = errors.New("kv: the store is busy")
	// ErrDamaged is returned by a transaction that found the store's data damaged: a bbolt
	// file whose pages fault when read, a PostgreSQL database that reports corrupted data.
	// Only a backup brings back what was there; trying again doesn't help.
	ErrDamaged = errors.New("kv: the store is damaged")
	// ErrUnavailable wraps every failure to reach a store that is not local (a database
	// that is down or restarting, or did not answer in time). Trying again later may
	// succeed; a write that returned it may or may not have been committed.
	ErrUnavailable = errors.New("the database is unavailable")
	// ErrPanicked is returned (wrapped, with the panic's value) by a write whose function,
	// or whose commit, panicked: the panic is logged with its stack, that write is
	// answered, and the writes after it are not held up.
	ErrPanicked = errors.New("the write failed inside the server (a bug, logged)")
	// ErrNotEmpty is returned by Copy when the store to copy into already holds something.
	ErrNotEmpty = errors.New("the store to copy into is not empty")
	// ErrCanceled is wrapped, with the context's own error, by a transaction whose context
	// was done (the caller went away, or its deadline passed) before the transaction was: a
	// read returns nothing; a write that had not begun did nothing, one whose commit was
	// under way may or may not have been committed.
	ErrCanceled = errors.New("the call was canceled before the store answered")
)

// Canceled returns the error a transaction returns when ctx is done (its Err not nil):
// wrapping ErrCanceled and ctx.Err(), so that callers can tell either.
func Canceled(ctx context.Context) error {
	return fmt.Errorf("%w (%w)", ErrCanceled, ctx.Err())
}

// MaxKeySize is the longest key either backend takes (bbolt's limit).
const MaxKeySize = 32768

// Failure is what a backend panics with when a read inside a transaction cannot be done
// (a connection lost). View, Update and Batch turn it back into Err.
type Failure struct{ Err error }

func (f *Failure) Error() string { return fmt.Sprintf("kv failure: %v", f.Err) }

// Fail panics with a *Failure wrapping err.
func Fail(err error) { panic(&Failure{Err: err}) }

// Recover, deferred with the address of a function's error, turns a *Failure panic into
// that error and lets any other panic go on.
func Recover(err *error) {
	if p := recover(); p != nil {
		if f, ok := p.(*Failure); ok {
			*err = f.Err
			return
		}
		panic(p)
	}
}

// GetAller is a Bucket that reads many keys at once (PostgreSQL: those its transaction
// doesn't know yet, in one round trip).
type GetAller interface {
	GetAll(keys [][]byte) [][]byte
}

// GetAll returns what Get returns for each of keys, in their order: a key's value, or nil
// for a key b doesn't hold or that names a nested bucket. A backend that can reads them at
// once; on bbolt it is Get for each. The values are valid for the transaction's life and
// must not be changed, as Get's. On a nil b, all are nil. Like Get, it panics with *Failure
// when the backend cannot reach its data.
func GetAll(b Bucket, keys [][]byte) [][]byte {
	out := make([][]byte, len(keys))
	if b == nil || len(keys) == 0 {
		return out
	}
	if g, ok := b.(GetAller); ok {
		return g.GetAll(keys)
	}
	for i, k := range keys {
		out[i] = b.Get(k)
	}
	return out
}

// Changer is a DB that runs a read and the write it leads to as one call (see Change).
type Changer interface {
	Change(ctx context.Context, read func(Tx) (write bool, err error), write func(Tx) error) error
}

// Change runs read in a read-only transaction, as View does, and then, if read asks for it
// (write true, no error), write in a write transaction that may be shared with others, as
// Batch does. It is for a change worked out on a read (a diff, a merge: work that should not
// hold the write lock) and put by the write, which must check, in its own transaction, that
// what read saw still holds (that the document is still at the version read worked on),
// since another write may commit between the two. Both functions may run more than once, as
// View's and Batch's do.
//
// Because write checks it, read may see the store as it was at a recent commit, not the
// latest: a backend may serve it from what it last read, asking nothing (kv/pg: the cache,
// with no round trip), and check that it was current only when Change would return read's
// answer without writing (read's error, or nothing to write): then read runs again on the
// latest store if it was not. So what read found counts only through write, or once checked:
// Change returns nothing of a store older than the call.
func Change(ctx context.Context, db DB, read func(Tx) (write bool, err error), write func(Tx) error) error {
	if c, ok := db.(Changer); ok {
		return c.Change(ctx, read, write)
	}
	var w bool
	if err := db.View(ctx, func(tx Tx) (err error) { w, err = read(tx); return err }); err != nil || !w {
		return err
	}
	return db.Batch(ctx, write)
}
