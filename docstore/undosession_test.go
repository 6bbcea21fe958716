package docstore_test

import (
	"errors"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// Undoing a session reverts its changes as new versions by the person, merged with what
// changed since: lines others changed later stay (a clash where they touch the session's),
// a document the session made alone is deleted, its open proposals are declined "undone";
// a second undo finds nothing more.
func TestUndoSession(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	north := docstore.Author{By: "agent:north", For: "person:ana", Door: docstore.DoorMCP, Client: "Claude Code", Session: "m1"}
	ben := docstore.Author{By: "person:ben", Door: docstore.DoorPage, Session: "p2"}
	ana := docstore.Author{By: "person:ana", Door: docstore.DoorCLI}
	launch := docstore.New(db, "launch")
	plan, err := launch.Create(ctx, "Plan", "1 intro\n2 alpha\n3 beta\n4 gamma\n5 delta\n6 eps\n7 zeta\n8 eta\n", docstore.KindSave, ana)
	if err != nil {
		t.Fatal(err)
	}
	id := plan.Document.ID
	// The session: two edits of Plan, a new document, a proposal, in two spaces.
	if _, err := launch.Edit(ctx, id, "2 alpha", "2 ALPHA (north)", north); err != nil {
		t.Fatal(err)
	}
	if _, err := launch.Edit(ctx, id, "7 zeta", "7 ZETA (north)", north); err != nil {
		t.Fatal(err)
	}
	notes, err := docstore.New(db, "personal").Create(ctx, "North's notes", "scratch\n", docstore.KindWrite, north)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := launch.Proposing().Edit(ctx, id, "4 gamma", "4 GAMMA (north)", north); err != nil {
		t.Fatal(err)
	}
	// Since: Ben changes a line far from north's, and north's second line itself.
	if _, err := launch.Edit(ctx, id, "5 delta", "5 delta (ben)", ben); err != nil {
		t.Fatal(err)
	}
	if _, err := launch.Edit(ctx, id, "7 ZETA (north)", "7 zeta, as Ben has it", ben); err != nil {
		t.Fatal(err)
	}

	u, err := docstore.UndoSession(ctx, db, []string{"launch", "personal"}, "m1", ana)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Documents) != 2 || len(u.Declined) != 1 || u.Declined[0].N != 1 || u.Declined[0].Status != docstore.StatusDeclined {
		t.Fatalf("undone: %+v", u)
	}
	_, v, _ := read(t, launch, id, 0)
	if want := "1 intro\n2 alpha\n3 beta\n4 gamma\n5 delta (ben)\n6 eps\n7 zeta, as Ben has it\n8 eta\n"; v.Text != want {
		t.Errorf("Plan after the undo:\n%s\nwant:\n%s", v.Text, want)
	}
	if v.Author != ana || v.Kind != docstore.KindRestore {
		t.Errorf("the undo's version: %+v", v)
	}
	var p docstore.UndoneDocument
	for _, d := range u.Documents {
		if d.Document.ID == id {
			p = d
		}
	}
	if len(p.Clashes) != 1 || p.Clashes[0].Theirs[0] != "7 zeta, as Ben has it" || p.Version != v.Number || len(p.Reverted) != 2 {
		t.Errorf("Plan's undo: %+v", p)
	}
	if d, err := view(t, docstore.New(db, "personal"), func(r *docstore.Reader) (docstore.Document, error) { return r.ByID(notes.Document.ID) }); err != nil || d.Deleted == nil {
		t.Errorf("the session's own document: %+v, %v", d, err)
	}
	pr, err := view(t, launch, func(r *docstore.Reader) (docstore.Proposal, error) {
		_, p, _, err := r.Proposal(id, 1)
		return p, err
	})
	if err != nil || pr.Status != docstore.StatusDeclined || pr.Decided.Why != "undone" {
		t.Errorf("the session's proposal: %+v, %v", pr, err)
	}

	again, err := docstore.UndoSession(ctx, db, []string{"launch", "personal"}, "m1", ana)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range again.Documents {
		if d.Version != 0 || d.Deleted {
			t.Errorf("a second undo changed %s: %+v", d.Document.Title, d)
		}
	}
	if _, err := docstore.UndoSession(ctx, db, []string{"launch"}, "m9", ana); !errors.Is(err, docstore.ErrNoSession) {
		t.Errorf("an unknown session: %v", err)
	}
}
