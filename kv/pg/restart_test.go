package pg_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// A database that stops answers every transaction with ErrUnavailable at once (no hang);
// when it is back, the next transactions work and the change feed listens again, with no
// restart of the store. On a private cluster: the shared one is never restarted.
func TestDatabaseRestart(t *testing.T) {
	c := kvtest.NewCluster(t)
	db := open(t, c.URL+"?pool_max_conns=4", pg.WithTimeout(3*time.Second))
	other := open(t, c.URL) // another replica
	ch := db.Changes(t.Context())
	write := func(db *pg.DB, i int) error {
		return db.Update(context.Background(), func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			return b.Put([]byte(strconv.Itoa(i)), []byte("v"))
		})
	}
	if err := write(db, 0); err != nil {
		t.Fatal(err)
	}
	// Fill the pool (pool_max_conns=4 in the URL): 4 connections at once, all of which the
	// restart kills.
	var wg sync.WaitGroup
	var together sync.WaitGroup
	together.Add(4)
	for range 4 {
		wg.Go(func() {
			err := db.View(context.Background(), func(tx kv.Tx) error {
				tx.Bucket([]byte("b")).Get([]byte("0"))
				together.Done()
				together.Wait()
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	c.Stop()
	start := time.Now()
	err := write(db, 100)
	t.Logf("a write while the database is down: %v", err)
	if !errors.Is(err, kv.ErrUnavailable) {
		t.Errorf("a write while the database is down = %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a write while the database is down took %v", d)
	}
	if err := db.View(context.Background(), func(tx kv.Tx) error { tx.Bucket([]byte("b")).Get([]byte("0")); return nil }); !errors.Is(err, kv.ErrUnavailable) {
		t.Errorf("a read while the database is down = %v, want ErrUnavailable", err)
	}
	c.Start()
	// Every connection the pool had is dead: the very next transactions must work.
	for i := range 8 {
		wg.Go(func() {
			if err := write(db, 200+i); err != nil {
				t.Errorf("write %d after the restart: %v", i, err)
			}
		})
	}
	wg.Wait()
	drain(ch)
	// The listener made its connection again: another replica's commit reaches it.
	deadline := time.After(15 * time.Second)
	for i := 0; ; i++ {
		if err := write(other, 300+i); err != nil {
			t.Fatalf("the other replica's write after the restart: %v", err)
		}
		select {
		case <-ch:
			return
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			t.Fatal("no change signal 15 s after the database came back")
		}
	}
}
