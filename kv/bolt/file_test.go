package bolt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

func TestOpenWaitsThenSaysBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "folder", "c.db")
	held, err := Open(path, time.Second)
	if err != nil {
		t.Fatalf("creating the folder and the file: %v", err)
	}
	defer held.Close()
	start := time.Now()
	_, err = Open(path, 300*time.Millisecond)
	if !errors.Is(err, kv.ErrBusy) {
		t.Fatalf("a second open = %v, want kv.ErrBusy", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("waited %s for a 300 ms timeout", waited)
	}
}

// A File lets go of the data file when idle, so that another holder can have it, and
// takes it again when next used.
func TestFileLetsGoWhenIdle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	f, err := OpenFile(path, 200*time.Millisecond, 20*time.Millisecond) // the write refused below waits this long
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	put := func(k string) error {
		return f.Update(context.Background(), func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			return b.Put([]byte(k), []byte("v"))
		})
	}
	if err := put("one"); err != nil {
		t.Fatal(err)
	}
	other, err := Open(path, 500*time.Millisecond) // waits for f to let go, 20 ms after the put
	if err != nil {
		t.Fatalf("another holder after the idle time: %v", err)
	}
	if err := put("two"); !errors.Is(err, kv.ErrBusy) {
		t.Errorf("a write while another holds the file = %v, want kv.ErrBusy", err)
	}
	other.Close()
	if err := put("three"); err != nil {
		t.Fatal(err)
	}
	if n := f.Opens(); n < 2 {
		t.Errorf("the file was opened %d times, want it opened again after letting go", n)
	}
}

// Writes that arrive during a commit share the next one; a failing write gets its own
// error, and the others are committed without it. In a synctest bubble: synctest.Wait
// says when the other calls have joined the queue.
func TestBatchGroupsAndIsolatesFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.db")
		f, err := OpenFile(path, time.Second, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var runs atomic.Int64
		var first atomic.Bool
		refuse := errors.New("refused")
		var wg sync.WaitGroup
		errs := make([]error, 64)
		txOf := make([]atomic.Int64, len(errs)) // the transaction a call last ran in
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = f.Batch(context.Background(), func(tx kv.Tx) error {
					runs.Add(1)
					btx, _ := TxOf(tx)
					txOf[i].Store(int64(btx.ID()))
					if first.CompareAndSwap(false, true) {
						// The others arrive while this commit is under way: it goes on once
						// every other goroutine of the test waits, which is for its call's
						// answer, in kv.Batcher's queue.
						synctest.Wait()
					}
					if i%10 == 3 {
						return refuse
					}
					b, err := tx.CreateBucketIfNotExists([]byte("b"))
					if err != nil {
						return err
					}
					return b.Put([]byte(fmt.Sprint(i)), []byte("v"))
				})
			}()
		}
		wg.Wait()
		err = f.View(context.Background(), func(tx kv.Tx) error {
			b := tx.Bucket([]byte("b"))
			for i, e := range errs {
				stored := b.Get([]byte(fmt.Sprint(i))) != nil
				switch {
				case i%10 == 3 && (!errors.Is(e, refuse) || stored):
					t.Errorf("call %d: %v, stored %v; want refused and not stored", i, e, stored)
				case i%10 != 3 && (e != nil || !stored):
					t.Errorf("call %d: %v, stored %v; want stored", i, e, stored)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		commits := map[int64]int{}
		stored := 0
		for i := range errs {
			if errs[i] == nil {
				commits[txOf[i].Load()]++
				stored++
			}
		}
		// The first commit is one call's; those that arrived during it share what follows.
		if len(commits) > stored/2 {
			t.Errorf("%d stored calls took %d commits (%v); want the calls that arrive during a commit grouped", stored, len(commits), commits)
		}
		if runs.Load() <= int64(len(errs)) {
			t.Errorf("64 calls ran %d times; want the batches with a failing call run again without it", runs.Load())
		}

	})
}

// BenchmarkViewOpeningEachTime is what sharing the file between processes costs a call:
// opening and closing it around each transaction, against keeping it open.
func BenchmarkViewOpeningEachTime(b *testing.B) {
	for _, idle := range []time.Duration{0, time.Hour} {
		b.Run(fmt.Sprintf("idle=%s", idle), func(b *testing.B) {
			f, err := OpenFile(filepath.Join(b.TempDir(), "c.db"), time.Second, idle)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			for range b.N {
				if err := f.View(context.Background(), func(kv.Tx) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A write that panics is answered with an error wrapping kv.ErrPanicked; the batcher goes on
// serving the others.
func TestBatchSurvivesAPanic(t *testing.T) {
	f, err := OpenFile(filepath.Join(t.TempDir(), "c.db"), time.Second, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Batch(context.Background(), func(kv.Tx) error { panic("boom") }); !errors.Is(err, kv.ErrPanicked) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a panicking write = %v, want kv.ErrPanicked with its value", err)
	}
	done := make(chan error, 1)
	go func() { done <- f.Batch(context.Background(), func(kv.Tx) error { return nil }) }()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a Batch after a panicking one hangs")
	}
}
