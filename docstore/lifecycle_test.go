package docstore_test

import (
	"errors"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

func TestRestoreRenameDelete(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", "one\n")
	mustCreate(t, s, "Other", "x\n")
	if _, err := s.Write(ctx, d.ID, "", "two\n", 0, north); err != nil {
		t.Fatal(err)
	}
	if saved, err := s.Restore(ctx, "plan", 1, ana); err != nil || saved.Kind != docstore.KindRestore || saved.Document.Version != 3 {
		t.Fatalf("Restore = %+v, %v", saved, err)
	}
	var taken *docstore.TitleTakenError
	if _, err := s.Rename(ctx, "plan", "OTHER", ana); !errors.As(err, &taken) {
		t.Errorf("renaming onto another's title = %v", err)
	}
	if saved, err := s.Rename(ctx, "plan", "Roadmap", ana); err != nil || saved.Kind != docstore.KindRename {
		t.Fatalf("Rename = %+v, %v", saved, err)
	}
	if _, err := s.Delete(ctx, "roadmap", ana); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{d.ID, "Roadmap"} {
		if _, err := find(t, s, name); !errors.Is(err, docstore.ErrNotFound) {
			t.Errorf("Find(%q) of a deleted document = %v", name, err)
		}
	}
	if docs, total, _ := view2(t, s, func(r *docstore.Reader) ([]docstore.Document, int, error) { return r.List(10) }); total != 1 || len(docs) != 1 {
		t.Errorf("List after a delete = %v (%d)", docs, total)
	}
	if del, _ := view(t, s, func(r *docstore.Reader) ([]docstore.Document, error) { return r.Deleted() }); len(del) != 1 || del[0].ID != d.ID || del[0].Deleted.By != ana {
		t.Errorf("Deleted = %v", del)
	}
	mustCreate(t, s, "roadmap", "taken meanwhile\n")
	if _, err := s.Undelete(ctx, d.ID); !errors.As(err, &taken) {
		t.Errorf("undeleting onto a taken title = %v", err)
	}
	if _, err := s.Delete(ctx, "roadmap", ana); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Undelete(ctx, d.ID); err != nil || got.Version != 4 {
		t.Fatalf("Undelete = %+v, %v", got, err)
	}
	if _, v, err := read(t, s, "Roadmap", 3); err != nil || v.Text != "one\n" {
		t.Errorf("an undeleted document's versions: %q, %v", v.Text, err)
	}
	if _, err := s.Purge(ctx, "roadmap"); err != nil {
		t.Fatalf("purging the other deleted one: %v", err)
	}
	if del, _ := view(t, s, func(r *docstore.Reader) ([]docstore.Document, error) { return r.Deleted() }); len(del) != 0 {
		t.Errorf("after purge, deleted = %v", del)
	}
}
