package pg_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// One token key moves about bucket b (delete at one place, put at another, one commit);
// readers on the same replica check, in each snapshot, that there is exactly one.
func TestCacheOneToken(t *testing.T) {
	url := kvtest.URL(t)
	a, other := open(t, url), open(t, url)
	keyAt := func(i int) []byte { return []byte(fmt.Sprintf("k%02d", i)) }
	if err := a.Update(func(tx kv.Tx) error {
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
			err = db.Batch(fn)
		} else {
			err = db.Update(fn)
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
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for !stop.Load() {
				move(a, r, w == 1)
			}
		})
	}
	wg.Go(func() {
		r := rand.New(rand.NewPCG(9, 1))
		for !stop.Load() {
			move(other, r, false)
			time.Sleep(20 * time.Millisecond)
		}
	})
	var fails atomic.Int64
	for rd := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(rd), 2))
			for !stop.Load() {
				var err error
				if rd%2 == 0 {
					var cerr error
					err = a.View(func(tx kv.Tx) error { cerr = check(tx, r); return nil })
					if err == nil {
						err = cerr
					}
				} else {
					var cerr error
					err = kv.Change(a, func(tx kv.Tx) (bool, error) { cerr = check(tx, r); return false, nil }, func(kv.Tx) error { return nil })
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
	time.Sleep(8 * time.Second)
	stop.Store(true)
	wg.Wait()
}
