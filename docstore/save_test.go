package docstore_test

import (
	"errors"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
)

var ana = docstore.Author{By: "person:ana"}

func TestSaveMergesOrClashes(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", "a\nb\nc\nd\ne\n")
	if _, err := s.Edit(ctx, d.ID, "a\n", "A\n", north); err != nil {
		t.Fatal(err)
	}
	saved, err := s.Save(ctx, d.ID, 1, "a\nb\nc\nd\nE\n", ana, linediff.Clash)
	if err != nil || saved.Kind != docstore.KindMerge || saved.Document.Version != 3 {
		t.Fatalf("Save from version 1 = %+v, %v; want a merge as version 3", saved, err)
	}
	if _, v, _ := read(t, s, d.ID, 0); v.Text != "A\nb\nc\nd\nE\n" || v.Author != ana {
		t.Errorf("merged text %q by %v", v.Text, v.Author)
	}
	var clash *docstore.ClashError
	if _, err := s.Save(ctx, d.ID, 2, "a\nb\nc\nd\nX\n", ana, linediff.Clash); !errors.As(err, &clash) || clash.Document.Version != 3 || clash.Base != 2 || len(clash.Conflicts) != 1 {
		t.Fatalf("a clashing save = %v", err)
	}
	if got, _ := find(t, s, d.ID); got.Version != 3 {
		t.Errorf("a clash saved version %d", got.Version)
	}
	if saved, err := s.Save(ctx, d.ID, 3, "A\nb\nc\nd\nE\n", ana, linediff.Clash); err != nil || !saved.Unchanged {
		t.Errorf("saving the same text = %+v, %v; want unchanged", saved, err)
	}
	if saved, err := s.Save(ctx, d.ID, 0, "z\n", ana, linediff.Clash); err != nil || saved.Kind != docstore.KindSave {
		t.Errorf("a save from the latest = %+v, %v; want kind save", saved, err)
	}
	var nv *docstore.NoVersionError
	if _, err := s.Save(ctx, d.ID, 9, "y\n", ana, linediff.Clash); !errors.As(err, &nv) {
		t.Errorf("a save from version 9 = %v, want NoVersionError", err)
	}
}
