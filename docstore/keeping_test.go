package docstore_test

import (
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// SaveKeeping saves the person's text preferring its lines where both sides changed the
// same ones, and keeps the space's side as a proposal by the agent who wrote it, in the
// same commit: the save and the proposal are there together, its base the new version.
func TestSaveKeepingKeepsBothSidesOfAClash(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	sync := docstore.Author{By: "agent:sync", For: "person:ana"}
	made, err := s.Create(ctx, "Plan", "# Plan\nA\nB\nC\n", docstore.KindWrite, north)
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	if _, err := s.Write(ctx, id, "", "# Plan\nA\nB by north\nC\nD\n", 0, north); err != nil {
		t.Fatal(err)
	}
	// The person's text, made from version 1: B changed too, and a line added at the top.
	saved, p, err := s.SaveKeeping(ctx, id, 1, "top\n# Plan\nA\nB by ana\nC\n", sync, "kept from the space: the file changed the same lines")
	if err != nil {
		t.Fatal(err)
	}
	if saved.Kind != docstore.KindMerge || saved.Document.Version != 3 {
		t.Errorf("saved %s version %d, want a merge, version 3", saved.Kind, saved.Document.Version)
	}
	_, v := readLatest(t, s, id)
	if v.Text != "top\n# Plan\nA\nB by ana\nC\nD\n" {
		t.Errorf("the version: %q", v.Text)
	}
	if p == nil {
		t.Fatal("no proposal")
	}
	if p.Author.By != north.By || p.Author.For != north.For || p.Base != 3 || p.Note == "" {
		t.Errorf("the proposal: %+v, want north's against version 3 with a note", p)
	}
	var full docstore.Proposal
	err = s.View(ctx, func(r *docstore.Reader) (err error) { _, full, _, err = r.Proposal(id, p.Number); return err })
	if err != nil {
		t.Fatal(err)
	}
	if full.Text != "top\n# Plan\nA\nB by north\nC\nD\n" || full.Note != p.Note {
		t.Errorf("the proposal's text %q, note %q", full.Text, full.Note)
	}
	if saved.Document.Review == nil || saved.Document.Review.Open != 1 {
		t.Errorf("the saved record's review: %+v, want 1 open", saved.Document.Review)
	}

	// No clash: a merge, no proposal.
	saved, p, err = s.SaveKeeping(ctx, id, 3, "top\n# Plan\nA\nB by ana\nC\nD\nE\n", sync, "x")
	if err != nil || p != nil || saved.Document.Version != 4 {
		t.Errorf("a save from the latest: %+v, %+v, %v", saved.Document, p, err)
	}
}

// Base 0 is the empty text: a text made apart from the space's (a folder's file joined to
// a document of its title) is saved as it is, and the document's text kept whole as a
// proposal by its author; the same text makes nothing.
func TestSaveKeepingFromNothing(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	sync := docstore.Author{By: "agent:sync", For: "person:ana"}
	made, err := s.Create(ctx, "Note", "---\ntags: [a]\n---\n# Note\nspace\n", docstore.KindWrite, north)
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	saved, p, err := s.SaveKeeping(ctx, id, 0, "# Note\nfile\n", sync, "kept from the space when the folder joined")
	if err != nil || p == nil {
		t.Fatalf("%+v, %+v, %v", saved, p, err)
	}
	_, v := readLatest(t, s, id)
	if v.Text != "# Note\nfile\n" || saved.Kind != docstore.KindSave || v.Author.By != sync.By {
		t.Errorf("the version: %s by %s, %q", saved.Kind, v.Author.By, v.Text)
	}
	if p.Author.By != north.By || !strings.Contains(p.Note, "joined") {
		t.Errorf("the proposal: %+v", p)
	}
	_, p, err = s.SaveKeeping(ctx, id, 0, "# Note\nfile\n", sync, "again")
	if err != nil || p != nil {
		t.Errorf("the same text again: %+v, %v", p, err)
	}
}

func readLatest(t *testing.T, s *docstore.Store, id string) (docstore.Document, docstore.Version) {
	t.Helper()
	var (
		d docstore.Document
		v docstore.Version
	)
	if err := s.View(t.Context(), func(r *docstore.Reader) (err error) { d, v, err = r.Read(id, 0); return err }); err != nil {
		t.Fatal(err)
	}
	return d, v
}
