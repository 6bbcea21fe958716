package kvtest

// The contract's GetAll cases: the same answers as Get, and no later answer changed.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
)

// probe tells what Get and Bucket answer for each of keys in b: a value (nil and empty told
// apart), a nested bucket (and what its key "x" holds), or nothing.
func probe(b kv.Bucket, keys [][]byte) string {
	var out strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&out, "%q:", k)
		switch v := b.Get(k); {
		case v == nil:
			out.WriteString("nil")
		default:
			fmt.Fprintf(&out, "%q", v)
		}
		if sub := b.Bucket(k); sub != nil {
			fmt.Fprintf(&out, " bucket(x=%q)", sub.Get([]byte("x")))
		}
		out.WriteString("; ")
	}
	return out.String()
}

// fillAsked puts values a, b, gone, an empty one and a nested bucket sub (holding x) in
// bucket name, and returns the keys the GetAll cases ask: those, a missing one, one twice,
// and one an Update writes.
func fillAsked(t *testing.T, db kv.DB) [][]byte {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		for _, k := range []string{"a", "b", "gone"} {
			must(t, b.Put([]byte(k), []byte("v-"+k)))
		}
		must(t, b.Put([]byte("empty"), []byte{}))
		sub, err := b.CreateBucketIfNotExists([]byte("sub"))
		must(t, err)
		return sub.Put([]byte("x"), []byte("nested"))
	})
	return [][]byte{[]byte("a"), []byte("b"), []byte("empty"), []byte("sub"), []byte("missing"), []byte("a"), []byte("new"), []byte("gone")}
}

// GetAll changes no later answer: keys committed, written or deleted in the transaction,
// nested buckets and their keys, missing keys, keys asked twice, in View and in Update,
// read before or after the transaction's writes.
func testGetAllChangesNoAnswer(t *testing.T, db kv.DB) {
	kv.GetAll(nil, [][]byte{[]byte("a")}) // no bucket: nothing to do
	keys := fillAsked(t, db)
	const committed = `"a":"v-a"; "b":"v-b"; "empty":""; "sub":nil bucket(x="nested"); "missing":nil; "a":"v-a"; "new":nil; "gone":"v-gone"; `
	view(t, db, func(tx kv.Tx) error {
		if got := probe(tx.Bucket(name), keys); got != committed {
			t.Errorf("without GetAll: %s\nwant %s", got, committed)
		}
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		kv.GetAll(b, keys)
		kv.GetAll(b.Bucket([]byte("sub")), [][]byte{[]byte("x"), []byte("y")})
		if got := probe(b, keys); got != committed {
			t.Errorf("View after GetAll: %s\nwant %s", got, committed)
		}
		if got := b.Bucket([]byte("sub")).Get([]byte("y")); got != nil {
			t.Errorf("a missing nested key prefetched reads %q", got)
		}
		return nil
	})
	const written = `"a":"mine"; "b":nil; "empty":""; "sub":nil bucket(x="changed"); "missing":nil; "a":"mine"; "new":"v-new"; "gone":nil; `
	write := func(b kv.Bucket) {
		must(t, b.Put([]byte("a"), []byte("mine")))
		must(t, b.Put([]byte("new"), []byte("v-new")))
		must(t, b.Delete([]byte("b")))
		must(t, b.Delete([]byte("gone")))
		must(t, b.Bucket([]byte("sub")).Put([]byte("x"), []byte("changed")))
	}
	for _, when := range []string{"none", "before", "after", "both"} {
		err := db.Update(context.Background(), func(tx kv.Tx) error {
			b := tx.Bucket(name)
			if when == "before" || when == "both" {
				kv.GetAll(b, keys)
				kv.GetAll(b.Bucket([]byte("sub")), [][]byte{[]byte("x")})
			}
			write(b)
			if when == "after" || when == "both" {
				kv.GetAll(b, keys)
				kv.GetAll(b.Bucket([]byte("sub")), [][]byte{[]byte("x")})
			}
			if got := probe(b, keys); got != written {
				t.Errorf("Update, GetAll %s the writes: %s\nwant %s", when, got, written)
			}
			if err := b.Put([]byte("sub"), []byte("v")); !errors.Is(err, kv.ErrIncompatibleValue) {
				t.Errorf("Update, GetAll %s the writes: Put on a nested bucket's key: %v", when, err)
			}
			fresh, err := b.CreateBucketIfNotExists([]byte("fresh"))
			must(t, err)
			must(t, fresh.Put([]byte("k"), []byte("v")))
			kv.GetAll(fresh, [][]byte{[]byte("k"), []byte("missing")})
			if got := probe(fresh, [][]byte{[]byte("k"), []byte("missing")}); got != `"k":"v"; "missing":nil; ` {
				t.Errorf("a bucket made in the transaction, prefetched: %s", got)
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatal(err)
		}
	}
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		kv.GetAll(b, keys)
		if got := probe(b, keys); got != committed {
			t.Errorf("after the rolled back writes: %s\nwant %s", got, committed)
		}
		return nil
	})
}

// errRollback ends a test transaction without committing it.
var errRollback = errors.New("rolled back")

// GetAll answers as Get for each key, in a View and in an Update before and after its
// writes: values, empty values, nested buckets (nil), missing keys, a key twice.
func testGetAll(t *testing.T, db kv.DB) {
	keys := fillAsked(t, db)
	if got := kv.GetAll(nil, keys); len(got) != len(keys) || slices.ContainsFunc(got, func(v []byte) bool { return v != nil }) {
		t.Errorf("GetAll on no bucket = %q, want %d nils", got, len(keys))
	}
	show := func(vs [][]byte) string {
		s := ""
		for _, v := range vs {
			if v == nil {
				s += "nil "
			} else {
				s += fmt.Sprintf("%q ", v)
			}
		}
		return s
	}
	gets := func(b kv.Bucket) string {
		vs := make([][]byte, len(keys))
		for i, k := range keys {
			vs[i] = b.Get(k)
		}
		return show(vs)
	}
	const committed = `"v-a" "v-b" "" nil nil "v-a" nil "v-gone" `
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if got := show(kv.GetAll(b, keys)); got != committed {
			t.Errorf("GetAll in a View: %s\nwant %s", got, committed)
		}
		if got := gets(b); got != committed {
			t.Errorf("Get after GetAll in a View: %s\nwant %s", got, committed)
		}
		return nil
	})
	const written = `"mine" nil "" nil nil "mine" "v-new" nil `
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if got := show(kv.GetAll(b, keys)); got != committed {
			t.Errorf("GetAll in an Update: %s\nwant %s", got, committed)
		}
		must(t, b.Put([]byte("a"), []byte("mine")))
		must(t, b.Put([]byte("new"), []byte("v-new")))
		must(t, b.Delete([]byte("b")))
		must(t, b.Delete([]byte("gone")))
		if got := show(kv.GetAll(b, keys)); got != written {
			t.Errorf("GetAll after the Update's writes: %s\nwant %s", got, written)
		}
		if got := gets(b); got != written {
			t.Errorf("Get after GetAll and the writes: %s\nwant %s", got, written)
		}
		return nil
	})
}
