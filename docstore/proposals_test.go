package docstore_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

var anaPerson = docstore.Author{By: "person:ana"}

// slack is a time bound as it holds under -race, which runs several times slower.
func slack(d time.Duration) time.Duration {
	if testbin.Race {
		return 10 * d
	}
	return d
}

const planText = "# Plan\n\nRecord the trailer.\nReview the page.\nBook the studio.\n"

// In review mode an agent's write, append and edit are kept as proposals, worked out as
// versions would be, and the text stays as it was; a new document is made at once.
func TestProposalsAreMadeAsVersionsWouldBe(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	agent := s.Proposing()
	made, err := agent.Create(ctx, "Plan", planText, docstore.KindWrite, north)
	if err != nil || made.Proposal != nil || made.Document.Version != 1 {
		t.Fatalf("Create in review mode = %+v, %v; want version 1, no proposal", made, err)
	}
	id := made.Document.ID
	edit, err := agent.Edit(ctx, id, "Review the page.", "Review the course page.", north)
	if err != nil || edit.Proposal == nil || edit.Proposal.Number != 1 || edit.Added != 1 || edit.Removed != 1 || edit.Document.Version != 1 {
		t.Fatalf("Edit = %+v, %v; want proposal 1, +1 −1, still version 1", edit, err)
	}
	app, err := agent.Append(ctx, id, "- send the invitations", north)
	if err != nil || app.Proposal == nil || app.Proposal.Number != 2 || app.Proposal.Kind != docstore.KindAppend {
		t.Fatalf("Append = %+v, %v", app, err)
	}
	if _, v, _ := read(t, s, id, 0); v.Number != 1 || v.Text != planText {
		t.Fatalf("the text moved: version %d %q", v.Number, v.Text)
	}
	// The same refusals as a version's.
	var miss *docstore.EditMissError
	if _, err := agent.Edit(ctx, id, "Record the podcast.", "x", north); !errors.As(err, &miss) {
		t.Errorf("an edit of text that isn't there: %v", err)
	}
	if saved, err := agent.Edit(ctx, id, "Book the studio.", "Book the studio.", north); err != nil || !saved.Unchanged || saved.Proposal != nil {
		t.Errorf("an edit that changes nothing: %+v, %v", saved, err)
	}
	// A stale write is merged with what changed since, and proposed against the latest.
	if _, err := s.Save(ctx, id, 0, strings.Replace(planText, "# Plan", "# The plan", 1), anaPerson, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	stale := strings.Replace(planText, "Book the studio.", "Book the studio for Tuesday.", 1)
	w, err := agent.Write(ctx, id, "", stale, 1, north)
	if err != nil || w.Proposal == nil || w.Proposal.Kind != docstore.KindMerge || w.Proposal.Base != 2 {
		t.Fatalf("a stale write = %+v, %v; want a merged proposal against version 2", w, err)
	}
	_, p, base, err := proposal(t, s, id, w.Proposal.Number)
	if err != nil || base.Number != 2 || p.Text != strings.Replace(stale, "# Plan", "# The plan", 1) || p.Status != docstore.StatusOpen || p.Author != north {
		t.Fatalf("Proposal 3 = %+v (base %d), %v", p, base.Number, err)
	}
	var clash *docstore.ClashError
	if _, err := agent.Write(ctx, id, "", strings.Replace(planText, "# Plan", "# Our plan", 1), 1, north); !errors.As(err, &clash) {
		t.Errorf("a stale write that clashes: %v", err)
	}
	d, open, err := view2(t, s, func(r *docstore.Reader) (docstore.Document, []docstore.Proposal, error) {
		return r.Proposals(id, 0, 10)
	})
	if err != nil || d.Review == nil || d.Review.Open != 3 || d.Review.Proposals != 3 || len(open) != 3 || open[0].Number != 3 || open[2].Number != 1 || open[0].Text != "" {
		t.Fatalf("Proposals = %+v %+v, %v", d.Review, open, err)
	}
	if _, _, err := view2(t, s, func(r *docstore.Reader) (docstore.Document, []docstore.Proposal, error) { return r.Proposals(id, 3, 1) }); err != nil {
		t.Fatal(err)
	} else if _, page, _ := view2(t, s, func(r *docstore.Reader) (docstore.Document, []docstore.Proposal, error) { return r.Proposals(id, 3, 1) }); len(page) != 1 || page[0].Number != 2 {
		t.Errorf("the page before 3: %+v", page)
	}
	var none *docstore.NoProposalError
	if _, _, _, err := proposal(t, s, id, 9); !errors.As(err, &none) {
		t.Errorf("Proposal 9: %v", err)
	}
}

// Accepting merges a proposal with what changed since its base, as the person's save
// would, into a version of kind accept by the agent, for its person, accepted by the
// person; a clash saves nothing and leaves it open; declining needs a reason; a decided
// proposal is decided once.
func TestAcceptAndDecline(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	agent := s.Proposing()
	d := mustCreate(t, s, "Plan", planText)
	p1, _ := agent.Edit(ctx, d.ID, "Review the page.", "Review the course page.", north)
	p2, _ := agent.Edit(ctx, d.ID, "Record the trailer.", "Record the trailer on Monday.", north)
	p3, _ := agent.Edit(ctx, d.ID, "# Plan", "# The plan", north)

	saved, p, err := s.Accept(ctx, d.ID, p1.Proposal.Number, anaPerson, nil, linediff.Clash)
	if err != nil || saved.Document.Version != 2 || saved.Kind != docstore.KindAccept || p.Status != docstore.StatusAccepted || p.Decided.Version != 2 || p.Decided.By != "person:ana" {
		t.Fatalf("Accept 1 = %+v, %+v, %v", saved, p, err)
	}
	_, v, _ := read(t, s, d.ID, 0)
	if v.Kind != docstore.KindAccept || v.Author != (docstore.Author{By: "agent:north", For: "person:ana", Accepted: "person:ana", Door: docstore.DoorAccept}) || !strings.Contains(v.Text, "Review the course page.") {
		t.Fatalf("version 2: %+v", v)
	}
	// The person changes line 3 themselves: proposal 2 (also line 3) clashes, 3 merges.
	if _, err := s.Save(ctx, d.ID, 0, strings.Replace(v.Text, "Record the trailer.", "Record the trailer twice.", 1), anaPerson, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	var clash *docstore.ClashError
	if _, _, err := s.Accept(ctx, d.ID, p2.Proposal.Number, anaPerson, nil, linediff.Clash); !errors.As(err, &clash) || clash.Base != 1 || clash.Document.Version != 3 {
		t.Fatalf("Accept 2 over the person's change: %v", err)
	}
	if _, p, _, _ := proposal(t, s, d.ID, 2); p.Status != docstore.StatusOpen {
		t.Errorf("a clash decided proposal 2: %+v", p)
	}
	saved, p, err = s.Accept(ctx, d.ID, p3.Proposal.Number, anaPerson, nil, linediff.Clash)
	if err != nil || p.Status != docstore.StatusMerged || saved.Document.Version != 4 {
		t.Fatalf("Accept 3 = %+v, %+v, %v", saved, p, err)
	}
	_, v, _ = read(t, s, d.ID, 0)
	for _, want := range []string{"twice.", "course page", "# The plan"} {
		if !strings.Contains(v.Text, want) {
			t.Errorf("version 4 lacks %q:\n%s", want, v.Text)
		}
	}
	// Proposal 2, accepted after editing, from the latest text.
	edited := strings.Replace(v.Text, "Record the trailer twice.", "Record the trailer twice, on Monday.", 1)
	saved, p, err = s.Accept(ctx, d.ID, 2, anaPerson, &docstore.Edit{Text: edited, Base: 4}, linediff.Clash)
	if err != nil || !p.Decided.Edited || p.Status != docstore.StatusAccepted || saved.Document.Version != 5 {
		t.Fatalf("Accept 2 edited = %+v, %+v, %v", saved, p, err)
	}
	if _, v, _ := read(t, s, d.ID, 0); v.Text != edited {
		t.Errorf("version 5 is %q, want the person's edit", v.Text)
	}
	var decided *docstore.DecidedError
	if _, _, err := s.Accept(ctx, d.ID, 2, anaPerson, nil, linediff.Clash); !errors.As(err, &decided) || decided.Proposal.Status != docstore.StatusAccepted {
		t.Errorf("accepting 2 again: %v", err)
	}
	p4, _ := agent.Append(ctx, d.ID, "- a bad idea", north)
	if _, err := s.Decline(ctx, d.ID, p4.Proposal.Number, anaPerson, "  "); !errors.Is(err, docstore.ErrNoReason) {
		t.Errorf("a decline without a reason: %v", err)
	}
	if _, err := s.Decline(ctx, d.ID, p4.Proposal.Number, anaPerson, strings.Repeat("x", docstore.MaxReason+1)); !errors.Is(err, docstore.ErrNoReason) {
		t.Errorf("a decline with a huge reason: %v", err)
	}
	p, err = s.Decline(ctx, d.ID, p4.Proposal.Number, anaPerson, "Not now.")
	if err != nil || p.Status != docstore.StatusDeclined || p.Decided.Why != "Not now." {
		t.Fatalf("Decline = %+v, %v", p, err)
	}
	if _, err := s.Decline(ctx, d.ID, p4.Proposal.Number, anaPerson, "again"); !errors.As(err, &decided) {
		t.Errorf("declining twice: %v", err)
	}
	if _, _, err := s.Accept(ctx, d.ID, p4.Proposal.Number, anaPerson, nil, linediff.Clash); !errors.As(err, &decided) {
		t.Errorf("accepting a declined proposal: %v", err)
	}
	if dd, _ := find(t, s, d.ID); dd.Review.Open != 0 || dd.Review.Decided != 4 || dd.Version != 5 {
		t.Errorf("the counts after: %+v, version %d", dd.Review, dd.Version)
	}
	// A proposal whose change the text has already: accepted, no version.
	p5, _ := agent.Append(ctx, d.ID, "- last", north)
	if _, err := s.Save(ctx, d.ID, 0, edited+"\n- last\n", anaPerson, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	saved, p, err = s.Accept(ctx, d.ID, p5.Proposal.Number, anaPerson, nil, linediff.Clash)
	if err != nil || !saved.Unchanged || p.Status != docstore.StatusMerged || p.Decided.Version != 6 {
		t.Errorf("accepting what the text has: %+v %+v %v", saved, p, err)
	}
}

// A read tells the agent what became of its proposals since its latest one, and only its
// own; other agents' and older news are left out.
func TestNotesTellTheAgent(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	south := docstore.Author{By: "agent:south", For: "person:ana"}
	d := mustCreate(t, s, "Plan", planText)
	a, b := s.Proposing(), s.Proposing()
	p1, _ := a.Edit(ctx, d.ID, "Review the page.", "Review the course page.", north)
	p2, _ := a.Append(ctx, d.ID, "- more", north)
	b.Append(ctx, d.ID, "- south's", south)
	if _, err := s.Decline(ctx, d.ID, p1.Proposal.Number, anaPerson, "Keep it short."); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Accept(ctx, d.ID, p2.Proposal.Number, anaPerson, nil, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decline(ctx, d.ID, 3, anaPerson, "No."); err != nil {
		t.Fatal(err)
	}
	n, err := view(t, s, func(r *docstore.Reader) (docstore.Notes, error) { return r.Notes(d.ID, 0, north, 5) })
	if err != nil || n.Open != 0 || len(n.Told) != 2 || n.Told[0].Number != 2 || n.Told[0].Status != docstore.StatusAccepted || n.Told[1].Decided.Why != "Keep it short." {
		t.Fatalf("north's notes: %+v, %v", n, err)
	}
	// north proposes again: what was decided before is old news.
	a.Append(ctx, d.ID, "- again", north)
	if n, _ := view(t, s, func(r *docstore.Reader) (docstore.Notes, error) { return r.Notes(d.ID, 0, north, 5) }); len(n.Told) != 0 || n.Open != 1 || len(n.Proposals) != 1 || n.Proposals[0].Number != 4 {
		t.Errorf("after north's next proposal: %+v", n)
	}
	if n, _ := view(t, s, func(r *docstore.Reader) (docstore.Notes, error) { return r.Notes(d.ID, 0, south, 5) }); len(n.Told) != 1 || n.Told[0].Decided.Why != "No." {
		t.Errorf("south's notes: %+v", n)
	}
	other := mustCreate(t, s, "Other", "x\n")
	if n, err := view(t, s, func(r *docstore.Reader) (docstore.Notes, error) { return r.Notes(other.ID, 0, north, 5) }); err != nil || n.Open != 0 || n.Told != nil || n.Document.Review != nil {
		t.Errorf("a document without proposals: %+v, %v", n, err)
	}
}

// A View's Read, Links and Notes see one snapshot: what they read together (a page's
// document, its version, the latest's links and what waits on it) is what each reads in a
// View of its own on a quiet store. For a document with open and decided proposals and
// comments, read at its latest and at an older version; one that never had either; and a
// name that names none.
func TestReadLinksAndNotesInOneView(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", planText+"See [[Other]].\n")
	other := mustCreate(t, s, "Other", "Back to [[Plan]].\n")
	agent := s.Proposing()
	p1, _ := agent.Edit(ctx, d.ID, "Review the page.", "Review the course page.", north)
	agent.Append(ctx, d.ID, "- more", north)
	if _, err := s.Decline(ctx, d.ID, p1.Proposal.Number, anaPerson, "Keep it short."); err != nil {
		t.Fatal(err)
	}
	mustComment(t, s, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 4, To: 5}, Text: "Which page?", Author: anaPerson})
	if _, err := s.Append(ctx, d.ID, "- a later line", north); err != nil {
		t.Fatal(err)
	}
	mustComment(t, s, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 3, To: 3}, Text: "The trailer?", Author: north, Asks: "person:ana"})
	for _, c := range []struct {
		name    string
		version int
		shows   string
	}{{d.ID, 0, "The trailer?"}, {"Plan", 1, "Status:declined"}, {other.ID, 0, "Back to"}, {"Nowhere", 0, ""}} {
		var (
			gd  docstore.Document
			gv  docstore.Version
			gls docstore.Links
			gn  docstore.Notes
		)
		gerr := s.View(ctx, func(r *docstore.Reader) (err error) {
			gd, gv, gls, gn = docstore.Document{}, docstore.Version{}, docstore.Links{}, docstore.Notes{}
			if gd, gv, err = r.Read(c.name, c.version); err != nil {
				return err
			}
			if gv.Number == gd.Version {
				if gls, err = r.Links(gd, 10); err != nil {
					return err
				}
			}
			gn, err = r.Notes(gd.ID, gv.Number, north, 5)
			return err
		})
		wd, wv, werr := read(t, s, c.name, c.version)
		var (
			wls docstore.Links
			wn  docstore.Notes
		)
		if werr == nil {
			var err error
			if wv.Number == wd.Version {
				if _, wls, err = findLinks(t, s, wd.ID, 10); err != nil {
					t.Fatal(err)
				}
			}
			if wn, err = view(t, s, func(r *docstore.Reader) (docstore.Notes, error) { return r.Notes(wd.ID, wv.Number, north, 5) }); err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Errorf("Read, Links and Notes of (%q, %d): error %v, want %v", c.name, c.version, gerr, werr)
		}
		got, want := []any{gd, gv, gls, gn}, []any{wd, wv, wls, wn}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Read, Links and Notes of (%q, %d) in one View:\n got %+v\nwant %+v", c.name, c.version, got, want)
		} else if s := fmt.Sprintf("%+v", got); !strings.Contains(s, c.shows) {
			t.Errorf("Read, Links and Notes of (%q, %d) don't show %q: %s", c.name, c.version, c.shows, s)
		}
	}
}

