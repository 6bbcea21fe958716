package kv

import (
	"context"
	"errors"
	"testing"
)

// A call of a group whose context is done by its turn is left out of the group's commit:
// the others are committed in that one transaction, with no rollback and no second commit
// for them, and it is answered ErrCanceled.
func TestCanceledCallLeftOutOfItsGroupsCommit(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	var ran []string
	call := func(ctx context.Context, name string) *batchCall {
		return &batchCall{ctx: ctx, done: make(chan error, 1), fn: func(Tx) error { ran = append(ran, name); return nil }}
	}
	calls := []*batchCall{call(context.Background(), "first"), call(canceled, "canceled"), call(context.Background(), "last")}
	transactions := 0
	commit(func(_ context.Context, fn func(Tx) error) error { transactions++; return fn(nil) }, calls)
	if transactions != 1 || len(ran) != 2 || ran[0] != "first" || ran[1] != "last" {
		t.Errorf("%d transactions ran %q, want one that ran first and last", transactions, ran)
	}
	for i, want := range []error{nil, ErrCanceled, nil} {
		if got := <-calls[i].done; !errors.Is(got, want) || (want == nil) != (got == nil) {
			t.Errorf("call %d answered %v, want %v", i, got, want)
		}
	}
}
