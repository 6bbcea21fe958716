package docstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

var north = docstore.Author{By: "agent:north", For: "person:ana"}

// open returns a store on a fresh store of whichever store the tests run on (kvtest.Open).
func open(t testing.TB, space string) *docstore.Store {
	t.Helper()
	return docstore.New(kvtest.Open(t), space)
}

func mustCreate(t testing.TB, s *docstore.Store, title, text string) docstore.Document {
	t.Helper()
	saved, err := s.Create(t.Context(), title, text, docstore.KindWrite, north)
	if err != nil {
		t.Fatal(err)
	}
	return saved.Document
}

func TestFindByIDTitleAndWords(t *testing.T) {
	s := open(t, "personal")
	plan := mustCreate(t, s, "Launch plan", "a\n")
	mustCreate(t, s, "Pricing plan", "b\n")
	mustCreate(t, s, "Launch", "c\n")
	for _, tc := range []struct {
		name, want string
	}{
		{plan.ID, "Launch plan"},
		{"launch PLAN", "Launch plan"},
		{"launch", "Launch"}, // exact title first, though "Launch plan" contains it
		{"pricing", "Pricing plan"},
		{"plan pricing", "Pricing plan"}, // every word, in any order
		{"  Launch plan ", "Launch plan"},
	} {
		d, err := find(t, s, tc.name)
		if err != nil || d.Title != tc.want {
			t.Errorf("Find(%q) = %q, %v; want %q", tc.name, d.Title, err, tc.want)
		}
	}
	var amb *docstore.AmbiguousError
	if _, err := find(t, s, "plan"); !errors.As(err, &amb) || len(amb.Matches) != 2 {
		t.Errorf("Find(plan) = %v, want ambiguity between two", err)
	}
	for _, name := range []string{"", "nothing", "01JDX0000000000000000000000"} {
		if _, err := find(t, s, name); !errors.Is(err, docstore.ErrNotFound) {
			t.Errorf("Find(%q) = %v, want ErrNotFound", name, err)
		}
	}
}

func TestSpacesAreApart(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	s := docstore.New(db, "launch")
	d := mustCreate(t, s, "Secret", "x\n")
	other := docstore.New(db, "personal")
	for _, name := range []string{d.ID, "Secret", "secr"} {
		if _, err := find(t, other, name); !errors.Is(err, docstore.ErrNotFound) {
			t.Errorf("another space finds %q: %v", name, err)
		}
		if _, err := other.Append(ctx, name, "more", north); !errors.Is(err, docstore.ErrNotFound) {
			t.Errorf("another space appends to %q: %v", name, err)
		}
	}
	if _, err := other.Create(ctx, "secret", "mine\n", docstore.KindWrite, north); err != nil {
		t.Errorf("the same title in another space: %v", err)
	}
	if docs, total, _ := view2(t, other, func(r *docstore.Reader) ([]docstore.Document, int, error) { return r.List(10) }); total != 1 || len(docs) != 1 || docs[0].Title != "secret" {
		t.Errorf("another space lists %v (%d)", docs, total)
	}
}

func TestVersionsReadBack(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", "one\n")
	if _, err := s.Append(ctx, d.ID, "two", north); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Edit(ctx, d.ID, "two", "2", docstore.Author{By: "person:ana"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, d.ID, "Roadmap", "all new\n", 0, north); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		title, text string
		kind        docstore.Kind
		by          string
		added, rem  int
	}{
		{"Plan", "one\n", docstore.KindWrite, "agent:north", 1, 0},
		{"Plan", "one\n\ntwo\n", docstore.KindAppend, "agent:north", 2, 0},
		{"Plan", "one\n\n2\n", docstore.KindEdit, "person:ana", 1, 1},
		{"Roadmap", "all new\n", docstore.KindWrite, "agent:north", 1, 3},
	}
	for i, w := range want {
		_, v, err := read(t, s, "roadmap", i+1)
		if err != nil {
			t.Fatal(err)
		}
		if v.Number != i+1 || v.Title != w.title || v.Text != w.text || v.Kind != w.kind || v.Author.By != w.by || v.Added != w.added || v.Removed != w.rem {
			t.Errorf("version %d = %+v, want %+v", i+1, v, w)
		}
	}
	var nv *docstore.NoVersionError
	if _, _, err := read(t, s, "Roadmap", 5); !errors.As(err, &nv) || nv.Document.Version != 4 {
		t.Errorf("Read version 5 = %v, want NoVersionError with 4 versions", err)
	}
	if _, err := find(t, s, "Plan"); !errors.Is(err, docstore.ErrNotFound) {
		t.Errorf("the old title still finds the document: %v", err)
	}
}

