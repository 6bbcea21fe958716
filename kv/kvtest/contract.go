package kvtest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// Run checks that the stores open returns keep the kv contract: bbolt's semantics, which
// the stores above kv rely on. open must return a fresh, empty store for each test.
func Run(t *testing.T, open func(t *testing.T) kv.DB) {
	tests := []struct {
		name string
		fn   func(*testing.T, kv.DB)
	}{
		{"GetPutDelete", testGetPutDelete},
		{"KeysRefused", testKeysRefused},
		{"Writable", testWritable},
		{"NestedBuckets", testNestedBuckets},
		{"IncompatibleValue", testIncompatible},
		{"Order", testOrder},
		{"CursorWalk", testCursorWalk},
		{"CursorDelete", testCursorDelete},
		{"ReadYourWrites", testReadYourWrites},
		{"Rollback", testRollback},
		{"RolledBackBucketOpened", testRolledBackBucketOpened},
		{"Snapshot", testSnapshot},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"Batch", testBatch},
		{"Change", testChange},
		{"BigValues", testBigValues},
		{"KeyN", testKeyN},
		{"DeleteBucket", testDeleteBucket},
		{"ReplaceValueAndBucket", testReplaceValueAndBucket},
		{"DeleteBucketThenWriteMuch", testDeleteBucketThenWriteMuch},
		{"DeletedBucketSeenByOlderView", testDeletedBucketSeenByOlderView},
		{"TopLevelBuckets", testTopLevelBuckets},
		{"GetAllChangesNoAnswer", testGetAllChangesNoAnswer},
		{"GetAll", testGetAll},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func update(t *testing.T, db kv.DB, fn func(kv.Tx) error) {
	t.Helper()
	must(t, db.Update(fn))
}

func view(t *testing.T, db kv.DB, fn func(kv.Tx) error) {
	t.Helper()
	must(t, db.View(fn))
}

var name = []byte("b")

func testGetPutDelete(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		if tx.Bucket(name) != nil {
			t.Error("a missing bucket is not nil")
		}
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		must(t, b.Put([]byte("k"), []byte("v")))
		must(t, b.Put([]byte("empty"), []byte{}))
		must(t, b.Put([]byte("gone"), []byte("x")))
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if got := b.Get([]byte("k")); string(got) != "v" {
			t.Errorf("Get(k) = %q, want v", got)
		}
		if got := b.Get([]byte("empty")); got == nil || len(got) != 0 {
			t.Errorf("Get(empty) = %#v, want an empty, non-nil value", got)
		}
		if got := b.Get([]byte("missing")); got != nil {
			t.Errorf("Get(missing) = %q, want nil", got)
		}
		must(t, b.Delete([]byte("gone")))
		must(t, b.Delete([]byte("never there")))
		must(t, b.Put([]byte("k"), []byte("v2")))
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if got := b.Get([]byte("gone")); got != nil {
			t.Errorf("a deleted key reads %q", got)
		}
		if got := b.Get([]byte("k")); string(got) != "v2" {
			t.Errorf("Get(k) = %q, want v2", got)
		}
		return nil
	})
}

func testKeysRefused(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		if err := b.Put(nil, []byte("v")); !errors.Is(err, kv.ErrKeyRequired) {
			t.Errorf("Put(nil key) = %v, want ErrKeyRequired", err)
		}
		if err := b.Put(make([]byte, kv.MaxKeySize+1), []byte("v")); !errors.Is(err, kv.ErrKeyTooLarge) {
			t.Errorf("Put(too long a key) = %v, want ErrKeyTooLarge", err)
		}
		must(t, b.Put(bytes.Repeat([]byte{0xff}, kv.MaxKeySize), []byte("longest")))
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if got := b.Get(bytes.Repeat([]byte{0xff}, kv.MaxKeySize)); string(got) != "longest" {
			t.Errorf("the longest key reads %q", got)
		}
		if err := b.Put([]byte("k"), []byte("v")); !errors.Is(err, kv.ErrTxNotWritable) {
			t.Errorf("Put in a View = %v, want ErrTxNotWritable", err)
		}
		if err := b.Delete([]byte("k")); !errors.Is(err, kv.ErrTxNotWritable) {
			t.Errorf("Delete in a View = %v, want ErrTxNotWritable", err)
		}
		if _, err := tx.CreateBucketIfNotExists([]byte("new")); !errors.Is(err, kv.ErrTxNotWritable) {
			t.Errorf("CreateBucketIfNotExists in a View = %v, want ErrTxNotWritable", err)
		}
		return nil
	})
}

