package pg_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// One token key moves about bucket b (delete at one place, put at another, one commit);
// readers on the same replica check, in each snapshot, that there is exactly one.
func TestCacheOneToken(t *testing.T) {
	url := kvtest.URL(t)
	a, other := open(t, url), open(t, url)
	keyAt := func(i int) []byte { return []byte(fmt.Sprintf("k%02d", i)) }
	if err := a.Update(context.Background(), func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		return b.Put(keyAt(0), []byte("t"))
	}); err != nil {
		t.Fatal(err)
	}
	move := func(db kv.DB, r *rand.Rand, batch bool) {
		fn := func(tx kv.Tx) error {
			b := tx.Bucket([]byte("b"))
			k, _ := b.Cursor().Seek([]byte("k"))
			if k == nil {
				return fmt.Errorf("no token")
			}
			k = bytes.Clone(k)
			if err := b.Delete(k); err != nil {
				return err
			}
			return b.Put(keyAt(r.IntN(40)), []byte("t"))
		}
		var err error
		if batch {
			err = db.Batch(context.Background(), fn)
		} else {
			err = db.Update(context.Background(), fn)
		}
		if err != nil {
			t.Error(err)
		}
	}
	check := func(tx kv.Tx, r *rand.Rand) error {
		b := tx.Bucket([]byte("b"))
		n := 0
		var tok []byte
		for i := range 40 {
			if v := b.Get(keyAt(i)); v != nil {
				n++
				tok = keyAt(i)
			}
		}
		if n != 1 {
			return fmt.Errorf("%d tokens by Get", n)
		}
		for range 5 {
			i := r.IntN(41)
			k, _ := b.Cursor().Seek(keyAt(i))
			want := tok
			if bytes.Compare(keyAt(i), tok) > 0 {
				want = nil
			}
			if !bytes.Equal(k, want) {
				return fmt.Errorf("Seek %s = %s, token %s", keyAt(i), k, tok)
			}
		}
		return nil
	}
	// The writers move the token moves times in all, the other replica once for every ten
	// of this replica's moves; the readers check until the writers are done. Counted, not
	// timed: a busy machine makes the run longer, never thinner. COMPASS_TOKEN_MOVES gives a
	// longer run.
	moves := 1000
	if n, err := strconv.Atoi(os.Getenv("COMPASS_TOKEN_MOVES")); err == nil && n > 0 {
		moves = n
	}
	var (
		moved   atomic.Int64
		writers sync.WaitGroup
		others  sync.WaitGroup
		tenth   = make(chan struct{}, 1) // a's tenth move since the other replica's last
		done    = make(chan struct{})    // closed once the writers are done
	)
	for w := range 3 {
		writers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for n := moved.Add(1); n <= int64(moves); n = moved.Add(1) {
				move(a, r, w == 1)
				if n%10 == 0 {
					select {
					case tenth <- struct{}{}:
					default:
					}
				}
			}
		})
	}
	others.Go(func() {
		r := rand.New(rand.NewPCG(9, 1))
		for {
			select {
			case <-tenth:
				move(other, r, false)
			case <-done:
				return
			}
		}
	})
	var fails atomic.Int64
	for rd := range 4 {
		others.Go(func() {
			r := rand.New(rand.NewPCG(uint64(rd), 2))
			for {
				select {
				case <-done:
					return
				default:
				}
				var err error
				if rd%2 == 0 {
					var cerr error
					err = a.View(context.Background(), func(tx kv.Tx) error { cerr = check(tx, r); return nil })
					if err == nil {
						err = cerr
					}
				} else {
					var cerr error
					err = kv.Change(context.Background(), a, func(tx kv.Tx) (bool, error) { cerr = check(tx, r); return false, nil }, func(kv.Tx) error { return nil })
					if err == nil {
						err = cerr
					}
				}
				if err != nil && fails.Add(1) <= 5 {
					t.Errorf("reader %d: %v", rd, err)
				}
			}
		})
	}
	writers.Wait()
	close(done)
	others.Wait()
}
