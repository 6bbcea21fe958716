package roundtrips

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// staleAt is replica a, whose next View, once armed with n, is made to run its function
// again after the function's n-th read: then replica b commits and a's cache moves on past
// it, so that the function's next read (a miss) finds the counter moved.
type staleAt struct {
	*pg.DB // a
	b      *pg.DB
	t      *testing.T
	at     int // the read after which b commits; 0: none
	reads  int
}

var probe = []byte("probe")

func (s *staleAt) View(fn func(kv.Tx) error) error {
	return s.DB.View(func(tx kv.Tx) error {
		return fn(countTx{tx, s})
	})
}

// read counts one read of the View's function, and makes b commit after the at-th.
func (s *staleAt) read() {
	if s.reads++; s.reads != s.at {
		return
	}
	s.at = 0
	if err := s.b.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(probe)
		if err != nil {
			return err
		}
		return b.Put(probe, []byte(fmt.Sprint(s.reads)))
	}); err != nil {
		s.t.Fatal(err)
	}
	if err := s.DB.View(func(tx kv.Tx) error { tx.Bucket(probe).Get(probe); return nil }); err != nil {
		s.t.Fatal(err)
	}
}

type countTx struct {
	kv.Tx
	s *staleAt
}

func (t countTx) Bucket(name []byte) kv.Bucket {
	t.s.read()
	return wrap(t.Tx.Bucket(name), t.s)
}

func wrap(b kv.Bucket, s *staleAt) kv.Bucket {
	if b == nil {
		return nil
	}
	return countBucket{b, s}
}

type countBucket struct {
	inner
	s *staleAt
}

type inner = kv.Bucket

func (b countBucket) Get(k []byte) []byte { b.s.read(); return b.inner.Get(k) }
func (b countBucket) Bucket(name []byte) kv.Bucket {
	b.s.read()
	return wrap(b.inner.Bucket(name), b.s)
}
func (b countBucket) Cursor() kv.Cursor { return countCursor{b.inner.Cursor(), b.s} }
func (b countBucket) ForEach(fn func(k, v []byte) error) error {
	return b.inner.ForEach(func(k, v []byte) error { b.s.read(); return fn(k, v) })
}

// GetAll is one read, as the store makes it (kv.GetAll of the bucket inside).
func (b countBucket) GetAll(keys [][]byte) [][]byte { b.s.read(); return kv.GetAll(b.inner, keys) }

type countCursor struct {
	kv.Cursor
	s *staleAt
}

func (c countCursor) First() ([]byte, []byte)        { c.s.read(); return c.Cursor.First() }
func (c countCursor) Last() ([]byte, []byte)         { c.s.read(); return c.Cursor.Last() }
func (c countCursor) Next() ([]byte, []byte)         { c.s.read(); return c.Cursor.Next() }
func (c countCursor) Prev() ([]byte, []byte)         { c.s.read(); return c.Cursor.Prev() }
func (c countCursor) Seek(k []byte) ([]byte, []byte) { c.s.read(); return c.Cursor.Seek(k) }