// Two people accepting the same proposal at once: one version, one decision.
func TestAcceptOnceUnderRace(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", planText)
	p, _ := s.Proposing().Append(ctx, d.ID, "- one", north)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		oks  int
		errs []error
	)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%2 == 0 {
				_, _, err = s.Accept(ctx, d.ID, p.Proposal.Number, anaPerson, nil, linediff.Clash)
			} else {
				_, err = s.Decline(ctx, d.ID, p.Proposal.Number, anaPerson, "no")
			}
			mu.Lock()
			defer mu.Unlock()
			var decided *docstore.DecidedError
			switch {
			case err == nil:
				oks++
			case !errors.As(err, &decided):
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	if oks != 1 || len(errs) > 0 {
		t.Fatalf("%d decisions, errors %v; want exactly one", oks, errs)
	}
	dd, _ := find(t, s, d.ID)
	if dd.Review.Open != 0 || dd.Review.Decided != 1 || dd.Version > 2 {
		t.Errorf("after the race: %+v, version %d", dd.Review, dd.Version)
	}
}

// Purging a document takes its proposals, their decisions and its comments with it;
// deleting keeps them.
func TestPurgeTakesTheProposals(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	s := docstore.New(db, "personal")
	keep := mustCreate(t, s, "Keep", planText)
	gone := mustCreate(t, s, "Gone", planText)
	for _, d := range []docstore.Document{keep, gone} {
		s.Proposing().Append(ctx, d.ID, "- one", north)
		p, _ := s.Proposing().Append(ctx, d.ID, "- two", north)
		s.Decline(ctx, d.ID, p.Proposal.Number, anaPerson, "no")
		if _, err := s.Comment(ctx, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 1, To: 2}, Text: "why?", Author: anaPerson}); err != nil {
			t.Fatal(err)
		}
		s.Reply(ctx, d.ID, 1, "because", north)
	}
	if _, err := s.Delete(ctx, gone.ID, anaPerson); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Undelete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, p, _, err := proposal(t, s, gone.ID, 1); err != nil || p.Text == "" {
		t.Fatalf("after delete and undelete, proposal 1: %+v %v", p, err)
	}
	s.Delete(ctx, gone.ID, anaPerson)
	if _, err := s.Purge(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	db.View(t.Context(), func(tx kv.Tx) error {
		clear(keys) // the View may run again
		for _, name := range []string{"doc_proposals", "doc_open", "doc_decisions", "doc_comments", "doc_unresolved", "doc_anchors"} {
			spaces.Sub(tx, "personal", name).ForEach(func(k, _ []byte) error {
				keys[name+" "+string(k[:26])]++
				return nil
			})
		}
		return nil
	})
	want := strings.ReplaceAll("map[doc_anchors ID:1 doc_comments ID:2 doc_decisions ID:1 doc_open ID:1 doc_proposals ID:2 doc_unresolved ID:1]", "ID", keep.ID)
	if fmt.Sprint(keys) != want {
		t.Errorf("keys after the purge: %v, want %s", keys, want)
	}
}

