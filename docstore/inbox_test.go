package docstore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/linediff"
)

// inboxOf reads a page of person's inbox across spaces in one snapshot, as "space/title
// kind n" strings.
func inboxOf(t *testing.T, s *docstore.Store, person string, in []string, after string, limit int) ([]string, docstore.Inbox) {
	t.Helper()
	box, err := view(t, s, func(r *docstore.Reader) (docstore.Inbox, error) { return r.Inbox(person, in, after, limit) })
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range box.Items {
		switch {
		case it.Proposal != nil:
			out = append(out, fmt.Sprintf("%s/%s change %d", it.Space, it.Document.Title, it.Proposal.Number))
		default:
			out = append(out, fmt.Sprintf("%s/%s comment %d", it.Space, it.Document.Title, it.Comment.Number))
		}
	}
	return out, box
}

// What waits for a person is their agents' open proposals and the open comments agents
// made asking them, across the spaces named, newest first, paged; deciding, resolving and
// deleting take items out, bringing back puts them back; another member sees only theirs
// (and those for anyone), and a space not named shows nothing.
func TestInboxAcrossSpaces(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Minute); return at }
	personal := docstore.New(db, "personal").WithClock(clock)
	team := docstore.New(db, "team").WithClock(clock)
	south := docstore.Author{By: "agent:south", For: "person:bob"}
	anyone := docstore.Author{By: "agent:west"}

	plan := mustCreate(t, personal, "Plan", planText)
	notes := mustCreate(t, team, "Notes", notesText)
	if _, err := personal.Proposing().Append(ctx, plan.ID, "- send the invitations", north); err != nil {
		t.Fatal(err)
	}
	if _, err := team.Proposing().Append(ctx, notes.ID, "- bob's line", south); err != nil {
		t.Fatal(err)
	}
	if _, err := team.Comment(ctx, notes.ID, docstore.NewComment{Lines: docstore.LineRange{From: 3, To: 3}, Text: "Which trailer?\nThe long one?", Author: north, Asks: "person:ana"}); err != nil {
		t.Fatal(err)
	}
	if _, err := team.Comment(ctx, notes.ID, docstore.NewComment{Lines: docstore.LineRange{From: 4, To: 4}, Text: "Ana's own note", Author: anaPerson}); err != nil {
		t.Fatal(err)
	}
	if _, err := team.Proposing().Edit(ctx, notes.ID, "- two", "- two and a half", anyone); err != nil {
		t.Fatal(err)
	}
	if _, err := personal.Proposing().Edit(ctx, plan.ID, "Book the studio.", "Book the studio for May.", north); err != nil {
		t.Fatal(err)
	}

	both := []string{"personal", "team"}
	got, box := inboxOf(t, personal, "ana", both, "", 10)
	want := []string{"personal/Plan change 2", "team/Notes change 2", "team/Notes comment 1", "personal/Plan change 1"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") || box.Count != 4 || box.Next != "" {
		t.Fatalf("ana's inbox = %q (count %d, next %q); want %q, 4", got, box.Count, box.Next, want)
	}
	if it := box.Items[2]; strings.Join(it.Gist, "|") != "Which trailer?|The long one?" || !it.Mine {
		t.Errorf("the comment's gist = %q, mine %v", it.Gist, it.Mine)
	}
	if it := box.Items[3]; strings.Join(it.Gist, "|") != "- send the invitations" || it.Proposal.Added != 2 {
		t.Errorf("the append's gist = %q, %+v", it.Gist, it.Proposal)
	}
	if box.Items[1].Mine {
		t.Error("a change for anyone is marked as the person's own")
	}
	// Paged: two, then the rest, nothing twice.
	first, box := inboxOf(t, personal, "ana", both, "", 2)
	rest, last := inboxOf(t, personal, "ana", both, box.Next, 2)
	if strings.Join(append(first, rest...), "; ") != strings.Join(want, "; ") || box.Next == "" || last.Next != "" {
		t.Errorf("paged by two: %q then %q (next %q)", first, rest, last.Next)
	}
	if _, err := view(t, personal, func(r *docstore.Reader) (docstore.Inbox, error) { return r.Inbox("ana", both, "zz", 2) }); !errors.Is(err, docstore.ErrBadPosition) {
		t.Errorf("a made-up position: %v", err)
	}
	// Bob, a member of team only, sees his and anyone's there, nothing of ana's.
	if got, box := inboxOf(t, personal, "bob", []string{"team"}, "", 10); strings.Join(got, "; ") != "team/Notes change 2; team/Notes change 1" || box.Count != 2 {
		t.Errorf("bob's inbox = %q (count %d)", got, box.Count)
	}
	// Deciding, resolving, deleting take items out; undeleting brings them back.
	if _, _, err := personal.Accept(ctx, plan.ID, 1, anaPerson, nil, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	if _, err := team.Decline(ctx, notes.ID, 2, anaPerson, "not now"); err != nil {
		t.Fatal(err)
	}
	if _, err := team.Resolve(ctx, notes.ID, 1, "", anaPerson); err != nil {
		t.Fatal(err)
	}
	if got, box := inboxOf(t, personal, "ana", both, "", 10); strings.Join(got, "; ") != "personal/Plan change 2" || box.Count != 1 {
		t.Errorf("after deciding: %q (count %d)", got, box.Count)
	}
	if _, err := personal.Delete(ctx, plan.ID, anaPerson); err != nil {
		t.Fatal(err)
	}
	n, err := view(t, personal, func(r *docstore.Reader) (int, error) { return r.InboxCount("ana", both) })
	if got, _ := inboxOf(t, personal, "ana", both, "", 10); len(got) != 0 || n != 0 || err != nil {
		t.Errorf("after deleting: %q, count %d, %v", got, n, err)
	}
	if _, err := personal.Undelete(ctx, plan.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := inboxOf(t, personal, "ana", both, "", 10); strings.Join(got, "; ") != "personal/Plan change 2" {
		t.Errorf("after undeleting: %q", got)
	}
}

// A page of the inbox reads a page's worth, however much waits: 2,000 open comments asking
// the person, read 50 at a time, each page in order and the whole in 40 pages.
func TestInboxPagesManyItems(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s := open(t, "personal").WithClock(func() time.Time { at = at.Add(time.Second); return at })
	const docs, each = 2, 1000
	for i := range docs {
		d := mustCreate(t, s, fmt.Sprintf("Doc %d", i), notesText)
		for range each {
			if _, err := s.Comment(ctx, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 1, To: 1}, Text: "why?", Author: north, Asks: "person:ana"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	seen, pages, after := 0, 0, ""
	var prev time.Time
	for {
		_, box := inboxOf(t, s, "ana", []string{"personal"}, after, 50)
		if box.Count != docs*each || len(box.Items) > 50 {
			t.Fatalf("page %d: count %d, %d items", pages, box.Count, len(box.Items))
		}
		for _, it := range box.Items {
			if !prev.IsZero() && !it.At.Before(prev) {
				t.Fatalf("item %d at %v is not older than the one before (%v)", seen, it.At, prev)
			}
			prev = it.At
			seen++
		}
		pages++
		if after = box.Next; after == "" {
			break
		}
	}
	if seen != docs*each || pages != docs*each/50 {
		t.Errorf("read %d items in %d pages; want %d in %d", seen, pages, docs*each, docs*each/50)
	}
}

// A page of the inbox costs a page's worth, however much waits: its first page of 50 and
// the header's count, with 200 and with 2,000 open comments asking the person, over 4
// documents (the figures in docs/PERFORMANCE.md).
//
//	go test -run '^$' -bench Inbox -benchtime 200x ./docstore
func BenchmarkInbox(b *testing.B) {
	for _, n := range []int{200, 2000} {
		b.Run(fmt.Sprintf("open=%d", n), func(b *testing.B) {
			ctx := b.Context()
			s := open(b, "personal")
			for i := range 4 {
				d := mustCreate(b, s, fmt.Sprintf("Doc %d", i), notesText)
				for range n / 4 {
					if _, err := s.Comment(ctx, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 1, To: 1}, Text: "why?\nbecause", Author: north, Asks: "person:ana"}); err != nil {
						b.Fatal(err)
					}
				}
			}
			in := []string{"personal"}
			b.Run("page", func(b *testing.B) {
				for b.Loop() {
					box, err := docstore.ReadIn(ctx, s, func(r *docstore.Reader) (docstore.Inbox, error) { return r.Inbox("ana", in, "", 50) })
					if err != nil || len(box.Items) != 50 || box.Count != n {
						b.Fatalf("%d items of %d, %v", len(box.Items), box.Count, err)
					}
				}
			})
			b.Run("count", func(b *testing.B) {
				for b.Loop() {
					c, err := docstore.ReadIn(ctx, s, func(r *docstore.Reader) (int, error) { return r.InboxCount("ana", in) })
					if err != nil || c != n {
						b.Fatalf("count %d, %v", c, err)
					}
				}
			})
		})
	}
}

// waitingOf is what docs proposals lists without a document: "title: changes" for each
// document with open proposals, latest saved first.
func waitingOf(t testing.TB, s *docstore.Store) []string {
	t.Helper()
	ws, err := view(t, s, func(r *docstore.Reader) ([]docstore.Waiting, error) { return r.Waiting(5) })
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range ws {
		var ns []string
		for _, p := range w.Proposals {
			ns = append(ns, fmt.Sprint(p.Number))
		}
		out = append(out, w.Document.Title+": "+strings.Join(ns, ","))
	}
	return out
}

// The documents with open proposals are found from the inbox index, not by reading every
// document: only those with an open proposal (not those with only a comment waiting, a
// decided change, or a deleted document), latest saved first, their newest changes first.
func TestWaitingListsOpenProposals(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s := open(t, "personal").WithClock(func() time.Time { at = at.Add(time.Second); return at })
	anyone := docstore.Author{By: "agent:west"}
	docs := make([]docstore.Document, 6)
	for i := range docs {
		docs[i] = mustCreate(t, s, fmt.Sprintf("Doc %d", i), notesText)
	}
	propose := func(i int, by docstore.Author) {
		t.Helper()
		if _, err := s.Proposing().Append(ctx, docs[i].ID, fmt.Sprintf("- line %d", i), by); err != nil {
			t.Fatal(err)
		}
	}
	propose(1, north)
	propose(1, anyone)
	propose(2, north) // accepted below
	propose(3, north) // its document deleted below
	propose(4, anyone)
	if _, err := s.Comment(ctx, docs[5].ID, docstore.NewComment{Lines: docstore.LineRange{From: 1, To: 1}, Text: "why?", Author: north, Asks: "person:ana"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Accept(ctx, docs[2].ID, 1, anaPerson, nil, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, docs[3].ID, anaPerson); err != nil {
		t.Fatal(err)
	}
	// Doc 1 saved again last: it comes first. (Bringing a document back doesn't move it.)
	if _, err := s.Append(ctx, docs[1].ID, "- ana's line", anaPerson); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(waitingOf(t, s), "; "), "Doc 1: 2,1; Doc 4: 1"; got != want {
		t.Errorf("waiting = %q; want %q", got, want)
	}
	if _, err := s.Undelete(ctx, docs[3].ID); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(waitingOf(t, s), "; "), "Doc 1: 2,1; Doc 4: 1; Doc 3: 1"; got != want {
		t.Errorf("after bringing Doc 3 back: waiting = %q; want %q", got, want)
	}
}

// What waits is read from the inbox index: its cost follows the open proposals, not the
// space's documents (before, every document was read).
//
//	go test -run '^$' -bench Waiting -benchtime 200x ./docstore
func BenchmarkWaiting(b *testing.B) {
	for _, n := range []int{200, 2000} {
		b.Run(fmt.Sprintf("documents=%d", n), func(b *testing.B) {
			s := open(b, "personal")
			var last docstore.Document
			for i := range n {
				last = mustCreate(b, s, fmt.Sprintf("Doc %d", i), notesText)
			}
			if _, err := s.Proposing().Append(b.Context(), last.ID, "- a line", north); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if got := waitingOf(b, s); len(got) != 1 {
					b.Fatalf("waiting = %q", got)
				}
			}
		})
	}
}
