package pg_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/pgproxy"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// viaProxy opens a replica on url through a proxy that counts its round trips.
func viaProxy(t *testing.T, url string) (*pg.DB, *pgproxy.Proxy) {
	t.Helper()
	proxy, via := pgproxy.In(t, url, 0)
	return open(t, via), proxy
}

// seek is where a cursor of bucket b lands seeking k, as "key=value", or "" at the end.
func seek(t *testing.T, db kv.DB, k string) string {
	t.Helper()
	var s string
	if err := db.View(context.Background(), func(tx kv.Tx) error {
		if key, v := tx.Bucket([]byte("b")).Cursor().Seek([]byte(k)); key != nil {
			s = string(key) + "=" + string(v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// What a replica learnt around a key it read (gaps.go) answers, with no round trip but the
// View's own, a Get or a Seek near it; the replica's own commits keep it true, and another
// replica's commit makes the replica ask again. Each answer is checked against b's, a replica
// with no cache.
func TestGaps(t *testing.T) {
	url := kvtest.URL(t)
	a, proxy := viaProxy(t, url)
	b := open(t, url, pg.WithCache(0))
	put(t, b, "d", "4", "h", "8", "p", "16")
	// trips: 1 for what the cache answers (the View's count: the fewer of two runs, as the
	// pool may ping a connection first), 0 for what must ask (2 or more: a miss's View is a
	// transaction, rolled back after).
	check := func(what string, trips int64, f func(db kv.DB) string) {
		t.Helper()
		before := proxy.RoundTrips()
		got := f(a)
		n := proxy.RoundTrips() - before
		if trips > 0 {
			before = proxy.RoundTrips()
			if again := f(a); again != got {
				t.Errorf("%s = %q, then %q", what, got, again)
			}
			n = min(n, proxy.RoundTrips()-before)
		}
		if trips > 0 && n != trips || trips == 0 && n < 2 {
			t.Errorf("%s: %d round trips, want %d", what, n, max(trips, 2))
		}
		if want := f(b); got != want {
			t.Errorf("%s = %q, want %q", what, got, want)
		}
	}
	get := func(k string) func(db kv.DB) string {
		return func(db kv.DB) string {
			var v []byte
			if err := db.View(context.Background(), func(tx kv.Tx) error { v = tx.Bucket([]byte("b")).Get([]byte(k)); return nil }); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("%q", v)
		}
	}
	at := func(k string) func(db kv.DB) string { return func(db kv.DB) string { return seek(t, db, k) } }

	check("Get e, not there: it reads d and h with it", 0, get("e"))
	check("Get f, between d and h", 1, get("f"))
	check("Get g", 1, get("g"))
	check("Seek f: h, which came with e's read", 1, at("f"))
	check("Get a, not known", 0, get("a"))
	check("Get c, before d: what a's read learnt", 1, get("c"))
	check("Seek q, past p: a page from q, and the key before it", 0, at("q"))
	check("Get z, after p: what q's page learnt", 1, get("z"))

	put(t, a, "f", "6") // a's own commit: e..g's gap is split at f
	check("Get f after a put it", 1, get("f"))
	check("Get e after a put f", 1, get("e"))
	check("Get g after a put f", 1, get("g"))
	check("Seek e after a put f: f", 1, at("e"))

	put(t, a, "h", "") // a deletes h, the end of f's gap
	check("Seek g after a deleted h: p, asked for", 0, at("g"))
	check("Get h after a deleted it", 1, get("h"))

	put(t, b, "g", "7") // another replica's commit: a's cache follows it (the change feed)
	check("Get g after b put it: the catch-up brings it, and splits its gap", 1, get("g"))
	check("Seek e after b put g: g", 1, at("e"))

	// Many keys, many gaps, within their budget: each answer still b's.
	for i := range 200 {
		put(t, a, fmt.Sprintf("k%03d", 2*i), "x")
	}
	for i := range 400 {
		if got, want := get(fmt.Sprintf("k%03d", i))(a), get(fmt.Sprintf("k%03d", i))(b); got != want {
			t.Fatalf("Get k%03d = %q, want %q", i, got, want)
		}
	}
	for i := range 400 {
		if got, want := seek(t, a, fmt.Sprintf("k%03d", i)), seek(t, b, fmt.Sprintf("k%03d", i)); got != want {
			t.Fatalf("Seek k%03d = %q, want %q", i, got, want)
		}
	}
}

// More gaps than one bucket keeps (maxGaps): the bucket's are dropped and learnt again, and
// every answer is still the store's.
func TestGapsBounded(t *testing.T) {
	url := kvtest.URL(t)
	a := open(t, url)
	var kvs []string
	for i := range 5000 {
		kvs = append(kvs, fmt.Sprintf("k%05d", 2*i), "x")
	}
	put(t, a, kvs...)
	if err := a.View(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket([]byte("b"))
		for i := range 5000 { // a miss between each two keys: 5,000 gaps
			if v := b.Get([]byte(fmt.Sprintf("k%05d", 2*i+1))); v != nil {
				t.Fatalf("k%05d = %q, want none", 2*i+1, v)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("after 5,000 misses: %d gaps", a.Gaps())
	if n := a.Gaps(); n == 0 || n > 4096 {
		t.Errorf("%d gaps in the cache, want some and at most 4,096", n)
	}
	if err := a.View(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket([]byte("b"))
		for i := range 10000 {
			want := i%2 == 0
			if v := b.Get([]byte(fmt.Sprintf("k%05d", i))); (v != nil) != want {
				t.Fatalf("k%05d = %q, want it there: %v", i, v, want)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func getS(t *testing.T, db kv.DB, k string) string {
	t.Helper()
	var s string
	if err := db.View(context.Background(), func(tx kv.Tx) error {
		if v := tx.Bucket([]byte("b")).Get([]byte(k)); v != nil {
			s = string(v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// A key this replica deleted ended a gap: the gaps on either side of it become one, so that
// a gap learnt after (d, p here) doesn't overlap one left over, whose put would then be
// split in one of them only, the other claiming the new key absent. (Found by a review.)
func TestGapsAfterADelete(t *testing.T) {
	url := kvtest.URL(t)
	a := open(t, url)
	b := open(t, url, pg.WithCache(0))
	put(t, b, "d", "4", "h", "8", "p", "16")
	getS(t, a, "i") // learns (h, p), p's entry
	getS(t, a, "i")
	put(t, a, "h", "")   // a deletes h: (h, p) stays
	getS(t, a, "e")      // learns (d, p): overlaps (h, p)
	put(t, a, "j", "10") // splits (h, p) only
	for _, k := range []string{"e", "d\x01", "g"} {
		if got, want := seek(t, a, k), seek(t, b, k); got != want {
			t.Errorf("Seek %q = %q, want %q", k, got, want)
		}
	}
	// Next from d.
	var got string
	if err := a.View(context.Background(), func(tx kv.Tx) error {
		c := tx.Bucket([]byte("b")).Cursor()
		c.Seek([]byte("d"))
		k, _ := c.Next()
		got = string(k)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != "j" {
		t.Errorf("Next after d = %q, want j", got)
	}
}

// The same, where the overlap made two gaps with one lo, and a split of the wrong one left
// the bucket's gaps out of order: a Get of a key this replica committed found none. (Values
// too big for the cache, so that the Gets ask the gaps, not the key's own entry.)
func TestGapsBigValuesAfterADelete(t *testing.T) {
	url := kvtest.URL(t)
	a := open(t, url, pg.WithCache(1<<20)) // entries over 128 KiB are not kept
	b := open(t, url, pg.WithCache(0))
	big := strings.Repeat("v", 200<<10)
	put(t, b, "d", "4", "k", "11", "x", "24")
	getS(t, a, "m")     // learns (k, x)
	put(t, a, "k", "")  // a deletes k: (k, x) stays
	getS(t, a, "e")     // learns (d, x), over (k, x)
	put(t, a, "k", big) // splits (d, x) at k: (d, k), (k, x), (k, x)
	put(t, a, "m", big) // splits the first (k, x), where the second holds m
	put(t, a, "o", big) // splits (k, m), leaving the slice out of order
	for _, k := range []string{"k", "m", "o"} {
		if got, want := len(getS(t, a, k)), len(getS(t, b, k)); got != want {
			t.Errorf("Get %q: %d bytes, want %d", k, got, want)
		}
	}
}

// One miss on an empty bucket learns (-inf, +inf); one commit of many keys then splits it
// once per key: past maxSplits the bucket's gaps are dropped, so that the commit costs the
// cache what its writes cost (it took 16 s, and 40,004 gaps, before).
func TestGapsBoundedByCommits(t *testing.T) {
	a := open(t, kvtest.URL(t), pg.WithCache(1<<20)) // gaps' budget: 128 KiB
	put(t, a, "seed", "x")
	if err := a.Update(context.Background(), func(tx kv.Tx) error { _, err := tx.CreateBucketIfNotExists([]byte("e")); return err }); err != nil {
		t.Fatal(err)
	}
	if err := a.View(context.Background(), func(tx kv.Tx) error {
		tx.Bucket([]byte("e")).Get([]byte("x"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	const n = 40000
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	if err := a.Update(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket([]byte("e"))
		for _, i := range r.Perm(n) {
			if err := b.Put([]byte(fmt.Sprintf("key%08d", i)), []byte("v")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	bytes, _ := a.CacheStats()
	t.Logf("commit of %d keys: %v; %d gaps, cache stats %d bytes (WithCache 1 MiB)", n, time.Since(start), a.Gaps(), bytes)
	if g := a.Gaps(); g > 4096 {
		t.Errorf("%d gaps in one bucket, want at most 4,096 (maxGaps)", g)
	}
}