// Ten thousand open proposals on one document: listing the newest few, and reading what a
// read shows, cost the few.
func TestTenThousandOpenProposals(t *testing.T) {
	ctx := t.Context()
	if testing.Short() {
		t.Skip("makes 10,000 proposals")
	}
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", planText)
	agent := s.Proposing()
	var wg sync.WaitGroup
	start := time.Now()
	for w := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if _, err := agent.Append(ctx, d.ID, fmt.Sprintf("- item %d.%d", w, i), north); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("10,000 proposals made in %s", time.Since(start))
	start = time.Now()
	n, err := view(t, s, func(r *docstore.Reader) (docstore.Notes, error) { return r.Notes(d.ID, 0, north, 5) })
	took := time.Since(start)
	if err != nil || n.Open != 10000 || len(n.Proposals) != 5 || n.Proposals[0].Number != 10000 {
		t.Fatalf("notes: open %d, %d listed, %v", n.Open, len(n.Proposals), err)
	}
	if took > slack(50*time.Millisecond) {
		t.Errorf("reading the notes of 10,000 proposals took %s", took)
	}
	t.Logf("the notes of 10,000 open proposals: %s", took)
	_, page, err := view2(t, s, func(r *docstore.Reader) (docstore.Document, []docstore.Proposal, error) {
		return r.Proposals(d.ID, 5000, 50)
	})
	if err != nil || len(page) != 50 || page[0].Number != 4999 || page[49].Number != 4950 {
		t.Fatalf("a page in the middle: %d, %v", len(page), err)
	}
}

