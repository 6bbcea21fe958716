package kvtest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
)

// The contract's cursor cases: key order, walks against a model, deletes under a cursor.

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
