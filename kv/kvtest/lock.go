package kvtest

// What the tests of a call that waits in PostgreSQL share: a URL whose connections
// pg_stat_activity tells apart, another replica holding the write lock, and a watch on the
// statements waiting for it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/wait"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/jackc/pgx/v5"
)

// Named is the PostgreSQL URL base with application_name set to prefix and a random suffix,
// and that name: pg_stat_activity tells the connections it opens from every other's.
func Named(t testing.TB, base, prefix string) (string, string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String(), name
}

// HoldWriteLock has db, another replica of a store, take the write lock (a write
// transaction's first round trip) and keep it until release is called, which returns that
// transaction's error. Release runs when t ends if the test hasn't called it.
func HoldWriteLock(t testing.TB, db kv.DB) (release func() error) {
	t.Helper()
	holding, let := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- db.Update(context.Background(), func(tx kv.Tx) error {
			if _, err := tx.CreateBucketIfNotExists([]byte("holder")); err != nil {
				return err
			}
			tx.Bucket([]byte("holder")).Get([]byte("x")) // the first round trip: BEGIN, the lock
			select {
			case <-holding: // a run again: the lock is held already
			default:
				close(holding)
			}
			<-let
			return nil
		})
	}()
	select {
	case <-holding:
	case err := <-held:
		t.Fatalf("taking the write lock: %v", err)
	}
	var err error
	released := false
	release = func() error {
		if !released {
			released = true
			close(let)
			err = <-held
		}
		return err
	}
	t.Cleanup(func() { release() })
	return release
}

// UntilLockWaits waits, at most 10 s, until the number of app's statements waiting on the
// write lock (in pg_stat_activity) is one want accepts; what names that state when it fails.
func UntilLockWaits(t testing.TB, app, what string, want func(int) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	watch, err := pgx.Connect(ctx, Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(context.Background())
	n := 0
	if !wait.For(10*time.Second, func() bool {
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND state = 'active' AND query LIKE '%pg_advisory_xact_lock%'`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return want(n)
	}) {
		t.Fatalf("after 10 s, still not %s: %d statements of %s wait on the write lock", what, n, app)
	}
}
