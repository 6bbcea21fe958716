package kv

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
)

// Batcher commits the writes that arrive while a commit is under way together, in the
// next transaction: one fsync pays for all of them. A write that arrives when nothing is
// being committed starts at once (bbolt's own Batch waits up to 10 ms for company first,
// which a lone stdio client would pay on every write).
type Batcher struct {
	mu      sync.Mutex
	queue   []*batchCall
	running bool
}

type batchCall struct {
	fn   func(Tx) error
	done chan error
}

// Do runs fn in a write transaction shared with whatever else is queued. update runs one
// write transaction (it is the file's Update, which may open the file).
func (b *Batcher) Do(update func(func(Tx) error) error, fn func(Tx) error) error {
	c := &batchCall{fn: fn, done: make(chan error, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	lead := !b.running
	b.running = true
	b.mu.Unlock()
	if lead {
		b.lead(update)
	}
	return <-c.done
}

// run calls fn, turning a panic into an error wrapping ErrPanicked.
func run(fn func(Tx) error, tx Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(*Failure); ok || IsFault(p) {
				panic(p) // the store's: its View and Update say what went wrong
			}
			err = PanicError(p)
		}
	}()
	return fn(tx)
}

// IsFault reports whether a recovered panic is a memory fault (with debug.SetPanicOnFault).
func IsFault(p any) bool {
	var fault interface{ Addr() uintptr }
	err, ok := p.(error)
	return ok && errors.As(err, &fault)
}

// PanicError logs a recovered panic with its stack and returns it as an error wrapping
// ErrPanicked.
func PanicError(p any) error {
	slog.Error("a write panicked", "panic", p, "stack", string(debug.Stack()))
	return fmt.Errorf("%w: %v", ErrPanicked, p)
}

// safeUpdate runs update(fn), turning a panic outside the callers' functions (in bbolt's
// commit, say) into an error for every call of the batch, so that no call is left
// unanswered and the batcher keeps a leader.
func safeUpdate(update func(func(Tx) error) error, fn func(Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if f, ok := p.(*Failure); ok {
				err = f.Err
				return
			}
			err = PanicError(p)
		}
	}()
	return update(fn)
}

// lead commits batches until the queue is empty.
func (b *Batcher) lead(update func(func(Tx) error) error) {
	for {
		b.mu.Lock()
		calls := b.queue
		b.queue = nil
		if len(calls) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		commit(update, calls)
	}
}

// commit runs calls in one transaction. When one fails, the transaction is rolled back
// (bbolt has no savepoints), the failing call is run alone to give it its own answer (a
// call that was alone has it already), and the others are committed again without it. A call's fn may so run more than once: fns
// must set their results afresh on every run.
func commit(update func(func(Tx) error) error, calls []*batchCall) {
	for len(calls) > 0 {
		failed := -1
		err := safeUpdate(update, func(tx Tx) error {
			failed = -1 // update may run this more than once (PostgreSQL's optimistic Batch)
			for i, c := range calls {
				if err := run(c.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed < 0 || len(calls) == 1 {
			for _, c := range calls {
				c.done <- err // nil, a commit failure that is every call's, or the lone call's
			}
			return
		}
		lone := calls[failed]
		lone.done <- safeUpdate(update, func(tx Tx) error { return run(lone.fn, tx) })
		calls = append(calls[:failed:failed], calls[failed+1:]...)
	}
}
