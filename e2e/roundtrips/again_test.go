package roundtrips

import (
	"context"
	"errors"
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

func (s *staleAt) View(ctx context.Context, fn func(kv.Tx) error) error {
	return s.DB.View(ctx, func(tx kv.Tx) error {
		return fn(countTx{tx, s})
	})
}

// read counts one read of the View's function, and makes b commit after the at-th.
func (s *staleAt) read() {
	if s.reads++; s.reads != s.at {
		return
	}
	s.at = 0
	if err := s.b.Update(s.t.Context(), func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(probe)
		if err != nil {
			return err
		}
		return b.Put(probe, []byte(fmt.Sprint(s.reads)))
	}); err != nil {
		s.t.Fatal(err)
	}
	if err := s.DB.View(s.t.Context(), func(tx kv.Tx) error { tx.Bucket(probe).Get(probe); return nil }); err != nil {
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
// run. Where a call composes reads in one Store.View (read_document's Read, Notes and
// Links; the document page's ByID, Read, Links and Targets), the case composes them so.
//
//	COMPASS_TEST_POSTGRES=postgres://… go test -run ViewsRunAgain ./e2e/roundtrips
func TestViewsRunAgain(t *testing.T) {
	ctx := t.Context()
	url := kvtest.URL(t)
	a, b := kvtest.OpenURL(t, url), kvtest.OpenURL(t, url)
	again := &staleAt{DB: a, b: b, t: t}

	author := docstore.Author{By: "agent:north", For: "person:ana"}
	docs := docstore.New(a, "personal")
	var big string
	for i := range 12 {
		d, err := docs.Create(ctx, fmt.Sprintf("Note %02d", i), note(5, i), docstore.KindWrite, author)
		if err != nil {
			t.Fatal(err)
		}
		big = d.Document.ID
	}
	for i := range 70 { // more versions than one chunk (Walk, Blame)
		if _, err := docs.Append(ctx, big, fmt.Sprintf("line %d\n", i), author); err != nil {
			t.Fatal(err)
		}
	}
	// A document with [[links]], a comment and a proposal: what a read shows with it.
	linked, err := docs.Create(ctx, "Linked", "See [[Note 00]] and [[Nowhere]].\nA second line.\n", docstore.KindWrite, author)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := docs.Comment(ctx, linked.Document.ID, docstore.NewComment{Lines: docstore.LineRange{From: 2, To: 2}, Text: "Which line?", Author: docstore.Author{By: "person:bo"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := docs.Proposing().Append(ctx, linked.Document.ID, "A third line.", author); err != nil {
		t.Fatal(err)
	}
	conv := threads.New(a, "personal")
	for i := range 5 {
		if _, err := conv.Say(ctx, fmt.Sprintf("c%d", i), fmt.Sprintf("Conversation %d", i), threads.Message{From: "person:ana", Text: "hello"}); err != nil {
			t.Fatal(err)
		}
	}
	people := access.New(a)
	for _, p := range []string{"ana", "bo", "cy"} {
		if _, err := people.AddMember(ctx, "personal", p); err != nil {
			t.Fatal(err)
		}
		if err := spaces.SetName(ctx, a, p, "Name of "+p); err != nil {
			t.Fatal(err)
		}
	}

	// view is what fn reads in one View of the space's documents in db.
	view := func(db kv.DB, fn func(r *docstore.Reader) (any, error)) (any, error) {
		var got any
		err := docstore.New(db, "personal").View(ctx, func(r *docstore.Reader) (err error) {
			got, err = fn(r)
			return err
		})
		return got, err
	}
	// readLinked is a read of a version and what is shown with it, in one View: Read, the
	// Notes for author when notes (read_document's), the Links of the latest version, and
	// the Targets of its [[Titles]] when targets (the page's).
	readLinked := func(r *docstore.Reader, name string, notes, targets bool) (reading, error) {
		var (
			rd  reading
			err error
		)
		if rd.Document, rd.Version, err = r.Read(name, 0); err != nil {
			return rd, err
		}
		d, v := rd.Document, rd.Version
		if notes {
			if rd.Notes, err = r.Notes(d.ID, v.Number, author, 5); err != nil {
				return rd, err
			}
		}
		if v.Number == d.Version {
			if rd.Links, err = r.Links(d, 10); err != nil {
				return rd, err
			}
		}
		if targets {
			rd.Targets, err = r.Targets(d.ID, docstore.WikiTitles(v.Text))
		}
		return rd, err
	}
	// byIDLinked is the page's read of document id: ByID, then readLinked with its Targets
	// when the space has a record of id (recorded), all in one View.
	byIDLinked := func(r *docstore.Reader, id string) (any, error) {
		if _, err := r.ByID(id); errors.Is(err, docstore.ErrNotFound) {
			return []any{reading{}, false}, nil
		} else if err != nil {
			return nil, err
		}
		rd, err := readLinked(r, id, false, true)
		return []any{rd, true}, err
	}

	reads := map[string]func(db kv.DB) (any, error){
		"docstore List": func(db kv.DB) (any, error) {
			return view(db, func(r *docstore.Reader) (any, error) {
				ds, n, err := r.List(50)
				return []any{ds, n}, err
			})
		},
		"docstore Recent": func(db kv.DB) (any, error) {
			return view(db, func(r *docstore.Reader) (any, error) {
				ds, next, n, err := r.Recent("", 5)
				return []any{ds, next, n}, err
			})
		},
		"docstore Documents": func(db kv.DB) (any, error) {
			return view(db, func(r *docstore.Reader) (any, error) { return r.Documents() })
		},
		"docstore Log": func(db kv.DB) (any, error) {
			return view(db, func(r *docstore.Reader) (any, error) {
				_, vs, err := r.Log(big)
				return vs, err
			})
		},
		"docstore Walk": func(db kv.DB) (any, error) {
			var ns []int
			err := docstore.New(db, "personal").Walk(ctx, big, func(v docstore.Version) error { ns = append(ns, v.Number); return nil })
			return ns, err
		},
		"docstore Blame": func(db kv.DB) (any, error) { return docstore.New(db, "personal").Blame(ctx, big) },
		// The history page's read: ByID, then Log of the id it found.
		"docstore ByID and Log": func(db kv.DB) (any, error) {
			return view(db, func(r *docstore.Reader) (any, error) {
				if _, err := r.ByID(big); errors.Is(err, docstore.ErrNotFound) {
					return fmt.Sprint(docstore.Document{}, []docstore.Version(nil), false), nil
				} else if err != nil {
					return nil, err
				}
				d, vs, err := r.Log(big)
				return fmt.Sprint(d, vs, true), err
			})
		},
		// The document page's read (web's viewDoc, then showVersion), of a document without
		// links, then of one with them.
		"docstore ByID, Read, Links and Targets": func(db kv.DB) (any, error) {
			return view(db, func(r *docstore.Reader) (any, error) { return byIDLinked(r, big) })
		},
		"docstore ByID, Read, Links and Targets, with links": func(db kv.DB) (any, error) {
			return view(db, func(r *docstore.Reader) (any, error) { return byIDLinked(r, linked.Document.ID) })
		},
		// read_document's read (tools' readWhole).
		"docstore Read, Notes and Links": func(db kv.DB) (any, error) {
			return view(db, func(r *docstore.Reader) (any, error) { return readLinked(r, "Linked", true, false) })
		},
		"docstore Links": func(db kv.DB) (any, error) {
			return view(db, func(r *docstore.Reader) (any, error) {
				d, err := r.Find("Note 00")
				if err != nil {
					return nil, err
				}
				ls, err := r.Links(d, 10)
				return []any{d, ls}, err
			})
		},
		// A listing and the names it shows (list_documents).
		"docstore List and Names": func(db kv.DB) (any, error) {
			return view(db, func(r *docstore.Reader) (any, error) {
				ds, _, err := r.List(50)
				if err != nil {
					return nil, err
				}
				n := r.Names()
				var shown []string
				for _, d := range ds {
					shown = append(shown, d.Author.Show(n))
				}
				return append(shown, n.ShowString("person:bo")), nil
			})
		},
		"docstore Names": func(db kv.DB) (any, error) {
			return view(db, func(r *docstore.Reader) (any, error) {
				n := r.Names()
				return []string{n.ShowString("person:ana"), n.ShowString("person:bo")}, nil
			})
		},
		"threads Recent": func(db kv.DB) (any, error) {
			var got []threads.Conversation
			err := threads.New(db, "personal").View(ctx, func(r *threads.Reader) (err error) {
				got, err = r.Recent(10, "")
				return err
			})
			return got, err
		},
		"access Members": func(db kv.DB) (any, error) { return access.New(db).Members(ctx, "personal") },
		"spaces People":  func(db kv.DB) (any, error) { return spaces.People(ctx, db) },
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

// reading is a version of a document and what is shown with it, read in one View.
type reading struct {
	Document docstore.Document
	Version  docstore.Version
	Notes    docstore.Notes             // read_document's: what a reader is told after the text
	Links    docstore.Links             // the document's, when Version is its latest
	Targets  map[string]docstore.Target // the page's: what the version's [[Titles]] name now
}
