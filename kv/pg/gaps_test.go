package pg_test

import (
	"fmt"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/pgproxy"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// viaProxy opens a replica on url through a proxy that counts its round trips.
func viaProxy(t *testing.T, url string) (*pg.DB, *pgproxy.Proxy) {
	t.Helper()
	target, err := pgproxy.Target(url)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := pgproxy.Start(target, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	via, err := proxy.URL(url)
	if err != nil {
		t.Fatal(err)
	}
	return open(t, via), proxy
}

// seek is where a cursor of bucket b lands seeking k, as "key=value", or "" at the end.
func seek(t *testing.T, db kv.DB, k string) string {
	t.Helper()
	var s string
	if err := db.View(func(tx kv.Tx) error {
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
			if err := db.View(func(tx kv.Tx) error { v = tx.Bucket([]byte("b")).Get([]byte(k)); return nil }); err != nil {
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

	put(t, b, "g", "7") // another replica's commit: a's cache is emptied
	check("Get g after b put it", 0, get("g"))
	check("Seek e after b put g", 0, at("e"))

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
	if err := a.View(func(tx kv.Tx) error {
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
	if err := a.View(func(tx kv.Tx) error {
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