func testWritable(t *testing.T, db kv.DB) {
	view(t, db, func(tx kv.Tx) error {
		if tx.Writable() {
			t.Error("a View's transaction says it is writable")
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		if !tx.Writable() {
			t.Error("an Update's transaction says it is not writable")
		}
		return nil
	})
}

func testNestedBuckets(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		top, err := tx.CreateBucketIfNotExists([]byte("top"))
		must(t, err)
		for _, n := range []string{"c", "a"} {
			sub, err := top.CreateBucketIfNotExists([]byte(n))
			must(t, err)
			must(t, sub.Put([]byte("in "+n), []byte(n)))
			deep, err := sub.CreateBucketIfNotExists([]byte("deep"))
			must(t, err)
			must(t, deep.Put([]byte("k"), []byte("deep in "+n)))
		}
		must(t, top.Put([]byte("b"), []byte("value")))
		again, err := top.CreateBucketIfNotExists([]byte("a"))
		must(t, err)
		if got := again.Get([]byte("in a")); string(got) != "a" {
			t.Errorf("CreateBucketIfNotExists of an existing bucket: its key reads %q", got)
		}
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		top := tx.Bucket([]byte("top"))
		if top == nil {
			t.Fatal("top is missing")
		}
		if top.Bucket([]byte("b")) != nil || top.Bucket([]byte("missing")) != nil {
			t.Error("Bucket of a value or of a missing key is not nil")
		}
		if got := top.Get([]byte("a")); got != nil {
			t.Errorf("Get of a bucket's name = %q, want nil", got)
		}
		if got := top.Bucket([]byte("c")).Bucket([]byte("deep")).Get([]byte("k")); string(got) != "deep in c" {
			t.Errorf("a nested bucket's key reads %q", got)
		}
		var seen []string
		must(t, top.ForEach(func(k, v []byte) error {
			seen = append(seen, fmt.Sprintf("%s=%v", k, v != nil))
			return nil
		}))
		if want := []string{"a=false", "b=true", "c=false"}; !slices.Equal(seen, want) {
			t.Errorf("ForEach saw %v, want %v (a bucket's value nil)", seen, want)
		}
		seen = nil
		must(t, top.ForEachBucket(func(k []byte) error { seen = append(seen, string(k)); return nil }))
		if want := []string{"a", "c"}; !slices.Equal(seen, want) {
			t.Errorf("ForEachBucket saw %v, want %v", seen, want)
		}
		c := top.Cursor()
		if k, v := c.First(); string(k) != "a" || v != nil {
			t.Errorf("a cursor on a bucket: %q, %q; want a, nil", k, v)
		}
		stop := errors.New("stop")
		if err := top.ForEach(func(k, v []byte) error { return stop }); err != stop {
			t.Errorf("ForEach returned %v, want fn's error", err)
		}
		return nil
	})
}

func testIncompatible(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		_, err = b.CreateBucketIfNotExists([]byte("sub"))
		must(t, err)
		must(t, b.Put([]byte("val"), []byte("v")))
		// Within the transaction that made them.
		if err := b.Put([]byte("sub"), []byte("v")); !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("Put over a bucket = %v", err)
		}
		if _, err := b.CreateBucketIfNotExists([]byte("val")); !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("CreateBucketIfNotExists over a value = %v", err)
		}
		if err := b.Delete([]byte("sub")); !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("Delete of a bucket = %v", err)
		}
		c := b.Cursor()
		if k, _ := c.Seek([]byte("sub")); string(k) != "sub" {
			t.Fatalf("Seek(sub) = %q", k)
		}
		if err := c.Delete(); !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("a cursor's Delete of a bucket = %v", err)
		}
		return nil
	})
	// In later transactions: the write (or, on PostgreSQL, its commit) is refused.
	for what, fn := range map[string]func(b kv.Bucket) error{
		"Put over a bucket":  func(b kv.Bucket) error { return b.Put([]byte("sub"), []byte("v")) },
		"Delete of a bucket": func(b kv.Bucket) error { return b.Delete([]byte("sub")) },
		"CreateBucketIfNotExists over a value": func(b kv.Bucket) error {
			_, err := b.CreateBucketIfNotExists([]byte("val"))
			return err
		},
	} {
		err := db.Update(func(tx kv.Tx) error {
			b := tx.Bucket(name)
			must(t, b.Put([]byte("also"), []byte("rolled back")))
			return fn(b)
		})
		if !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("%s in a later transaction: Update = %v, want ErrIncompatibleValue", what, err)
		}
	}
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if b.Bucket([]byte("sub")) == nil || string(b.Get([]byte("val"))) != "v" || b.Get([]byte("also")) != nil {
			t.Error("a refused write changed the store")
		}
		return nil
	})
}

