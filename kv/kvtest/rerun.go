package kvtest

import (
	"context"
	"errors"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
)

// rerun is the tests' bbolt store: a bolt.File that runs every function given to View or
// Batch twice, as PostgreSQL may (kv.DB: a View that found the store moved under its cache
// runs again; a Batch whose commit lost the count, or whose group failed, runs again), so
// that a function that appends to, or counts into, what its caller holds fails the first
// `go test` on a laptop, not only the PostgreSQL run. kv.Change, on bbolt a View and a Batch,
// runs each twice. Update's function runs once, as the backends promise.
//
// A View's function runs twice in one snapshot; a Batch's first run is in a write
// transaction rolled back after it, its second in the Batch. A first run that fails ends
// the call with its error, as a run that fails does on every backend. Only openFile uses
// it: the product's stores never run a function twice on bbolt.
type rerun struct{ *bolt.File }

// errFirstRun rolls back a Batch's first run.
var errFirstRun = errors.New("kvtest: the first of a function's two runs")

func (r rerun) View(ctx context.Context, fn func(kv.Tx) error) error {
	return r.File.View(ctx, func(tx kv.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return fn(tx)
	})
}

func (r rerun) Batch(ctx context.Context, fn func(kv.Tx) error) error {
	err := r.File.Update(ctx, func(tx kv.Tx) (err error) {
		defer func() {
			if recover() != nil {
				err = errFirstRun // the Batch's run panics again, and is answered as it is in the product
			}
		}()
		if err := fn(tx); err != nil {
			return err
		}
		return errFirstRun
	})
	if !errors.Is(err, errFirstRun) {
		return err
	}
	return r.File.Batch(ctx, fn)
}
