package kvtest

// The contract's Canceled case: a transaction for a context that is done does nothing.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// A transaction whose context is done before it begins runs nothing and returns an error
// wrapping kv.ErrCanceled and the context's own; a Batch call whose context ends while it
// waits behind another commit is left out of the next one, and the calls beside it are
// committed; a deadline already past is said as context.DeadlineExceeded.
func testCanceled(t *testing.T, db kv.DB) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	fn := func(kv.Tx) error { ran = true; return nil }
	for what, err := range map[string]error{
		"View":   db.View(ctx, fn),
		"Update": db.Update(ctx, fn),
		"Batch":  db.Batch(ctx, fn),
		"Change": kv.Change(ctx, db, func(kv.Tx) (bool, error) { ran = true; return true, nil }, fn),
	} {
		if !errors.Is(err, kv.ErrCanceled) || !errors.Is(err, context.Canceled) {
			t.Errorf("%s on a canceled context = %v, want kv.ErrCanceled and context.Canceled", what, err)
		}
	}
	if ran {
		t.Error("a transaction on a canceled context ran its function")
	}
	past, stop := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer stop()
	if err := db.View(past, fn); !errors.Is(err, kv.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("View past its deadline = %v, want kv.ErrCanceled and context.DeadlineExceeded", err)
	}

	// A Batch call canceled while it waits behind a commit under way.
	holding, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		must(t, db.Batch(context.Background(), func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists(name)
			if err != nil {
				return err
			}
			select {
			case <-holding: // a run again (kv.DB.Batch's fn may run more than once)
			default:
				close(holding)
				<-release
			}
			return b.Put([]byte("first"), []byte("1"))
		}))
	})
	<-holding
	waiting, give := context.WithCancel(context.Background())
	var canceledErr, besideErr error
	var queued sync.WaitGroup
	queued.Go(func() {
		canceledErr = db.Batch(waiting, func(tx kv.Tx) error {
			return tx.Bucket(name).Put([]byte("canceled"), []byte("1"))
		})
	})
	queued.Go(func() {
		besideErr = db.Batch(context.Background(), func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists(name)
			if err != nil {
				return err
			}
			return b.Put([]byte("beside"), []byte("1"))
		})
	})
	give()
	close(release)
	wg.Wait()
	queued.Wait()
	if besideErr != nil {
		t.Errorf("the Batch beside a canceled one: %v", besideErr)
	}
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if b.Get([]byte("first")) == nil || b.Get([]byte("beside")) == nil {
			t.Error("a Batch beside a canceled one was not committed")
		}
		// The canceled call was queued before its context ended or after: either it was
		// committed and answered so, or it was left out and answered kv.ErrCanceled.
		switch got := b.Get([]byte("canceled")) != nil; {
		case got && canceledErr != nil:
			t.Errorf("a Batch answered %v was committed", canceledErr)
		case !got && !errors.Is(canceledErr, kv.ErrCanceled):
			t.Errorf("a Batch left out of the commit answered %v, want kv.ErrCanceled", canceledErr)
		}
		return nil
	})
}