// edgeKeys sort bytewise, and not as text would: 0x00 and 0xff bytes, prefixes.
var edgeKeys = [][]byte{
	{0x00}, {0x00, 0x00}, {0x00, 0xff}, {0x01}, {0x7f}, {0x80}, {0xc3, 0xa9}, {0xfe}, {0xff},
	{0xff, 0x00}, {0xff, 0xff}, {0xff, 0xff, 0xff}, []byte("A"), []byte("a"), []byte("a\x00"), []byte("ab"),
}

func testOrder(t *testing.T, db kv.DB) {
	want := slices.Clone(edgeKeys)
	slices.SortFunc(want, bytes.Compare)
	for _, committed := range []bool{true, false} {
		shuffled := slices.Clone(edgeKeys)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		bname := []byte("order " + strconv.FormatBool(committed))
		check := func(tx kv.Tx) error {
			b := tx.Bucket(bname)
			var got [][]byte
			c := b.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				got = append(got, bytes.Clone(k))
			}
			if !slices.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("committed=%v: forward %x, want %x", committed, got, want)
			}
			got = nil
			for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
				got = append(got, bytes.Clone(k))
			}
			slices.Reverse(got)
			if !slices.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("committed=%v: backward %x, want %x", committed, got, want)
			}
			for _, k := range want {
				if v := b.Get(k); !bytes.Equal(v, append([]byte("v"), k...)) {
					t.Errorf("Get(%x) = %x", k, v)
				}
			}
			return nil
		}
		update(t, db, func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bname)
			must(t, err)
			for _, k := range shuffled {
				must(t, b.Put(k, append([]byte("v"), k...)))
			}
			if !committed {
				return check(tx)
			}
			return nil
		})
		if committed {
			view(t, db, check)
		}
	}
}

// model is a bucket as a sorted slice, and a cursor on it.
type model struct {
	keys [][]byte
	vals map[string][]byte
	pos  int // -1: off the keys
}

func (m *model) at(i int) ([]byte, []byte) {
	if i < 0 || i >= len(m.keys) {
		m.pos = -1
		return nil, nil
	}
	m.pos = i
	return m.keys[i], m.vals[string(m.keys[i])]
}

func (m *model) seek(k []byte) ([]byte, []byte) {
	return m.at(sort.Search(len(m.keys), func(i int) bool { return bytes.Compare(m.keys[i], k) >= 0 }))
}

func (m *model) put(k, v []byte) {
	if _, ok := m.vals[string(k)]; !ok {
		i := sort.Search(len(m.keys), func(i int) bool { return bytes.Compare(m.keys[i], k) >= 0 })
		m.keys = slices.Insert(m.keys, i, bytes.Clone(k))
	}
	m.vals[string(k)] = bytes.Clone(v)
}

func (m *model) del(k []byte) {
	if _, ok := m.vals[string(k)]; ok {
		i := sort.Search(len(m.keys), func(i int) bool { return bytes.Compare(m.keys[i], k) >= 0 })
		m.keys = slices.Delete(m.keys, i, i+1)
		delete(m.vals, string(k))
	}
}

func randKey(r *rand.Rand) []byte {
	alphabet := []byte{0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff}
	k := make([]byte, 1+r.IntN(4))
	for i := range k {
		k[i] = alphabet[r.IntN(len(alphabet))]
	}
	return k
}

