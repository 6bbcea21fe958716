package kv

import (
	"context"
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
	ctx  context.Context
	fn   func(Tx) error
	done chan error
}

// Do runs fn in a write transaction shared with whatever else is queued. update runs one
// write transaction (it is the file's Update, which may open the file) for the context it
// is given: the group's, done only when every call's is. A call whose context is done
// before its fn runs is answered with Canceled and left out of the commit; once its fn has
// run in a commit, it waits for that commit's answer.
func (b *Batcher) Do(ctx context.Context, update func(context.Context, func(Tx) error) error, fn func(Tx) error) error {
	if ctx.Err() != nil {
		return Canceled(ctx)
	}
	c := &batchCall{ctx: ctx, fn: fn, done: make(chan error, 1)}
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

// run calls c's fn, turning a panic into an error wrapping ErrPanicked; a call whose
// context is done is not run, and fails with Canceled.
func run(c *batchCall, tx Tx) (err error) {
	if c.ctx.Err() != nil {
		return Canceled(c.ctx)
	}
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(*Failure); ok || IsFault(p) {
				panic(p) // the store's: its View and Update say what went wrong
			}
			err = PanicError(p)
		}
	}()
	return c.fn(tx)
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
func safeUpdate(ctx context.Context, update func(context.Context, func(Tx) error) error, fn func(Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if f, ok := p.(*Failure); ok {
				err = f.Err
				return
			}
			err = PanicError(p)
		}
	}()
	return update(ctx, fn)
}

// lead commits batches until the queue is empty.
func (b *Batcher) lead(update func(context.Context, func(Tx) error) error) {
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

// commit runs calls in one transaction. A call whose context is done by its turn is left
// out of it and answered Canceled once it ends. When one fails, the transaction is rolled
// back (bbolt has no savepoints), the failing call is run alone to give it its own answer
// (a call that was alone has it already), and the others are committed again without it.
// A call's fn may so run more than once: fns must set their results afresh on every run.
func commit(update func(context.Context, func(Tx) error) error, calls []*batchCall) {
	for len(calls) > 0 {
		failed := -1
		left := make([]bool, len(calls)) // calls whose context was done before their turn
		ctx, stop := groupContext(calls)
		err := safeUpdate(ctx, update, func(tx Tx) error {
			failed = -1 // update may run this more than once (PostgreSQL's optimistic Batch)
			clear(left)
			for i, c := range calls {
				if len(calls) > 1 && c.ctx.Err() != nil {
					left[i] = true // left out, the others committed: no rollback for it
					continue
				}
				if err := run(c, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		stop()
		if failed < 0 || len(calls) == 1 {
			for i, c := range calls {
				if left[i] {
					c.done <- Canceled(c.ctx)
				} else {
					c.done <- err // nil, a commit failure that is every call's, or the lone call's
				}
			}
			return
		}
		lone := calls[failed]
		lone.done <- safeUpdate(lone.ctx, update, func(tx Tx) error { return run(lone, tx) })
		calls = append(calls[:failed:failed], calls[failed+1:]...)
	}
}

// groupContext is the context of a commit of calls: a lone call's own, or, for several, one
// done when every call's is (a commit that some still wait for goes on), carrying none of
// their values. stop releases what watches them.
func groupContext(calls []*batchCall) (context.Context, func()) {
	if len(calls) == 1 {
		return calls[0].ctx, func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu    sync.Mutex
		left  = len(calls)
		stops = make([]func() bool, 0, len(calls))
	)
	for _, c := range calls {
		stops = append(stops, context.AfterFunc(c.ctx, func() {
			mu.Lock()
			defer mu.Unlock()
			if left--; left == 0 {
				cancel()
			}
		}))
	}
	return ctx, func() {
		for _, s := range stops {
			s()
		}
		cancel()
	}
}
