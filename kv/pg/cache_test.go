package pg_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// Two replicas (two DBs on one schema), each with its cache of entries: what one commits,
// the other's next transaction sees, whatever its cache held; and a transaction sees one
// snapshot however the other replica writes meanwhile.

func put(t *testing.T, db kv.DB, kvs ...string) {
	t.Helper()
	if err := db.Update(context.Background(), func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		for i := 0; i < len(kvs); i += 2 {
			if kvs[i+1] == "" {
				if err := b.Delete([]byte(kvs[i])); err != nil {
					return err
				}
				continue
			}
			if err := b.Put([]byte(kvs[i]), []byte(kvs[i+1])); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// read returns what tx holds for keys, and its walk of bucket b ("k=v ...").
func read(tx kv.Tx, keys ...string) string {
	b := tx.Bucket([]byte("b"))
	if b == nil {
		return "no bucket"
	}
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf("%s:%q ", k, b.Get([]byte(k)))
	}
	s += "walk:"
	b.ForEach(func(k, v []byte) error { s += fmt.Sprintf(" %s=%s", k, v); return nil })
	c := b.Cursor()
	k, _ := c.Last()
	return s + fmt.Sprintf(" last=%s", k)
}

func viewRead(t *testing.T, db kv.DB, keys ...string) string {
	t.Helper()
	var s string
	if err := db.View(context.Background(), func(tx kv.Tx) error { s = read(tx, keys...); return nil }); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCacheOtherReplicaWrites(t *testing.T) {
	url := kvtest.URL(t)
	a, b := open(t, url), open(t, url)
	put(t, a, "j", "1", "k", "1")
	for range 2 { // warm a's cache: entries and cursor pages
		if got, want := viewRead(t, a, "j", "k", "x"), `j:"1" k:"1" x:"" walk: j=1 k=1 last=k`; got != want {
			t.Fatalf("a reads %s, want %s", got, want)
		}
	}
	if n, _ := a.CacheStats(); n == 0 {
		t.Fatal("a's cache is empty after two reads")
	}
	put(t, b, "k", "2", "x", "2", "j", "")
	want := `j:"" k:"2" x:"2" walk: k=2 x=2 last=x`
	if got := viewRead(t, a, "j", "k", "x"); got != want {
		t.Errorf("after b's write a reads %s, want %s", got, want)
	}
	// In a write transaction too.
	if err := a.Update(context.Background(), func(tx kv.Tx) error {
		if got := read(tx, "j", "k", "x"); got != want {
			t.Errorf("a's write transaction reads %s, want %s", got, want)
		}
		return tx.Bucket([]byte("b")).Put([]byte("y"), []byte("3"))
	}); err != nil {
		t.Fatal(err)
	}
	// a's own write is in a's cache, and b sees it.
	want = `j:"" k:"2" x:"2" y:"3" walk: k=2 x=2 y=3 last=y`
	for name, db := range map[string]kv.DB{"a": a, "b": b} {
		if got := viewRead(t, db, "j", "k", "x", "y"); got != want {
			t.Errorf("after a's write %s reads %s, want %s", name, got, want)
		}
	}
}

// A View of a whose first read the cache answered (no transaction: the counter alone),
// when b writes before its first miss: what it read may be older than what it would read
// now, so its function runs again, in a transaction, and sees b's write throughout.
func TestCacheStaleBeforeFirstMiss(t *testing.T) {
	url := kvtest.URL(t)
	a, b := open(t, url), open(t, url)
	put(t, a, "j", "1", "k", "1")
	viewRead(t, a, "k") // k, not j, in a's cache
	now := `j:"2" k:"2" walk: j=2 k=2 z=2 last=z`
	restarts := a.Restarts()
	var runs []string
	n := 0
	if err := a.View(context.Background(), func(tx kv.Tx) error {
		n++
		k := string(tx.Bucket([]byte("b")).Get([]byte("k")))
		if n == 1 {
			if k != "1" {
				t.Errorf("k = %q, want 1", k)
			}
			put(t, b, "j", "2", "k", "2", "z", "2")
			// A later View of a sees b's write (and moves the cache on).
			if got := viewRead(t, a, "j", "k"); got != now {
				t.Errorf("a's View begun after b's write reads %s, want %s", got, now)
			}
		}
		runs = append(runs, "k:"+k+" "+read(tx, "j", "k")) // j: the first miss
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{`k:2 ` + now}; n != 2 || !slices.Equal(runs, want) {
		t.Errorf("the View ran %d times; the runs that returned read %q, want 2 and %q", n, runs, want)
	}
	if got := a.Restarts() - restarts; got != 1 {
		t.Errorf("a counted %d restarts, want 1", got)
	}
	for range 2 {
		if got := viewRead(t, a, "j", "k"); got != now {
			t.Errorf("after the restarted View, a reads %s, want %s", got, now)
		}
	}
}

// A View of a whose first read missed is a transaction: it keeps its snapshot, from the
// cache or not, however b writes meanwhile, and runs once; what it reads from the database
// then (older than b's write) is not served to a's later transactions from the cache.
func TestCacheStaleMidTransaction(t *testing.T) {
	url := kvtest.URL(t)
	a, b := open(t, url), open(t, url)
	put(t, a, "j", "1", "k", "1")
	viewRead(t, a, "k")
	put(t, b, "q", "1") // not in a's cache: a has not caught up on b's write yet
	old := `j:"1" k:"1" walk: j=1 k=1 q=1 last=q`
	now := `j:"2" k:"2" walk: j=2 k=2 q=1 z=2 last=z`
	runs := 0
	restarts := a.Restarts()
	if err := a.View(context.Background(), func(tx kv.Tx) error {
		runs++
		if got := string(tx.Bucket([]byte("b")).Get([]byte("q"))); got != "1" {
			t.Errorf("q = %q, want 1", got) // a miss: the transaction has begun
		}
		if runs == 1 {
			put(t, b, "j", "2", "k", "2", "z", "2")
		}
		if got := viewRead(t, a, "j", "k"); got != now {
			t.Errorf("a's View begun after b's write reads %s, want %s", got, now)
		}
		if got := read(tx, "j", "k"); got != old {
			t.Errorf("a's View begun before b's write reads %s, want %s", got, old)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if runs != 1 || a.Restarts() != restarts {
		t.Errorf("a View begun as a transaction ran %d times (%d restarts)", runs, a.Restarts()-restarts)
	}
	for range 2 {
		if got := viewRead(t, a, "j", "k"); got != now {
			t.Errorf("after the old View read j, a reads %s, want %s", got, now)
		}
	}
}

// A write of this replica committed while another of its Views, served by the cache so
// far, is open: the View's next miss finds the counter moved, and its function runs again.
func TestCacheOwnWriteMidView(t *testing.T) {
	a := open(t, kvtest.URL(t))
	put(t, a, "k", "1")
	viewRead(t, a, "k")
	var runs []string
	n := 0
	if err := a.View(context.Background(), func(tx kv.Tx) error {
		n++
		k := string(tx.Bucket([]byte("b")).Get([]byte("k"))) // from the cache, at the count before the write
		if n == 1 {
			put(t, a, "k", "2", "m", "2")
		}
		runs = append(runs, "k:"+k+" "+read(tx, "k", "m"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{`k:2 k:"2" m:"2" walk: k=2 m=2 last=m`}; n != 2 || !slices.Equal(runs, want) {
		t.Errorf("the View ran %d times; the runs that returned read %q, want 2 and %q", n, runs, want)
	}
	if got, want := viewRead(t, a, "k", "m"), `k:"2" m:"2" walk: k=2 m=2 last=m`; got != want {
		t.Errorf("after the write a reads %s, want %s", got, want)
	}
}

// A bucket deleted by one replica is empty for the other, whose cache held its entries.
func TestCacheBucketDeletedByOtherReplica(t *testing.T) {
	url := kvtest.URL(t)
	a, b := open(t, url), open(t, url)
	sub := func(tx kv.Tx) kv.Bucket {
		if bk := tx.Bucket([]byte("b")); bk != nil {
			return bk.Bucket([]byte("sub"))
		}
		return nil
	}
	if err := a.Update(context.Background(), func(tx kv.Tx) error {
		bk, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		s, err := bk.CreateBucketIfNotExists([]byte("sub"))
		if err != nil {
			return err
		}
		return s.Put([]byte("k"), []byte("1"))
	}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := a.View(context.Background(), func(tx kv.Tx) error {
			if got := string(sub(tx).Get([]byte("k"))); got != "1" {
				t.Errorf("k = %q, want 1", got)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Update(context.Background(), func(tx kv.Tx) error { return tx.Bucket([]byte("b")).DeleteBucket([]byte("sub")) }); err != nil {
		t.Fatal(err)
	}
	if err := a.View(context.Background(), func(tx kv.Tx) error {
		if s := sub(tx); s != nil && s.Get([]byte("k")) != nil {
			t.Errorf("a reads k of a bucket b deleted")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// The contract holds with the cache off, and with one so small it keeps almost nothing.
func TestContractCacheSizes(t *testing.T) {
	for _, size := range []int{0, 4 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			kvtest.Run(t, func(t *testing.T) kv.DB { return open(t, kvtest.URL(t), pg.WithCache(size)) })
		})
	}
}