// testCursorWalk walks cursors at random over thousands of keys, committed and written by
// the walking transaction itself (puts, overwrites, deletes), against a model.
func testCursorWalk(t *testing.T, db kv.DB) {
	r := rand.New(rand.NewPCG(1, 2))
	m := &model{vals: map[string][]byte{}}
	for i := range 3000 {
		k := append(randKey(r), []byte(strconv.Itoa(i%50))...)
		m.put(k, []byte("c"+strconv.Itoa(i)))
	}
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		for k, v := range m.vals {
			must(t, b.Put([]byte(k), v))
		}
		return nil
	})
	walk := func(tx kv.Tx, steps int) {
		c := tx.Bucket(name).Cursor()
		m.pos = -1
		for step := range steps {
			var gk, gv, wk, wv []byte
			op := r.IntN(8)
			what := ""
			switch {
			case op == 0:
				what = "First"
				gk, gv = c.First()
				wk, wv = m.at(0)
			case op == 1:
				what = "Last"
				gk, gv = c.Last()
				wk, wv = m.at(len(m.keys) - 1)
			case op == 2:
				k := randKey(r)
				what = fmt.Sprintf("Seek(%x)", k)
				gk, gv = c.Seek(k)
				wk, wv = m.seek(k)
			case op <= 5 && m.pos >= 0:
				what = "Next"
				gk, gv = c.Next()
				wk, wv = m.at(m.pos + 1)
			case m.pos >= 0:
				what = "Prev"
				gk, gv = c.Prev()
				wk, wv = m.at(m.pos - 1)
			default:
				continue
			}
			if !bytes.Equal(gk, wk) || !bytes.Equal(gv, wv) {
				t.Fatalf("step %d, %s: got %x=%q, want %x=%q", step, what, gk, gv, wk, wv)
			}
		}
	}
	view(t, db, func(tx kv.Tx) error { walk(tx, 3000); return nil })
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		for i := range 1500 {
			k := append(randKey(r), []byte(strconv.Itoa(i%60))...)
			if r.IntN(3) == 0 {
				must(t, b.Delete(k))
				m.del(k)
			} else {
				must(t, b.Put(k, []byte("u"+strconv.Itoa(i))))
				m.put(k, []byte("u"+strconv.Itoa(i)))
			}
			if i%100 == 0 {
				walk(tx, 50) // the walk and the writes interleaved
			}
		}
		walk(tx, 3000)
		return nil
	})
	view(t, db, func(tx kv.Tx) error { walk(tx, 3000); return nil })
}

func testCursorDelete(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		for i := range 200 {
			must(t, b.Put([]byte(fmt.Sprintf("%03d", i)), []byte("v")))
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		c := tx.Bucket(name).Cursor()
		i := 0
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if string(k) != fmt.Sprintf("%03d", i) {
				t.Fatalf("walking while deleting: %q, want %03d", k, i)
			}
			if i%2 == 0 {
				must(t, c.Delete())
			}
			i++
		}
		if i != 200 {
			t.Errorf("walked %d keys while deleting, want 200", i)
		}
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		var got []string
		must(t, tx.Bucket(name).ForEach(func(k, _ []byte) error { got = append(got, string(k)); return nil }))
		if len(got) != 100 || got[0] != "001" || got[99] != "199" {
			t.Errorf("after deleting every other key: %d keys, %v...", len(got), got[:min(3, len(got))])
		}
		return nil
	})
}

func testReadYourWrites(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		must(t, b.Put([]byte("k"), []byte("committed")))
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		must(t, b.Put([]byte("k"), []byte("mine")))
		must(t, b.Put([]byte("new"), []byte("new")))
		if got := b.Get([]byte("k")); string(got) != "mine" {
			t.Errorf("an overwritten key reads %q", got)
		}
		sub, err := b.CreateBucketIfNotExists([]byte("sub"))
		must(t, err)
		must(t, sub.Put([]byte("x"), []byte("y")))
		if got := tx.Bucket(name).Bucket([]byte("sub")).Get([]byte("x")); string(got) != "y" {
			t.Errorf("a new bucket's key reads %q", got)
		}
		must(t, b.Delete([]byte("k")))
		if got := b.Get([]byte("k")); got != nil {
			t.Errorf("a key deleted in the transaction reads %q", got)
		}
		var keys []string
		must(t, b.ForEach(func(k, _ []byte) error { keys = append(keys, string(k)); return nil }))
		if want := []string{"new", "sub"}; !slices.Equal(keys, want) {
			t.Errorf("ForEach in the transaction: %v, want %v", keys, want)
		}
		return nil
	})
}

func testRollback(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		return b.Put([]byte("k"), []byte("before"))
	})
	failed := errors.New("fn failed")
	err := db.Update(func(tx kv.Tx) error {
		b := tx.Bucket(name)
		must(t, b.Put([]byte("k"), []byte("after")))
		must(t, b.Put([]byte("other"), []byte("x")))
		_, err := tx.CreateBucketIfNotExists([]byte("new bucket"))
		must(t, err)
		return failed
	})
	if err != failed {
		t.Errorf("Update returned %v, want fn's error", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a panic in fn did not reach Update's caller")
			}
		}()
		db.Update(func(tx kv.Tx) error {
			must(t, tx.Bucket(name).Put([]byte("k"), []byte("panicked")))
			panic("fn panicked")
		})
	}()
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if got := b.Get([]byte("k")); string(got) != "before" {
			t.Errorf("after failed Updates k reads %q, want before", got)
		}
		if b.Get([]byte("other")) != nil || tx.Bucket([]byte("new bucket")) != nil {
			t.Error("a failed Update left something behind")
		}
		return nil
	})
}

