package kv_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
)

// A panic in the commit itself (bbolt's, not the caller's function: a data file whose
// freelist lists a live page made one) used to leave the batcher without a leader, and
// every later write unanswered for good. Every call of the batch is now answered with an
// error, and the next write works.
func TestPanicInTheCommitAnswersEveryCallAndTheNextWriteWorks(t *testing.T) {
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b kv.Batcher
	var panicking sync.Mutex // held: the commit panics
	update := func(ctx context.Context, fn func(kv.Tx) error) error {
		return bolt.Wrap(db).Update(ctx, func(tx kv.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			if !panicking.TryLock() {
				panic("commit failed")
			}
			panicking.Unlock()
			return nil
		})
	}
	panicking.Lock()
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { errs <- b.Do(context.Background(), update, func(kv.Tx) error { return nil }) })
	}
	wait(t, &wg, "writes during a panicking commit")
	close(errs)
	for err := range errs {
		if !errors.Is(err, kv.ErrPanicked) {
			t.Errorf("a write whose commit panicked = %v, want ErrPanicked", err)
		}
	}
	panicking.Unlock()
	wg.Go(func() {
		if err := b.Do(context.Background(), update, func(kv.Tx) error { return nil }); err != nil {
			t.Errorf("the write after: %v", err)
		}
	})
	wait(t, &wg, "the write after a panicking commit")
}

func wait(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still unanswered after 10 s", what)
	}
}
