package datafile

import (
	"fmt"
	"sync"

	"go.etcd.io/bbolt"
)

// batcher commits the writes that arrive while a commit is under way together, in the
// next transaction: one fsync pays for all of them. A write that arrives when nothing is
// being committed starts at once (bbolt's own Batch waits up to 10 ms for company first,
// which a lone stdio client would pay on every write).
type batcher struct {
	mu      sync.Mutex
	queue   []*batchCall
	running bool
}

type batchCall struct {
	fn   func(*bbolt.Tx) error
	done chan error
}

// do runs fn in a write transaction shared with whatever else is queued. update runs one
// write transaction (it is the file's Update, which may open the file).
func (b *batcher) do(update func(func(*bbolt.Tx) error) error, fn func(*bbolt.Tx) error) error {
	c := &batchCall{fn: fn, done: make(chan error, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	lead := !b.running
	b.running = true
	b.mu.Unlock()
	if lead {
		b.lead(update)
	}
	err := <-c.done
	if p, ok := err.(panicked); ok {
		panic(p.value) // in the caller's goroutine, where its own recover can log it
	}
	return err
}

// panicked carries a call's panic to its caller, so that one panicking write neither
// takes down the leader that ran it nor leaves the queue without one.
type panicked struct{ value any }

func (p panicked) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// run calls fn, turning a panic into a panicked error.
func run(fn func(*bbolt.Tx) error, tx *bbolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicked{p}
		}
	}()
	return fn(tx)
}

// lead commits batches until the queue is empty.
func (b *batcher) lead(update func(func(*bbolt.Tx) error) error) {
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
// (bbolt has no savepoints), the failing call is run alone to give it its own answer, and
// the others are committed again without it. A call's fn may so run more than once: fns
// must set their results afresh on every run.
func commit(update func(func(*bbolt.Tx) error) error, calls []*batchCall) {
	for len(calls) > 0 {
		failed := -1
		err := update(func(tx *bbolt.Tx) error {
			for i, c := range calls {
				if err := run(c.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed < 0 {
			for _, c := range calls {
				c.done <- err // nil, or a commit failure that is every call's
			}
			return
		}
		lone := calls[failed]
		lone.done <- update(func(tx *bbolt.Tx) error { return run(lone.fn, tx) })
		calls = append(calls[:failed:failed], calls[failed+1:]...)
	}
}