// testRolledBackBucketOpened: a bucket made, written (past any write buffer), opened again
// and then rolled back is gone for every later transaction, however it looks for it.
func testRolledBackBucketOpened(t *testing.T, db kv.DB) {
	failed := errors.New("fn failed")
	big := bytes.Repeat([]byte("x"), 4096)
	err := db.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		nb, err := b.CreateBucketIfNotExists([]byte("nested"))
		must(t, err)
		for i := range 4 {
			must(t, nb.Put([]byte{byte(i)}, big))
		}
		if tx.Bucket(name) == nil || tx.Bucket(name).Bucket([]byte("nested")) == nil {
			t.Error("a bucket made in the transaction is not there in it")
		}
		return failed
	})
	if err != failed {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	view(t, db, func(tx kv.Tx) error {
		if tx.Bucket(name) != nil {
			t.Error("a rolled-back bucket is there in a later View")
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		if tx.Bucket(name) != nil {
			t.Error("a rolled-back bucket is there in a later Update")
		}
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		return b.Put([]byte("k"), []byte("v"))
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if b == nil || string(b.Get([]byte("k"))) != "v" || b.Bucket([]byte("nested")) != nil {
			t.Error("the bucket made again after a rollback does not hold just what was written")
		}
		return nil
	})
}

func testSnapshot(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		for i := range 50 {
			must(t, b.Put([]byte(fmt.Sprintf("%02d", i)), []byte("old")))
		}
		return nil
	})
	// A View's function may run again (kv.DB.View), so the Update is made by its first run
	// only; every run sees one snapshot: the first, the one of its first read (before the
	// Update); a second, one after the Update.
	before := "00=old 01=old 02=old … 24=old 25=old 26=old … 48=old 49=old, 50 keys, later: false"
	after := "00=new 01=old 02=old … 24=old 26=old … 48=old 49=new 99=new, 50 keys, later: true"
	runs := 0
	view(t, db, func(tx kv.Tx) error {
		runs++
		b := tx.Bucket(name)
		if runs == 1 {
			if got := b.Get([]byte("00")); string(got) != "old" {
				t.Fatalf("00 reads %q", got)
			}
			done := make(chan error, 1)
			go func() {
				done <- db.Update(func(tx kv.Tx) error {
					b := tx.Bucket(name)
					must(t, b.Put([]byte("00"), []byte("new")))
					must(t, b.Put([]byte("49"), []byte("new")))
					must(t, b.Delete([]byte("25")))
					later, err := tx.CreateBucketIfNotExists([]byte("later"))
					must(t, err)
					must(t, later.Put([]byte("k"), []byte("v")))
					return b.Put([]byte("99"), []byte("new"))
				})
			}()
			select {
			case err := <-done:
				must(t, err)
			case <-time.After(20 * time.Second):
				t.Fatal("an Update waited for a View to end")
			}
		}
		var seen []string
		n := 0
		must(t, b.ForEach(func(k, v []byte) error {
			n++
			if i, err := strconv.Atoi(string(k)); err != nil || i <= 2 || i >= 48 || 24 <= i && i <= 26 {
				seen = append(seen, fmt.Sprintf("%s=%s", k, v))
			} else if string(v) != "old" {
				seen = append(seen, fmt.Sprintf("%s=%s", k, v))
			} else if i == 3 || i == 27 {
				seen = append(seen, "…")
			}
			return nil
		}))
		later := tx.Bucket([]byte("later")) != nil
		got := fmt.Sprintf("%s, %d keys, later: %v", strings.Join(seen, " "), n, later)
		switch want := map[bool]string{true: before, false: after}[runs == 1]; {
		case runs > 2:
			t.Errorf("a View's function ran %d times", runs)
		case got != want && runs == 1:
			t.Errorf("a View sees a commit made after it began:\n%s\nwant\n%s", got, want)
		case got != want:
			t.Errorf("a View's second run does not see the commit made before it:\n%s\nwant\n%s", got, want)
		}
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		if got := tx.Bucket(name).Get([]byte("00")); string(got) != "new" {
			t.Errorf("a later View reads 00=%q, want new", got)
		}
		if tx.Bucket([]byte("later")) == nil {
			t.Error("a later View doesn't see the bucket committed before it")
		}
		return nil
	})
}

// increment adds one to the counter under key, read and written in tx.
func increment(tx kv.Tx, key []byte) error {
	b, err := tx.CreateBucketIfNotExists(name)
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(string(b.Get(key)))
	return b.Put(key, []byte(strconv.Itoa(n+1)))
}

