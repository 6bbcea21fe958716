package pg_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/wait"
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

// PostgreSQL restarted (fast shutdown, then started again) under load from two replicas,
// each with writers and readers: every write acknowledged before, during or after it is in
// the store afterwards; every call in flight or begun while it is down answers at once with
// ErrUnavailable, which a client may retry (none hangs: each is bounded by the store's
// timeout, 3 s here); no read, after as before, misses a write acknowledged before it began
// (each replica's cache caught up through the change feed, or emptied); and each replica's
// cache works again after it. On a private cluster, as TestDatabaseRestart.
func TestRestartUnderLoad(t *testing.T) {
	c := kvtest.NewCluster(t)
	const timeout = 3 * time.Second
	dbs := []*pg.DB{open(t, c.URL, pg.WithTimeout(timeout)), open(t, c.URL, pg.WithTimeout(timeout))}
	if err := dbs[0].Update(context.Background(), func(tx kv.Tx) error { _, err := tx.CreateBucketIfNotExists([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	// acked[r] is the last write of writer r acknowledged: its keys w<r>-<i> for i ≤ it, and
	// last-<r> = it at least.
	const writers = 4
	var mu sync.Mutex
	acked := make([]int, writers)
	for i := range acked {
		acked[i] = -1
	}
	done := make([][]int, writers) // each writer's acknowledged writes
	var unavailable, slow, reads, stale int
	// The restart's steps, each closed by the test once it is over: the database down, the
	// database back.
	down, back, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	closed := func(ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	whileDown := 0 // writers and readers whose call begun while the database was down was answered unavailable
	// retry is what a writer or reader does once a call was answered unavailable, begun
	// while the database was down (wasDown) or not: as a client told to try again later, it
	// waits for the restart's next step.
	retry := func(wasDown bool) {
		var next chan struct{}
		switch {
		case wasDown:
			mu.Lock()
			whileDown++
			mu.Unlock()
			next = back
		case !closed(down):
			next = down // it failed as the database stopped: the next call begins while it is down
		default:
			return // begun before the database was down, or once it was back: again at once
		}
		select {
		case <-next:
		case <-stop:
		}
	}
	var wg sync.WaitGroup
	call := func(f func() error) error {
		start := time.Now()
		err := f()
		if d := time.Since(start); d > timeout+2*time.Second {
			mu.Lock()
			slow++
			mu.Unlock()
			t.Errorf("a call took %v (the store's timeout is %v)", d, timeout)
		}
		if err != nil {
			if !errors.Is(err, kv.ErrUnavailable) {
				t.Errorf("a call during the restart = %v, want nil or ErrUnavailable", err)
			}
			mu.Lock()
			unavailable++
			mu.Unlock()
		}
		return err
	}
	for w := range writers {
		db := dbs[w%2]
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				wasDown := closed(down) && !closed(back)
				err := call(func() error {
					return db.Update(context.Background(), func(tx kv.Tx) error {
						b := tx.Bucket([]byte("b"))
						if err := b.Put([]byte("w"+strconv.Itoa(w)+"-"+strconv.Itoa(i)), []byte("v"+strconv.Itoa(i))); err != nil {
							return err
						}
						return b.Put([]byte("last-"+strconv.Itoa(w)), []byte(strconv.Itoa(i)))
					})
				})
				if err == nil {
					mu.Lock()
					acked[w] = i
					done[w] = append(done[w], i)
					mu.Unlock()
				} else {
					retry(wasDown)
				}
			}
		})
	}
	for r := range 4 {
		db := dbs[r%2]
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				want := slices.Clone(acked) // acknowledged before the read begins
				mu.Unlock()
				got := make([]int, writers)
				wasDown := closed(down) && !closed(back)
				err := call(func() error {
					return db.View(context.Background(), func(tx kv.Tx) error {
						b := tx.Bucket([]byte("b"))
						for w := range writers {
							got[w] = -1
							if v := b.Get([]byte("last-" + strconv.Itoa(w))); v != nil {
								got[w], _ = strconv.Atoi(string(v))
							}
						}
						return nil
					})
				})
				if err != nil {
					retry(wasDown)
					continue
				}
				mu.Lock()
				reads++
				for w := range writers {
					if got[w] < want[w] {
						stale++
						t.Errorf("a read on replica %d saw writer %d's last write as %d, after %d was acknowledged", r%2, w, got[w], want[w])
					}
				}
				mu.Unlock()
			}
		})
	}
	// Each step waits for what the load did in the one before: every writer acknowledged
	// and every reader through a few calls, before the restart and after it; every one of
	// them answered unavailable while the database was down.
	progress := func() (each, all int) { // writes acknowledged of each writer at least; reads checked
		mu.Lock()
		defer mu.Unlock()
		each = len(done[0])
		for _, d := range done {
			each = min(each, len(d))
		}
		return each, reads
	}
	under := func(what string, each, all int) {
		t.Helper()
		wait.Until(t, time.Minute, what, func() bool { w, r := progress(); return w >= each && r >= all })
	}
	under("load before the restart: 5 writes of each writer and 20 reads acknowledged", 5, 20)
	c.Stop()
	close(down)
	wait.Until(t, time.Minute, "every writer and reader answered unavailable while the database was down", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return whileDown == writers+4
	})
	c.Start()
	close(back)
	w, r := progress()
	under("load after the restart: 5 more writes of each writer and 20 more reads acknowledged", w+5, r+20)
	close(stop)
	wg.Wait()
	n := 0
	for _, d := range done {
		n += len(d)
	}
	t.Logf("%d reads checked (%d stale), %d calls answered unavailable (%d begun while the database was down), %d slow; %d writes acknowledged", reads, stale, unavailable, whileDown, slow, n)
	if unavailable == 0 {
		t.Error("no call saw the database down: the restart was not under load")
	}
	// Every acknowledged write is there, on both replicas; and both caches serve again.
	for i, db := range dbs {
		for range 2 {
			err := db.View(context.Background(), func(tx kv.Tx) error {
				b := tx.Bucket([]byte("b"))
				for w := range writers {
					for _, j := range done[w] {
						if v := b.Get([]byte("w" + strconv.Itoa(w) + "-" + strconv.Itoa(j))); string(v) != "v"+strconv.Itoa(j) {
							t.Errorf("replica %d: writer %d's acknowledged write %d reads %q", i, w, j, v)
							return nil
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("replica %d after the restart: %v", i, err)
			}
		}
		if _, items := db.CacheStats(); items == 0 {
			t.Errorf("replica %d's cache holds nothing after the restart", i)
		}
	}
}