// A proposal that clashes with the person's change on every third line of 1 MB (6,667
// clashing places): previewing it, and accepting it (refused, with every place), cost a
// merge of 1 MB, and choosing a side saves it.
func TestProposalClashingEverywhere(t *testing.T) {
	ctx := t.Context()
	s := docstore.New(kvtest.OpenOnce(t), "personal") // its bound is one call's cost
	lines := text(20000, 11)
	d := mustCreate(t, s, "Huge", strings.Join(lines, ""))
	mine, theirs := append([]string(nil), lines...), append([]string(nil), lines...)
	for i := 0; i < len(lines); i += 3 {
		mine[i] = fmt.Sprintf("the agent's line %d\n", i)
		theirs[i] = fmt.Sprintf("the person's line %d\n", i)
	}
	p, err := s.Proposing().Write(ctx, d.ID, "", strings.Join(mine, ""), 0, north)
	if err != nil || p.Proposal == nil {
		t.Fatal(p, err)
	}
	if _, err := s.Save(ctx, d.ID, 0, strings.Join(theirs, ""), anaPerson, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	pv, err := view(t, s, func(r *docstore.Reader) (docstore.Preview, error) { return r.Preview(d.ID, p.Proposal.Number) })
	preview := time.Since(start)
	if err != nil || len(pv.Conflicts) != 6667 {
		t.Fatalf("Preview: %d conflicts, %v", len(pv.Conflicts), err)
	}
	start = time.Now()
	var clash *docstore.ClashError
	_, _, err = s.Accept(ctx, d.ID, p.Proposal.Number, anaPerson, nil, linediff.Clash)
	refused := time.Since(start)
	if !errors.As(err, &clash) || len(clash.Conflicts) != 6667 {
		t.Fatalf("Accept: %v", err)
	}
	start = time.Now()
	saved, pr, err := s.Accept(ctx, d.ID, p.Proposal.Number, anaPerson, nil, linediff.PreferMine)
	chosen := time.Since(start)
	if err != nil || pr.Status != docstore.StatusMerged || saved.Added != 6667 {
		t.Fatalf("Accept --mine: %+v %+v %v", saved, pr, err)
	}
	t.Logf("1 MB, 6,667 clashing places: preview %s, refused accept %s, accept keeping the proposal's lines %s", preview, refused, chosen)
	if preview > slack(2*time.Second) || refused > slack(2*time.Second) || chosen > slack(2*time.Second) {
		t.Errorf("too slow: preview %s, refused %s, chosen %s", preview, refused, chosen)
	}
}

// A proposed title comes with the proposal: accepted, it renames the document, unless the
// title was taken meanwhile (refused, the proposal still open).
func TestProposedTitle(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", planText)
	p1, err := s.Proposing().Write(ctx, d.ID, "Launch plan", planText+"- more\n", 0, north)
	if err != nil || p1.Proposal.Title != "Launch plan" {
		t.Fatalf("a proposal with a title: %+v %v", p1.Proposal, err)
	}
	p2, _ := s.Proposing().Write(ctx, d.ID, "Taken", planText, 0, north)
	mustCreate(t, s, "Taken", "x\n")
	var taken *docstore.TitleTakenError
	if _, _, err := s.Accept(ctx, d.ID, p2.Proposal.Number, anaPerson, nil, linediff.Clash); !errors.As(err, &taken) {
		t.Errorf("accepting a title taken since: %v", err)
	}
	if _, _, err := s.Accept(ctx, d.ID, p1.Proposal.Number, anaPerson, nil, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	if dd, _ := find(t, s, "Launch plan"); dd.ID != d.ID || dd.Review.Open != 1 {
		t.Errorf("after accepting the new title: %+v", dd)
	}
}
