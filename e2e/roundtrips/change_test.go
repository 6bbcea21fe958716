package roundtrips

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// A change to a document on replica a, whose cache is a commit behind (replica b wrote the
// document since a last read it): a's read works the change out on the old version, with no
// round trip to find out (kv.Change), and what a then does must be what it would do on b's
// version: nothing of b's lost, an edit of text b removed refused, an edit of text b added
// made, and a write of b's text unchanged.
//
//	COMPASS_TEST_POSTGRES=postgres://… go test -run ChangesOnAStaleCache ./e2e/roundtrips
func TestChangesOnAStaleCache(t *testing.T) {
	url := kvtest.URL(t)
	author := docstore.Author{By: "agent:north", For: "person:ana"}
	for i, tc := range []struct {
		name string
		// b is what replica b does first; a what a does after, on its stale cache.
		b, a    func(ctx context.Context, d *docstore.Store, id string) (docstore.Saved, error)
		text    string // the document's text after, "" when a's change is refused
		refused bool   // a's change is refused as an edit of text that isn't there
	}{
		{"both append", func(ctx context.Context, d *docstore.Store, id string) (docstore.Saved, error) {
			return d.Append(ctx, id, "b's line", author)
		}, func(ctx context.Context, d *docstore.Store, id string) (docstore.Saved, error) {
			return d.Append(ctx, id, "a's line", author)
		}, "one\ntwo\nthree\n\nb's line\n\na's line\n", false},
		{"a edits a line b did not touch", func(ctx context.Context, d *docstore.Store, id string) (docstore.Saved, error) {
			return d.Edit(ctx, id, "three", "THREE", author)
		}, func(ctx context.Context, d *docstore.Store, id string) (docstore.Saved, error) {
			return d.Edit(ctx, id, "one", "ONE", author)
		}, "ONE\ntwo\nTHREE\n", false},
		{"a edits what b removed", func(ctx context.Context, d *docstore.Store, id string) (docstore.Saved, error) {
			return d.Edit(ctx, id, "two\n", "", author)
		}, func(ctx context.Context, d *docstore.Store, id string) (docstore.Saved, error) {
			return d.Edit(ctx, id, "two", "2", author)
		}, "", true},
		{"a edits what b added", func(ctx context.Context, d *docstore.Store, id string) (docstore.Saved, error) {
			return d.Edit(ctx, id, "two", "two and a half", author)
		}, func(ctx context.Context, d *docstore.Store, id string) (docstore.Saved, error) {
			return d.Edit(ctx, id, "a half", "a third", author)
		}, "one\ntwo and a third\nthree\n", false},
		{"a writes b's text", func(ctx context.Context, d *docstore.Store, id string) (docstore.Saved, error) {
			return d.Write(ctx, id, "", "b's text\n", 0, author)
		}, func(ctx context.Context, d *docstore.Store, id string) (docstore.Saved, error) {
			return d.Write(ctx, id, "", "b's text\n", 0, author)
		}, "b's text\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := kvtest.OpenURL(t, url), kvtest.OpenURL(t, url)
			space := fmt.Sprintf("stale%d", i)
			da, db := docstore.New(a, space), docstore.New(b, space)
			ctx := t.Context()
			made, err := da.Create(ctx, "Plan", "one\ntwo\nthree\n", docstore.KindWrite, author)
			if err != nil {
				t.Fatal(err)
			}
			id := made.Document.ID
			for range 2 { // a's cache holds the document
				if _, _, err := latest(t, da, id); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := tc.b(ctx, db, id); err != nil {
				t.Fatal(err)
			}
			restarts := a.Restarts()
			saved, err := tc.a(ctx, da, id)
			if a.Restarts() == restarts {
				t.Errorf("a's change ran nothing again: its cache was not behind, and the case shows nothing")
			}
			var miss *docstore.EditMissError
			if tc.refused {
				if !errors.As(err, &miss) {
					t.Fatalf("a's change: %v, want it refused, its text not there", err)
				}
			} else if err != nil {
				t.Fatalf("a's change: %v", err)
			}
			for name, d := range map[string]*docstore.Store{"a": da, "b": db} {
				doc, v, err := latest(t, d, id)
				if err != nil {
					t.Fatal(err)
				}
				want := tc.text
				if want == "" {
					want = "one\nthree\n" // b's, a's refused
				}
				if v.Text != want {
					t.Errorf("%s reads %q (version %d), want %q", name, v.Text, doc.Version, want)
				}
			}
			if tc.name == "a writes b's text" && !saved.Unchanged {
				t.Errorf("a's write of b's text saved version %d, want unchanged", saved.Document.Version)
			}
		})
	}
}

// A comment on replica a, whose cache is a commit behind: the document it names was made on
// replica b since (a's read finds none there, and is checked before a refuses), and a line it
// names was added on b (a's write reads the document again, and finds it).
func TestCommentOnAStaleCache(t *testing.T) {
	url := kvtest.URL(t)
	a, b := kvtest.OpenURL(t, url), kvtest.OpenURL(t, url)
	author := docstore.Author{By: "agent:north", For: "person:ana"}
	da, db := docstore.New(a, "stalecomments"), docstore.New(b, "stalecomments")
	ctx := t.Context()
	if _, err := da.Create(ctx, "Old", "one\n", docstore.KindWrite, author); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a's cache holds the space
		if _, _, err := latest(t, da, "Old"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Create(ctx, "Fresh", "one\n", docstore.KindWrite, author); err != nil {
		t.Fatal(err)
	}
	restarts := a.Restarts()
	got, err := da.Comment(ctx, "Fresh", docstore.NewComment{Lines: docstore.LineRange{From: 1, To: 1}, Text: "on b's new document", Author: author})
	c, d := got.Comment, got.Document
	if err != nil || d.Title != "Fresh" || c.Number != 1 {
		t.Fatalf("a's comment on b's new document: %v, %+v on %q", err, c, d.Title)
	}
	if a.Restarts() == restarts {
		t.Errorf("a's comment ran nothing again: its cache was not behind, and the case shows nothing")
	}
	if _, err := db.Append(ctx, "Old", "two\nthree", author); err != nil {
		t.Fatal(err)
	}
	got, err = da.Comment(ctx, "Old", docstore.NewComment{Lines: docstore.LineRange{From: 4, To: 4}, Text: "on b's new line", Author: author}) // after a blank line
	c, d = got.Comment, got.Document
	if err != nil || c.Quote != "three" {
		t.Fatalf("a's comment on b's new line: %v, %+v on %q version %d", err, c, d.Title, d.Version)
	}
}
