package bolt

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"github.com/compass-mcp/compass-mcp/kv"
)

// File is a data file that this process holds only while it uses it: it is opened (waiting
// at most the lock timeout for another process) when a transaction starts, and closed once
// no transaction has run for the idle time. Two processes (Claude Desktop and an editor,
// each starting compass-mcp on the default file) so take turns instead of one being locked
// out, at the cost of opening the file again after each idle spell.
//
// # Caveats
//
// A process that keeps the file busy without a pause longer than the idle time holds it
// for as long as that lasts; another process waits at most its timeout, then gets an error
// wrapping kv.ErrBusy.
type File struct {
	path    string
	timeout time.Duration
	idle    time.Duration

	mu     sync.Mutex
	db     *bbolt.DB
	users  int         // transactions in flight on db
	timer  *time.Timer // closes db when it has been idle long enough
	closed bool
	idleC  *sync.Cond // signalled when users drops to 0
	opens  int        // how many times the file was opened, for tests and measurements
	batch  kv.Batcher
	reopen bool // a transaction panicked: close db once no transaction uses it
}

// DefaultIdle is how long a File stays open after its last transaction: long enough to
// span one tool call's few transactions, short enough that another process barely waits.
const DefaultIdle = 25 * time.Millisecond

// OpenFile returns the data file at path, held only while in use. It opens the file once to
// create it (and its folder) and check it can be had, then lets go of it.
func OpenFile(path string, timeout, idle time.Duration) (*File, error) {
	f := &File{path: path, timeout: timeout, idle: idle}
	f.idleC = sync.NewCond(&f.mu)
	if err := f.View(context.Background(), func(kv.Tx) error { return nil }); err != nil {
		return nil, err
	}
	return f, nil
}

// Path is where the file is.
func (f *File) Path() string { return f.path }

// Opens tells how many times the file has been opened so far.
func (f *File) Opens() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opens
}

func (f *File) acquire() (*bbolt.DB, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, fmt.Errorf("the data file %s is closed", f.path)
	}
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	if f.db == nil {
		db, err := Open(f.path, f.timeout)
		if err != nil {
			return nil, err
		}
		f.db = db
		f.opens++
	}
	f.users++
	return f.db, nil
}

func (f *File) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users--
	if f.users > 0 || f.db == nil {
		return
	}
	f.idleC.Broadcast()
	if f.idle <= 0 || f.closed || f.reopen {
		f.reopen = false
		f.closeLocked()
		return
	}
	db := f.db
	f.timer = time.AfterFunc(f.idle, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.users == 0 && f.db == db {
			f.closeLocked()
		}
	})
}

func (f *File) closeLocked() {
	if f.db != nil {
		f.db.Close()
		f.db = nil
	}
}

// with runs run on the open file. A fault while it touches the file's pages, or any
// panic (a damaged file can make bbolt index out of range as well as read outside its
// map), is returned as an error: one wrapping kv.ErrDamaged and naming the file for a
// fault, one wrapping kv.ErrPanicked otherwise. The file is then closed once no transaction
// uses it, so that the next one maps it afresh rather than trusting bbolt's state after a
// panic.
//
// Why this and not a check at open: bbolt's Check reads every page (seconds on a large
// file, and a File opens the file again after every idle spell), and it calls a file with
// a leaf's value size flipped clean: that damage shows only when the value is read or
// copied. debug.SetPanicOnFault turns the fault of reading outside the map into a panic
// this goroutine can recover, so the server says what is wrong and goes on serving what
// it still can, instead of dying with "fatal error: fault" on every start.
//
// ctx is looked at before the transaction begins, and again once the file is had (opening
// it may have waited for another process): bbolt works in memory and on its file, with no
// statement to stop half way.
func (f *File) with(ctx context.Context, run func(*bbolt.DB) error) (err error) {
	if ctx.Err() != nil {
		return kv.Canceled(ctx)
	}
	db, err := f.acquire()
	if err != nil {
		return err
	}
	defer f.release()
	if ctx.Err() != nil {
		return kv.Canceled(ctx)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			f.mu.Lock()
			f.reopen = true
			f.mu.Unlock()
			err = damaged(f.path, p)
		}
	}()
	return run(db)
}

// View runs fn in a read-only transaction, opening the file if this process doesn't hold it.
func (f *File) View(ctx context.Context, fn func(kv.Tx) error) error {
	return f.with(ctx, func(db *bbolt.DB) error { return db.View(func(tx *bbolt.Tx) error { return fn(boltTx{tx}) }) })
}

// Update runs fn in a read-write transaction, opening the file if need be.
func (f *File) Update(ctx context.Context, fn func(kv.Tx) error) error {
	return f.with(ctx, func(db *bbolt.DB) error { return db.Update(func(tx *bbolt.Tx) error { return fn(boltTx{tx}) }) })
}

// Batch runs fn in a read-write transaction that may be committed with others' that arrive
// while another commit is under way (see kv.Batcher). fn may run more than once.
func (f *File) Batch(ctx context.Context, fn func(kv.Tx) error) error {
	return f.batch.Do(ctx, f.Update, fn)
}

// Close lets go of the file for good, waiting for transactions in flight to end.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.timer != nil {
		f.timer.Stop()
	}
	for f.users > 0 {
		f.idleC.Wait()
	}
	if f.db == nil {
		return nil
	}
	err := f.db.Close()
	f.db = nil
	return err
}

// damagedError is kv.ErrDamaged, said of the data file: reading its pages faulted.
type damagedError struct {
	path  string
	fault any
}

func (e *damagedError) Error() string {
	return fmt.Sprintf("the data file is damaged: %s (reading it faulted: %v): restore it from a backup (compass-mcp backup makes one) or move it aside", e.path, e.fault)
}

func (e *damagedError) Unwrap() error { return kv.ErrDamaged }

// damaged turns a recovered panic of a transaction into the error it answers.
func damaged(path string, p any) error {
	if kv.IsFault(p) {
		slog.Error("the data file is damaged", "path", path, "fault", p)
		return &damagedError{path, p}
	}
	return kv.PanicError(p)
}
