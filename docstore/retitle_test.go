package docstore_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// A rename rewrites [[Old title]], [[old title|shown]], [[Old title#Heading]] and the like
// in the space's documents that link to it, as Obsidian does, each as a version of kind
// relink by whoever renamed, in the rename's transaction; what is code, an embed, another
// document's link, a link by id, a deleted document and another space's are left alone.
// Before, every text kept [[Pricing]], which a folder synced with Obsidian showed broken.
func TestRenameRewritesTheLinks(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	s := docstore.New(db, "personal")
	other := docstore.New(db, "launch")
	pricing := mustCreate(t, s, "Pricing", "# Pricing\n\n## Tiers\n\nSee [[Pricing#Tiers]] and [[pricing]].\n")
	mustCreate(t, s, "Pricing#Tiers old", "A title with a #.\n")
	texts := map[string]string{
		"Plan": "Prices: [[Pricing]]; [[pricing|the prices]], [[ Pricing ]], [[Pricing#Tiers]], [[PRICING#^block]].\n" +
			"| a | [[Pricing\\|the table]] |\n|---|---|\n\n```\n[[Pricing]] in a fence\n```\n\n`[[Pricing]]` in a span, ![[Pricing]] embedded,\n" +
			"[[Pricing#Tiers old]] another document, [again](/document/" + pricing.ID + "), [[Pricingx]], [[Budget]].\n",
		"Only by id":  "[again](/document/" + pricing.ID + ")\n",
		"Never":       "No links.\n",
		"Broken only": "[[Pricing#Missing heading]] is Obsidian's.\n",
		"Deleted fan": "[[Pricing]]\n",
		"Quoted fan":  "> [[Pricing]]\n- [[Pricing]]\n",
	}
	for title, text := range texts {
		mustCreate(t, s, title, text)
	}
	mustCreate(t, other, "Elsewhere", "[[Pricing]]\n")
	if _, err := s.Delete(ctx, "Deleted fan", ana); err != nil {
		t.Fatal(err)
	}

	saved, err := s.Rename(ctx, "Pricing", "Prices and plans", ana)
	if err != nil {
		t.Fatal(err)
	}
	// Plan, Broken only, Quoted fan, and Pricing itself.
	if saved.Relinked != 4 || saved.RelinkLeft != 0 {
		t.Errorf("the rename relinked %d documents (%d left), want 4", saved.Relinked, saved.RelinkLeft)
	}
	if saved.Document.Version != 2 || saved.Kind != docstore.KindRename {
		t.Errorf("the rename is version %d (%s)", saved.Document.Version, saved.Kind)
	}
	want := map[string]string{
		"Plan": "Prices: [[Prices and plans]]; [[Prices and plans|the prices]], [[ Prices and plans ]], [[Prices and plans#Tiers]], [[Prices and plans#^block]].\n" +
			"| a | [[Prices and plans\\|the table]] |\n|---|---|\n\n```\n[[Pricing]] in a fence\n```\n\n`[[Pricing]]` in a span, ![[Pricing]] embedded,\n" +
			"[[Pricing#Tiers old]] another document, [again](/document/" + pricing.ID + "), [[Pricingx]], [[Budget]].\n",
		"Only by id":        texts["Only by id"],
		"Never":             texts["Never"],
		"Broken only":       "[[Prices and plans#Missing heading]] is Obsidian's.\n",
		"Quoted fan":        "> [[Prices and plans]]\n- [[Prices and plans]]\n",
		"Prices and plans":  "# Pricing\n\n## Tiers\n\nSee [[Prices and plans#Tiers]] and [[Prices and plans]].\n",
		"Pricing#Tiers old": "A title with a #.\n",
	}
	for name, text := range want {
		d, v := readLatest(t, s, name)
		if v.Text != text {
			t.Errorf("%s says\n%q\nwant\n%q", name, v.Text, text)
		}
		changed := text != texts[name] && name != "Pricing#Tiers old"
		switch {
		case changed && (v.Kind != docstore.KindRelink || v.Author != ana):
			t.Errorf("%s's version %d is %s by %v, want relink by ana", name, v.Number, v.Kind, v.Author)
		case !changed && d.Version != 1:
			t.Errorf("%s has %d versions, want 1", name, d.Version)
		}
	}
	if d, v := readLatest(t, s, "Prices and plans"); d.Version != 3 || v.Title != "Prices and plans" {
		t.Errorf("Prices and plans: version %d titled %q, want 3 (rename, then relink)", d.Version, v.Title)
	}
	// The deleted document and the other space's keep their texts; brought back, its link
	// still names the document, by id.
	fan := mustDeleted(t, s, "Deleted fan")
	if _, err := s.Undelete(ctx, fan.ID); err != nil {
		t.Fatal(err)
	}
	if d, v := readLatest(t, s, fan.ID); v.Text != "[[Pricing]]\n" || d.Version != 1 {
		t.Errorf("the deleted document says %q at version %d", v.Text, d.Version)
	}
	wantLinks(t, s, "Deleted fan", "to: Prices and plans · from:  · broken: ")
	if _, v := readLatest(t, other, "Elsewhere"); v.Text != "[[Pricing]]\n" {
		t.Errorf("another space's document says %q", v.Text)
	}
	_, ls, err := findLinks(t, s, "Prices and plans", 50)
	var from []string
	for _, d := range ls.From {
		from = append(from, d.Title)
	}
	slices.Sort(from)
	if err != nil || strings.Join(from, ", ") != "Deleted fan, Only by id, Plan, Quoted fan" || len(ls.Broken) != 1 || ls.Broken[0].Title != "Prices and plans#Tiers" {
		t.Errorf("Prices and plans is linked from %s, broken %+v (%v)", from, ls.Broken, err)
	}

	// A change of case rewrites nothing (links are read case-insensitively everywhere);
	// an agent's write_document with a new title does, as the agent.
	if saved, err := s.Rename(ctx, "Prices and plans", "prices and plans", ana); err != nil || saved.Relinked != 0 {
		t.Errorf("a change of case: %v, %d relinked", err, saved.Relinked)
	}
	if saved, err := s.Write(ctx, "Quoted fan", "Fans", "> [[Plan]]\n", 0, north); err != nil || saved.Relinked != 0 {
		t.Errorf("write with a new title, nothing linking to it: %v, %d relinked", err, saved.Relinked)
	}
	if saved, err := s.Write(ctx, "Plan", "Launch plan", "[[prices and plans]] [[Fans]]\n", 0, north); err != nil || saved.Relinked != 1 {
		t.Errorf("write with a new title: %v, %d relinked", err, saved.Relinked)
	}
	if _, v := readLatest(t, s, "Fans"); v.Text != "> [[Launch plan]]\n" || v.Author != north || v.Kind != docstore.KindRelink {
		t.Errorf("Fans, after Plan's write with a new title: %q by %v (%s)", v.Text, v.Author, v.Kind)
	}
	checkLinks(t, s)
}