func counter(t *testing.T, db kv.DB, key []byte) (n int) {
	view(t, db, func(tx kv.Tx) error {
		n, _ = strconv.Atoi(string(tx.Bucket(name).Get(key)))
		return nil
	})
	return n
}

func testConcurrentUpdates(t *testing.T, db kv.DB) {
	const writers, each = 16, 20
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				if err := db.Update(func(tx kv.Tx) error { return increment(tx, []byte("n")) }); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := counter(t, db, []byte("n")); n != writers*each {
		t.Errorf("%d writers × %d increments: counter %d, want %d (lost updates)", writers, each, n, writers*each)
	}
}

// kv.Change: read's error, or its nothing to write, is what Change returns, with no write;
// writes that count from their own reads lose no call among many at once; and a Change's
// read sees the Changes committed before it.
func testChange(t *testing.T, db kv.DB) {
	refused := errors.New("refused")
	wrote := false
	if err := kv.Change(db, func(kv.Tx) (bool, error) { return true, refused }, func(kv.Tx) error { wrote = true; return nil }); err != refused || wrote {
		t.Errorf("a read that fails: %v, wrote %v", err, wrote)
	}
	if err := kv.Change(db, func(kv.Tx) (bool, error) { return false, nil }, func(kv.Tx) error { wrote = true; return nil }); err != nil || wrote {
		t.Errorf("a read with nothing to write: %v, wrote %v", err, wrote)
	}
	const writers, each = 8, 10
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				err := kv.Change(db, func(tx kv.Tx) (bool, error) {
					if b := tx.Bucket(name); b != nil {
						b.Get([]byte("c"))
					}
					return true, nil
				}, func(tx kv.Tx) error { return increment(tx, []byte("c")) })
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := counter(t, db, []byte("c")); n != writers*each {
		t.Errorf("Change: counter %d, want %d", n, writers*each)
	}
	for i := range 3 {
		var seen int
		if err := kv.Change(db, func(tx kv.Tx) (bool, error) {
			seen, _ = strconv.Atoi(string(tx.Bucket(name).Get([]byte("c"))))
			return true, nil
		}, func(tx kv.Tx) error { return increment(tx, []byte("c")) }); err != nil {
			t.Fatal(err)
		}
		if seen != writers*each+i {
			t.Errorf("Change %d after the others read %d, want %d", i, seen, writers*each+i)
		}
	}
}

func testBatch(t *testing.T, db kv.DB) {
	const writers, each = 16, 10
	failed := errors.New("this one fails")
	var wg sync.WaitGroup
	var mu sync.Mutex
	runs := 0
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				err := db.Batch(func(tx kv.Tx) error {
					mu.Lock()
					runs++
					mu.Unlock()
					if err := increment(tx, []byte("n")); err != nil {
						return err
					}
					if w == 0 && i == 0 {
						return failed
					}
					return nil
				})
				if want := error(nil); w == 0 && i == 0 {
					want = failed
					if err != want {
						t.Errorf("the failing Batch call returned %v", err)
					}
				} else if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := counter(t, db, []byte("n")); n != writers*each-1 {
		t.Errorf("Batch: counter %d, want %d (every call but the failing one, once)", n, writers*each-1)
	}
	if runs < writers*each {
		t.Errorf("Batch ran fns %d times for %d calls", runs, writers*each)
	}
}

func testBigValues(t *testing.T, db kv.DB) {
	big := func(n int, seed byte) []byte {
		v := make([]byte, n)
		for i := range v {
			v[i] = seed + byte(i*7)
		}
		return v
	}
	sizes := []int{8<<20 + 1, 8 << 20, 300 << 10}
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		for i, n := range sizes {
			must(t, b.Put([]byte{byte(i)}, big(n, byte(i))))
		}
		if !bytes.Equal(b.Get([]byte{0}), big(sizes[0], 0)) {
			t.Error("a big value reads back wrong in its own transaction")
		}
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		for i, n := range sizes {
			if !bytes.Equal(b.Get([]byte{byte(i)}), big(n, byte(i))) {
				t.Errorf("the %d-byte value reads back wrong", n)
			}
		}
		c := b.Cursor()
		i := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if !bytes.Equal(v, big(sizes[i], byte(i))) {
				t.Errorf("a cursor reads the %d-byte value wrong (%d bytes)", sizes[i], len(v))
			}
			i++
		}
		return nil
	})
}