// TestViewsRunAgain: the domain's reads whose View runs its function again (kv.DB.View)
// answer what they answer when it runs once: nothing doubled, nothing left from the first
// run.
//
//	COMPASS_TEST_POSTGRES=postgres://… go test -run ViewsRunAgain ./e2e/roundtrips
func TestViewsRunAgain(t *testing.T) {
	url := kvtest.URL(t)
	a, b := kvtest.OpenURL(t, url), kvtest.OpenURL(t, url)
	again := &staleAt{DB: a, b: b, t: t}

	author := docstore.Author{By: "agent:north", For: "person:ana"}
	docs := docstore.New(a, "personal")
	var big string
	for i := range 12 {
		d, err := docs.Create(fmt.Sprintf("Note %02d", i), note(5, i), docstore.KindWrite, author)
		if err != nil {
			t.Fatal(err)
		}
		big = d.Document.ID
	}
	for i := range 70 { // more versions than one chunk (Log, Walk, Blame)
		if _, err := docs.Append(big, fmt.Sprintf("line %d\n", i), author); err != nil {
			t.Fatal(err)
		}
	}
	// A document with [[links]], a comment and a proposal: what a read shows with it.
	linked, err := docs.Create("Linked", "See [[Note 00]] and [[Nowhere]].\nA second line.\n", docstore.KindWrite, author)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := docs.Comment(linked.Document.ID, docstore.NewComment{Lines: docstore.LineRange{From: 2, To: 2}, Text: "Which line?", Author: docstore.Author{By: "person:bo"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := docs.Proposing().Append(linked.Document.ID, "A third line.", author); err != nil {
		t.Fatal(err)
	}
	conv := threads.New(a, "personal")
	for i := range 5 {
		if _, err := conv.Say(fmt.Sprintf("c%d", i), fmt.Sprintf("Conversation %d", i), threads.Message{From: "person:ana", Text: "hello"}); err != nil {
			t.Fatal(err)
		}
	}
	people := access.New(a)
	for _, p := range []string{"ana", "bo", "cy"} {
		if _, err := people.AddMember("personal", p); err != nil {
			t.Fatal(err)
		}
		if err := spaces.SetName(a, p, "Name of "+p); err != nil {
			t.Fatal(err)
		}
	}

	reads := map[string]func(db kv.DB) (any, error){
		"docstore List": func(db kv.DB) (any, error) {
			ds, n, err := docstore.New(db, "personal").List(50)
			return []any{ds, n}, err
		},
		"docstore Recent": func(db kv.DB) (any, error) {
			ds, next, n, err := docstore.New(db, "personal").Recent("", 5)
			return []any{ds, next, n}, err
		},
		"docstore Documents": func(db kv.DB) (any, error) { return docstore.New(db, "personal").Documents() },
		"docstore Log": func(db kv.DB) (any, error) {
			_, vs, err := docstore.New(db, "personal").Log(big)
			return vs, err
		},
		"docstore Walk": func(db kv.DB) (any, error) {
			var ns []int
			err := docstore.New(db, "personal").Walk(big, func(v docstore.Version) error { ns = append(ns, v.Number); return nil })
			return ns, err
		},
		"docstore Blame": func(db kv.DB) (any, error) { return docstore.New(db, "personal").Blame(big) },
		"docstore LogID": func(db kv.DB) (any, error) {
			d, vs, ok, err := docstore.New(db, "personal").LogID(big)
			return fmt.Sprint(d, vs, ok), err
		},
		"docstore ReadLinkedID": func(db kv.DB) (any, error) {
			r, ok, err := docstore.New(db, "personal").ReadLinkedID(big, 0, 10)
			return []any{r, ok}, err
		},
		"docstore ReadNoted": func(db kv.DB) (any, error) {
			return docstore.New(db, "personal").ReadNoted("Linked", 0, 10, author, 5)
		},
		"docstore ReadLinkedID, with links": func(db kv.DB) (any, error) {
			r, ok, err := docstore.New(db, "personal").ReadLinkedID(linked.Document.ID, 0, 10)
			return []any{r, ok}, err
		},
		"docstore Links": func(db kv.DB) (any, error) {
			d, ls, err := docstore.New(db, "personal").Links("Note 00", 10)
			return []any{d, ls}, err
		},
		"docstore WithNames": func(db kv.DB) (any, error) {
			docs := docstore.New(db, "personal").WithNames()
			ds, _, err := docs.List(50)
			if err != nil {
				return nil, err
			}
			var shown []string
			err = docs.Names(func(n spaces.Names) {
				for _, d := range ds {
					shown = append(shown, d.Author.Show(n))
				}
				shown = append(shown, n.ShowString("person:bo"))
			})
			return shown, err
		},
		"docstore Names": func(db kv.DB) (any, error) {
			var shown []string
			err := docstore.New(db, "personal").Names(func(n spaces.Names) {
				shown = append(shown, n.ShowString("person:ana"), n.ShowString("person:bo"))
			})
			return shown, err
		},
		"threads Recent": func(db kv.DB) (any, error) { return threads.New(db, "personal").Recent(10, "") },
		"access Members": func(db kv.DB) (any, error) { return access.New(db).Members("personal") },
		"spaces People":  func(db kv.DB) (any, error) { return spaces.People(db) },
	}
	// Those whose every read after the first is of what the transaction read already (one
	// cursor's page, keys read ahead) never miss, so never run again: nothing to check.
	once := map[string]bool{"docstore Documents": true, "docstore Names": true, "spaces People": true}
	for name, read := range reads {
		want, err := read(a)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// b commits after the function's first read, then its second, and so on, until a
		// run reads too little to be reached: every read may be the one a run stops at.
		runs := 0
		for at := 1; ; at++ {
			restarts := a.Restarts()
			for range 2 { // the second: the function's reads all served by a's cache
				if _, err := read(a); err != nil {
					t.Fatal(err)
				}
			}
			again.at, again.reads = at, 0
			got, err := read(again)
			if err != nil {
				t.Errorf("%s, b committing after read %d: %v", name, at, err)
				break
			}
			if again.at != 0 {
				break // fewer reads than at: b did not commit
			}
			if a.Restarts() > restarts {
				runs++
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, b committing after read %d, answers\n%v\nwant\n%v", name, at, got, want)
				break
			}
		}
		if runs == 0 && !once[name] {
			t.Errorf("%s: its View never ran again (the test no longer makes it)", name)
		}
		t.Logf("%s: ran again %d times, with the same answer", name, runs)
	}
}
