package docstore_test

import (
	"errors"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// Titles that look the same are refused, naming the document that has the look (issue 36,
// item 16): a no-break space, a fullwidth letter, two spaces; an invisible character is
// refused outright; a file written before keeps its look-alike titles opening and saving.
func TestLookAlikeTitles(t *testing.T) {
	ctx := t.Context()
	s := open(t, "team")
	by := docstore.Author{By: "person:ana"}
	plan, err := s.Create(ctx, "Launch plan", "v1\n", docstore.KindWrite, by)
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"Launch\u00a0plan", "Ｌaunch plan", "Launch  plan", "launch\u2003PLAN", "Launch plan\ufe0f", "LAUNCH PLAN\u00a0"} {
		_, err := s.Create(ctx, title, "x\n", docstore.KindWrite, by)
		var taken *docstore.TitleTakenError
		if !errors.As(err, &taken) || taken.Other.ID != plan.Document.ID {
			t.Errorf("Create(%q) = %v, want the title taken by Launch plan", title, err)
		}
	}
	for _, title := range []string{"Launch\u200bplan", "Launch plan\u200b", "\u2060Launch plan", "Launch\u00adplan", "Launch\u3164plan", "Launch\u200dplan", "Launch\u202eplan"} {
		if _, err := s.Create(ctx, title, "x\n", docstore.KindWrite, by); !errors.Is(err, docstore.ErrBadTitle) {
			t.Errorf("Create(%q) = %v, want ErrBadTitle", title, err)
		}
	}
	for _, title := range []string{"Launch plan 2", "Launch plans", "👩‍💻 Launch plan", "Café plan", "計画"} {
		if _, err := s.Create(ctx, title, "x\n", docstore.KindWrite, by); err != nil {
			t.Errorf("Create(%q) = %v, want it made", title, err)
		}
	}
	// Renames: to another's look is refused; to one's own look is a rename.
	if _, err := s.Rename(ctx, "Launch plan 2", "Launch\u00a0plan", by); !isAlike(err, plan.Document.ID) {
		t.Errorf("renaming to a look-alike = %v", err)
	}
	if _, err := s.Rename(ctx, "Launch plan", "Launch  plan", by); err != nil {
		t.Errorf("renaming to its own look = %v", err)
	}
	if _, err := s.Rename(ctx, "Launch  plan", "Launch plan", by); err != nil {
		t.Fatal(err)
	}
	// Deleted, its look is free; undeleted, it is checked again.
	if _, err := s.Delete(ctx, "Launch plan", by); err != nil {
		t.Fatal(err)
	}
	twin, err := s.Create(ctx, "Launch\u00a0plan", "x\n", docstore.KindWrite, by)
	if err != nil {
		t.Fatalf("the look of a deleted document: %v", err)
	}
	if _, err := s.Undelete(ctx, plan.Document.ID); !isAlike(err, twin.Document.ID) {
		t.Errorf("undeleting beside a look-alike = %v", err)
	}
}

// A file written before look-alike titles: its titles are kept (doc_alike is built from
// them at the first write that asks), two that already look alike both keep opening and
// saving, and a third is refused.
func TestLookAlikeTitlesOfAnOlderFile(t *testing.T) {
	ctx := t.Context()
	s := open(t, "team")
	by := docstore.Author{By: "person:ana"}
	a, err := s.CreateAsBefore(ctx, "Launch plan", "a\n")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateAsBefore(ctx, "Launch\u00a0plan", "b\n")
	if err != nil {
		t.Fatal(err)
	}
	zw, err := s.CreateAsBefore(ctx, "Zero\u200bwidth", "z\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []docstore.Document{a, b, zw} {
		if _, err := s.Append(ctx, d.ID, "more", by); err != nil {
			t.Errorf("saving %q of the older file: %v", d.Title, err)
		}
		var got docstore.Document
		if err := s.View(ctx, func(r *docstore.Reader) (err error) {
			got, err = r.Find(d.Title)
			return err
		}); err != nil || got.ID != d.ID {
			t.Errorf("opening %q by its title: %v, %v", d.Title, got.ID, err)
		}
	}
	if _, err := s.Create(ctx, "launch  plan", "c\n", docstore.KindWrite, by); !isAlike(err, a.ID) && !isAlike(err, b.ID) {
		t.Errorf("a third look-alike = %v", err)
	}
}

func isAlike(err error, id string) bool {
	var taken *docstore.TitleTakenError
	return errors.As(err, &taken) && taken.Alike && taken.Other.ID == id
}