// An agent in review mode proposes a new title: nothing is rewritten until the person
// accepts it, and then by the accepted version's author.
func TestAcceptedRenameRewritesTheLinks(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	mustCreate(t, s, "Budget", "Ten.\n")
	mustCreate(t, s, "Plan", "See [[Budget]].\n")
	saved, err := s.Proposing().Write(ctx, "Budget", "Costs", "Ten.\n", 0, north)
	if err != nil || saved.Proposal == nil || saved.Relinked != 0 {
		t.Fatalf("a proposed rename: %+v, %v", saved, err)
	}
	if _, v := readLatest(t, s, "Plan"); v.Text != "See [[Budget]].\n" {
		t.Errorf("a proposal rewrote Plan: %q", v.Text)
	}
	saved, _, err = s.Accept(ctx, "Budget", saved.Proposal.Number, ana, nil, 0)
	if err != nil || saved.Relinked != 1 {
		t.Fatalf("accepting it: %v, %d relinked", err, saved.Relinked)
	}
	if _, v := readLatest(t, s, "Plan"); v.Text != "See [[Costs]].\n" || v.Kind != docstore.KindRelink {
		t.Errorf("Plan after the accepted rename: %q (%s)", v.Text, v.Kind)
	}
	checkLinks(t, s)
}

// A title linked from more documents than one transaction rewrites (relinkBatch) is
// rewritten in all of them, the rest in transactions after the rename's.
func TestRenameRewritesPastOneTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 2,100 documents")
	}
	ctx := t.Context()
	s := open(t, "personal")
	mustCreate(t, s, "Hub", "The hub.\n")
	n := docstore.RelinkBatch*2 + 100
	for i := range n {
		mustCreate(t, s, fmt.Sprintf("Spoke %d", i), fmt.Sprintf("Spoke %d of [[Hub]].\n", i))
	}
	saved, err := s.Rename(ctx, "Hub", "Centre", ana)
	if err != nil || saved.Relinked != n || saved.RelinkLeft != 0 {
		t.Fatalf("rename: %v, %d relinked (%d left), want %d", err, saved.Relinked, saved.RelinkLeft, n)
	}
	for _, i := range []int{0, docstore.RelinkBatch, n - 1} {
		if _, v := readLatest(t, s, fmt.Sprintf("Spoke %d", i)); !strings.Contains(v.Text, "[[Centre]]") {
			t.Errorf("Spoke %d says %q", i, v.Text)
		}
	}
	checkLinks(t, s)
}

// mustDeleted is the deleted document titled title.
func mustDeleted(t *testing.T, s *docstore.Store, title string) docstore.Document {
	t.Helper()
	var found docstore.Document
	err := s.View(t.Context(), func(r *docstore.Reader) error {
		ds, err := r.Documents()
		for _, d := range ds {
			if d.Title == title && d.Deleted != nil {
				found = d
			}
		}
		return err
	})
	if err != nil || found.ID == "" {
		t.Fatalf("no deleted document %q (%v)", title, err)
	}
	return found
}

// Undoing the session of an agent that renamed a linked document (write_document with a
// new title) takes back the rewrites with it: the linking text says [[Old title]] again,
// resolved to the document, whatever order the undo takes the documents in.
func TestUndoingARenameTakesTheLinksBack(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	s := docstore.New(db, "personal")
	agent := docstore.Author{By: "agent:north", For: "person:ana", Door: docstore.DoorMCP, Session: "m1"}
	person := docstore.Author{By: "person:ana", Door: docstore.DoorCLI}
	if _, err := s.Create(ctx, "Budget", "Ten.\n", docstore.KindSave, person); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "Plan", "See [[Budget]].\nMore.\n", docstore.KindSave, person); err != nil {
		t.Fatal(err)
	}
	if saved, err := s.Write(ctx, "Budget", "Costs", "Ten.\n", 0, agent); err != nil || saved.Relinked != 1 {
		t.Fatalf("the agent's rename: %v, %d relinked", err, saved.Relinked)
	}
	if _, err := docstore.UndoSession(ctx, db, []string{"personal"}, "m1", person); err != nil {
		t.Fatal(err)
	}
	if _, v := readLatest(t, s, "Plan"); v.Text != "See [[Budget]].\nMore.\n" {
		t.Errorf("Plan after the undo: %q", v.Text)
	}
	if d, _ := readLatest(t, s, "Budget"); d.Title != "Budget" {
		t.Errorf("the document is titled %q after the undo", d.Title)
	}
	wantLinks(t, s, "Plan", "to: Budget · from:  · broken: ")
}