func testKeyN(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		for _, k := range []string{"a", "b", "c"} {
			must(t, b.Put([]byte(k), []byte("v")))
		}
		sub, err := b.CreateBucketIfNotExists([]byte("sub"))
		must(t, err)
		must(t, sub.Put([]byte("x"), []byte("v")))
		must(t, sub.Put([]byte("y"), []byte("v")))
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		if n := tx.Bucket(name).KeyN(); n != 6 {
			t.Errorf("KeyN = %d, want 6 (3 values, a bucket and its 2 values)", n)
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		must(t, b.Delete([]byte("a")))
		must(t, b.Bucket([]byte("sub")).Put([]byte("z"), []byte("v")))
		if n := b.KeyN(); n != 6 {
			t.Errorf("KeyN with the transaction's writes = %d, want 6", n)
		}
		return nil
	})
}

// testDeleteBucket: a nested bucket goes with all it holds (buckets inside it too), in the
// transaction and after; a value or a missing name is refused; the parent's other keys stay.
func testDeleteBucket(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		top, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		must(t, top.Put([]byte("keep"), []byte("1")))
		for _, n := range []string{"doomed", "made-and-doomed"} {
			nb, err := top.CreateBucketIfNotExists([]byte(n))
			must(t, err)
			must(t, nb.Put([]byte("k"), []byte("v")))
			deep, err := nb.CreateBucketIfNotExists([]byte("deep"))
			must(t, err)
			must(t, deep.Put([]byte("k"), []byte("v")))
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		top := tx.Bucket(name)
		must(t, top.DeleteBucket([]byte("doomed")))
		if top.Bucket([]byte("doomed")) != nil {
			t.Error("a deleted bucket is still there in its transaction")
		}
		if err := top.DeleteBucket([]byte("keep")); !errors.Is(err, kv.ErrIncompatibleValue) {
			t.Errorf("DeleteBucket of a value = %v, want ErrIncompatibleValue", err)
		}
		if err := top.DeleteBucket([]byte("missing")); !errors.Is(err, kv.ErrBucketNotFound) {
			t.Errorf("DeleteBucket of nothing = %v, want ErrBucketNotFound", err)
		}
		nb, err := top.CreateBucketIfNotExists([]byte("fresh"))
		must(t, err)
		must(t, nb.Put([]byte("k"), []byte("v")))
		must(t, top.DeleteBucket([]byte("fresh"))) // made and deleted in one transaction
		return top.DeleteBucket([]byte("made-and-doomed"))
	})
	view(t, db, func(tx kv.Tx) error {
		top := tx.Bucket(name)
		var left []string
		must(t, top.ForEach(func(k, _ []byte) error { left = append(left, string(k)); return nil }))
		if strings.Join(left, ",") != "keep" {
			t.Errorf("after deleting buckets the parent holds %q, want only keep", left)
		}
		if n := top.KeyN(); n != 1 {
			t.Errorf("KeyN after deleting buckets = %d, want 1 (nothing of theirs left)", n)
		}
		return nil
	})
	// The name can be made again, empty.
	update(t, db, func(tx kv.Tx) error {
		nb, err := tx.Bucket(name).CreateBucketIfNotExists([]byte("again"))
		must(t, err)
		return nb.Put([]byte("k"), []byte("v2"))
	})
	view(t, db, func(tx kv.Tx) error {
		if v := tx.Bucket(name).Bucket([]byte("again")).Get([]byte("k")); string(v) != "v2" {
			t.Errorf("a bucket made after deletes holds %q", v)
		}
		return nil
	})
}

// testReplaceValueAndBucket: in one transaction, a value deleted (unread) can be made a
// bucket of the same name, and a bucket deleted can be made a value.
func testReplaceValueAndBucket(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		must(t, b.Put([]byte("was value"), []byte("v")))
		nb, err := b.CreateBucketIfNotExists([]byte("was bucket"))
		must(t, err)
		return nb.Put([]byte("k"), []byte("v"))
	})
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		must(t, b.Delete([]byte("was value")))
		nb, err := b.CreateBucketIfNotExists([]byte("was value"))
		must(t, err)
		must(t, nb.Put([]byte("k"), []byte("in the new bucket")))
		must(t, b.DeleteBucket([]byte("was bucket")))
		return b.Put([]byte("was bucket"), []byte("now a value"))
	})
	view(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		if nb := b.Bucket([]byte("was value")); nb == nil || string(nb.Get([]byte("k"))) != "in the new bucket" {
			t.Error("a value deleted and made a bucket in one transaction is not that bucket")
		}
		if v := b.Get([]byte("was bucket")); string(v) != "now a value" || b.Bucket([]byte("was bucket")) != nil {
			t.Errorf("a bucket deleted and made a value in one transaction reads %q", v)
		}
		return nil
	})
}