func TestNoChangeMakesNoVersion(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", "one\n")
	for _, change := range []func() (docstore.Saved, error){
		func() (docstore.Saved, error) { return s.Write(ctx, d.ID, "", "one\n", 0, north) },
		func() (docstore.Saved, error) { return s.Write(ctx, d.ID, "plan", "one\n", 0, north) }, // a title differs only in case: a rename
		func() (docstore.Saved, error) { return s.Edit(ctx, d.ID, "one", "one", north) },
	} {
		if _, err := change(); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := find(t, s, d.ID)
	if got.Version != 2 || got.Title != "plan" {
		t.Errorf("after no-op changes and one rename: version %d title %q, want 2 %q", got.Version, got.Title, "plan")
	}
}

func TestTitlesAreUnique(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	a := mustCreate(t, s, "Plan", "a\n")
	b := mustCreate(t, s, "Other", "b\n")
	var taken *docstore.TitleTakenError
	if _, err := s.Create(ctx, "PLAN", "x", docstore.KindWrite, north); !errors.As(err, &taken) || taken.Other.ID != a.ID {
		t.Errorf("Create(PLAN) = %v, want the title taken by %s", err, a.ID)
	}
	if _, err := s.Write(ctx, b.ID, "plan ", "b\n", 0, north); !errors.As(err, &taken) {
		t.Errorf("renaming onto another's title = %v, want TitleTakenError", err)
	}
}

func TestEditRefusals(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Notes", "- a\n  - b\n- a\n")
	var many *docstore.EditManyError
	if _, err := s.Edit(ctx, d.ID, "- a", "x", north); !errors.As(err, &many) || fmt.Sprint(many.Lines) != "[1 3]" {
		t.Errorf("Edit of a twice-there text = %v, want lines [1 3]", err)
	}
	var miss *docstore.EditMissError
	if _, err := s.Edit(ctx, d.ID, "- a\n- b", "x", north); !errors.As(err, &miss) || len(miss.Near) != 1 || miss.Near[0].Line != 1 || miss.Near[0].Text != "- a\n  - b" {
		t.Errorf("Edit with other indentation = %#v, want a near match at line 1", err)
	}
	if _, err := s.Edit(ctx, d.ID, "zzz", "x", north); !errors.As(err, &miss) || len(miss.Near) != 0 {
		t.Errorf("Edit of absent text = %v, want a miss with no near matches", err)
	}
	if _, err := s.Edit(ctx, d.ID, "", "x", north); !errors.Is(err, docstore.ErrEmptyOld) {
		t.Errorf("Edit with empty old = %v", err)
	}
	if got, _ := find(t, s, d.ID); got.Version != 1 {
		t.Errorf("refused edits made versions: %d", got.Version)
	}
}

func TestListLatestFirst(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	clock := time.Date(2026, 11, 8, 10, 0, 0, 0, time.UTC)
	s = s.WithClock(func() time.Time { clock = clock.Add(time.Minute); return clock })
	for _, title := range []string{"a", "b", "c"} {
		mustCreate(t, s, title, title+"\n")
	}
	if _, err := s.Append(ctx, "a", "more", north); err != nil {
		t.Fatal(err)
	}
	docs, total, err := view2(t, s, func(r *docstore.Reader) ([]docstore.Document, int, error) { return r.List(2) })
	if err != nil || total != 3 || len(docs) != 2 || docs[0].Title != "a" || docs[1].Title != "c" {
		t.Errorf("List(2) = %v, %d, %v; want a, c of 3", docs, total, err)
	}
}

func TestBadTitlesAndTexts(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	for _, title := range []string{"", "   ", "a\nb", "a\x00b", "tab\there", strings.Repeat("x", 201), "\xff"} {
		if _, err := s.Create(ctx, title, "x", docstore.KindWrite, north); !errors.Is(err, docstore.ErrBadTitle) {
			t.Errorf("Create(%q) = %v, want ErrBadTitle", title, err)
		}
	}
	for _, text := range []string{strings.Repeat("x", docstore.MaxText+1), "a\x00b", "\xff\xfe"} {
		if _, err := s.Create(ctx, "t", text, docstore.KindWrite, north); !errors.Is(err, docstore.ErrBadText) {
			t.Errorf("Create(text of %d bytes) = %v, want ErrBadText", len(text), err)
		}
	}
}

// Many goroutines writing at once: no lost update, versions 1..n, ids unique and sorted.
func TestConcurrentChanges(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Log", "")
	var wg sync.WaitGroup
	ids := make(chan string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				if _, err := s.Append(ctx, d.ID, fmt.Sprintf("g%d-%d", g, i), north); err != nil {
					t.Error(err)
				}
				saved, err := s.Create(ctx, fmt.Sprintf("doc %d-%d", g, i), "x", docstore.KindWrite, north)
				if err != nil {
					t.Error(err)
				}
				ids <- saved.Document.ID
			}
		}()
	}
	wg.Wait()
	close(ids)
	_, v, err := read(t, s, d.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.Number != 65 {
		t.Errorf("64 appends made version %d, want 65", v.Number)
	}
	for g := range 8 {
		for i := range 8 {
			if !strings.Contains(v.Text, fmt.Sprintf("g%d-%d", g, i)) {
				t.Errorf("append g%d-%d lost", g, i)
			}
		}
	}
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("id %s made twice", id)
		}
		seen[id] = true
	}
}

func ExampleStore_Edit() {
	db, _ := bolt.OpenFile(filepath.Join(exampleDir(), "compass.db"), time.Second, time.Second)
	defer db.Close()
	s := docstore.New(db, "personal")
	north := docstore.Author{By: "agent:north", For: "person:ana"}
	ctx := context.Background()
	s.Create(ctx, "Launch plan", "Record the trailer.\nReview the course page.\n", docstore.KindWrite, north)
	saved, _ := s.Edit(ctx, "launch", "Record the trailer.", "Record the trailer on Monday.", north)
	fmt.Printf("version %d: +%d -%d\n", saved.Document.Version, saved.Added, saved.Removed)
	var v docstore.Version
	s.View(ctx, func(r *docstore.Reader) (err error) {
		_, v, err = r.Read("Launch plan", 0)
		return err
	})
	fmt.Print(v.Text)
	// Output:
	// version 2: +1 -1
	// Record the trailer on Monday.
	// Review the course page.
}

func exampleDir() string {
	dir := filepath.Join(tmp, fmt.Sprint(rand.Int64()))
	return dir
}