// testDeleteBucketThenWriteMuch: a bucket deleted stays deleted for the rest of its
// transaction, however much it writes afterwards, and is made again empty.
func testDeleteBucketThenWriteMuch(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		nb, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		nb, err = nb.CreateBucketIfNotExists([]byte("nested"))
		must(t, err)
		return nb.Put([]byte("old"), []byte("v"))
	})
	view(t, db, func(tx kv.Tx) error { tx.Bucket(name).Bucket([]byte("nested")); return nil })
	update(t, db, func(tx kv.Tx) error {
		b := tx.Bucket(name)
		must(t, b.DeleteBucket([]byte("nested")))
		other, err := tx.CreateBucketIfNotExists([]byte("other"))
		must(t, err)
		for i := range 64 {
			must(t, other.Put([]byte{byte(i)}, bytes.Repeat([]byte("x"), 1024)))
		}
		if b.Bucket([]byte("nested")) != nil {
			t.Error("a deleted bucket is back in its transaction after it wrote more")
		}
		nb, err := b.CreateBucketIfNotExists([]byte("nested"))
		must(t, err)
		if nb.Get([]byte("old")) != nil {
			t.Error("a bucket deleted then made again in one transaction holds the old one's keys")
		}
		return nb.Put([]byte("new"), []byte("v"))
	})
	view(t, db, func(tx kv.Tx) error {
		nb := tx.Bucket(name).Bucket([]byte("nested"))
		if nb == nil || nb.Get([]byte("old")) != nil || string(nb.Get([]byte("new"))) != "v" {
			t.Error("after a bucket was deleted and made again, it does not hold just the new key")
		}
		return nil
	})
}

// testDeletedBucketSeenByOlderView: a View that began before a bucket was deleted still
// sees it; the transactions after the delete don't, whatever that View read.
func testDeletedBucketSeenByOlderView(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		must(t, err)
		must(t, b.Put([]byte("k"), []byte("v")))
		nb, err := b.CreateBucketIfNotExists([]byte("doomed"))
		must(t, err)
		return nb.Put([]byte("k"), []byte("v"))
	})
	// The View's function may run again (kv.DB.View): the delete is made by its first run,
	// which sees the bucket still; a second run began after the delete, and doesn't.
	runs := 0
	view(t, db, func(tx kv.Tx) error {
		runs++
		b := tx.Bucket(name)
		b.Get([]byte("k")) // the View has its snapshot
		if runs == 1 {
			done := make(chan error, 1)
			go func() {
				done <- db.Update(func(tx kv.Tx) error { return tx.Bucket(name).DeleteBucket([]byte("doomed")) })
			}()
			select {
			case err := <-done:
				must(t, err)
			case <-time.After(20 * time.Second):
				t.Fatal("an Update waited for a View to end")
			}
		}
		nb := b.Bucket([]byte("doomed"))
		switch {
		case runs > 2:
			t.Errorf("a View's function ran %d times", runs)
		case runs == 1 && (nb == nil || string(nb.Get([]byte("k"))) != "v"):
			t.Error("a View does not see a bucket deleted after it began")
		case runs == 2 && nb != nil && nb.Get([]byte("k")) != nil:
			t.Error("a View's second run sees a bucket deleted before it")
		}
		return nil
	})
	view(t, db, func(tx kv.Tx) error {
		if tx.Bucket(name).Bucket([]byte("doomed")) != nil {
			t.Error("a View after the delete sees the deleted bucket")
		}
		return nil
	})
	update(t, db, func(tx kv.Tx) error {
		if tx.Bucket(name).Bucket([]byte("doomed")) != nil {
			t.Error("an Update after the delete sees the deleted bucket")
		}
		return nil
	})
}

// testTopLevelBuckets: the transaction lists its top-level buckets in order.
func testTopLevelBuckets(t *testing.T, db kv.DB) {
	update(t, db, func(tx kv.Tx) error {
		for _, n := range []string{"b", "\xff", "a", "\x00"} {
			if _, err := tx.CreateBucketIfNotExists([]byte(n)); err != nil {
				return err
			}
		}
		return nil
	})
	var got []string
	view(t, db, func(tx kv.Tx) error {
		return tx.ForEachBucket(func(n []byte) error { got = append(got, string(n)); return nil })
	})
	if want := []string{"\x00", "a", "b", "\xff"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("top-level buckets %q, want %q", got, want)
	}
}

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
		err := db.Update(func(tx kv.Tx) error {
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
