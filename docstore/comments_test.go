package docstore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/linediff"
)

const notesText = "# Plan\n\nRecord the trailer.\nReview the page.\nBook the studio.\n\n- one\n- two\n"

func mustComment(t *testing.T, s *docstore.Store, name string, nc docstore.NewComment) docstore.Comment {
	t.Helper()
	c, err := s.Comment(t.Context(), name, nc)
	if err != nil {
		t.Fatal(err)
	}
	return c.Comment
}

// threadOn returns the open thread n as Comments reads it at version (0: latest).
func threadOn(t *testing.T, s *docstore.Store, id string, version, n int) (docstore.Thread, bool) {
	t.Helper()
	cr, err := view(t, s, func(r *docstore.Reader) (docstore.CommentsRead, error) { return r.Comments(id, version, 100, 10) })
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range cr.Threads {
		if th.Number == n {
			return th, true
		}
	}
	return docstore.Thread{}, false
}

// A comment moves with its lines as lines are added and removed around them, and is
// outdated, with the text it was about, once its lines are changed or removed; replies
// continue it; resolving takes it out of the open ones.
func TestCommentsMoveWithTheirLines(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", notesText)
	c := mustComment(t, s, "Plan", docstore.NewComment{Lines: docstore.LineRange{From: 4, To: 5}, Text: "Which page, which studio?", Author: anaPerson})
	if c.Number != 1 || c.Version != 1 || c.From != 4 || c.To != 5 || c.Quote != "Review the page.\nBook the studio." {
		t.Fatalf("comment 1 = %+v", c)
	}
	if _, err := s.Save(ctx, d.ID, 0, "# Plan\n\nIntro.\nMore intro.\n"+strings.TrimPrefix(notesText, "# Plan\n\n"), anaPerson, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	th, ok := threadOn(t, s, d.ID, 0, 1)
	if !ok || th.Lines != (docstore.LineRange{From: 6, To: 7}) || th.Outdated != 0 {
		t.Fatalf("after two lines above: %+v", th)
	}
	// An edit inside the range keeps it (its other line is still there).
	if _, err := s.Edit(ctx, d.ID, "Book the studio.", "Book the big studio.", north); err != nil {
		t.Fatal(err)
	}
	if th, _ := threadOn(t, s, d.ID, 0, 1); th.Lines != (docstore.LineRange{From: 6, To: 6}) {
		t.Errorf("after one of its lines changed: %+v", th.Lines)
	}
	// Read as of version 1 and 2, it is where it was then.
	if th, _ := threadOn(t, s, d.ID, 1, 1); th.Lines != (docstore.LineRange{From: 4, To: 4}) {
		t.Errorf("as of version 1: %+v", th.Lines)
	}
	if th, _ := threadOn(t, s, d.ID, 2, 1); th.Lines != (docstore.LineRange{From: 6, To: 6}) {
		t.Errorf("as of version 2: %+v", th.Lines)
	}
	replied, err := s.Reply(ctx, d.ID, 1, "The course page; the big studio.", north)
	r := replied.Comment
	if err != nil || r.ReplyTo != 1 || r.Number != 2 {
		t.Fatalf("Reply = %+v, %v", r, err)
	}
	if _, err := s.Reply(ctx, d.ID, r.Number, "Thanks.", anaPerson); err != nil {
		t.Fatal(err)
	}
	th, _ = threadOn(t, s, d.ID, 0, 1)
	if len(th.Replies) != 2 || th.Replies[0].Text != "The course page; the big studio." || th.Replies[1].Author != anaPerson {
		t.Errorf("replies: %+v", th.Replies)
	}
	// Its last line goes: outdated, with what it said.
	if _, err := s.Edit(ctx, d.ID, "Review the page.\n", "", north); err != nil {
		t.Fatal(err)
	}
	cr, _ := view(t, s, func(r *docstore.Reader) (docstore.CommentsRead, error) { return r.Comments(d.ID, 0, 10, 3) })
	if len(cr.Threads) != 1 || cr.Threads[0].Outdated != 4 || cr.Threads[0].Lines != (docstore.LineRange{}) || cr.Threads[0].Quote != "Review the page.\nBook the studio." || cr.Open != 1 {
		t.Fatalf("after its lines went: %+v", cr)
	}
	// Outdated ones don't move any more, and reading an older version leaves them out.
	if _, err := s.Append(ctx, d.ID, "- three", north); err != nil {
		t.Fatal(err)
	}
	if cr, _ := view(t, s, func(r *docstore.Reader) (docstore.CommentsRead, error) { return r.Comments(d.ID, 2, 10, 3) }); len(cr.Threads) != 0 || cr.More != 1 {
		t.Errorf("version 2, with the comment outdated since: %+v", cr)
	}
	resolved, err := s.Resolve(ctx, d.ID, 2, "Done.", anaPerson)
	got := resolved.Comment
	if err != nil || got.Number != 1 || got.Resolved == nil || got.Resolved.By != "person:ana" || len(got.Replies) != 3 {
		t.Fatalf("Resolve = %+v, %v", got, err)
	}
	if cr, _ := view(t, s, func(r *docstore.Reader) (docstore.CommentsRead, error) { return r.Comments(d.ID, 0, 10, 3) }); cr.Open != 0 || len(cr.Threads) != 0 {
		t.Errorf("after resolving: %+v", cr)
	}
	if _, err := s.Reply(ctx, d.ID, 1, "more", north); !errors.Is(err, docstore.ErrResolved) {
		t.Errorf("a reply to a resolved comment: %v", err)
	}
	if _, err := s.Resolve(ctx, d.ID, 1, "", anaPerson); !errors.Is(err, docstore.ErrResolved) {
		t.Errorf("resolving twice: %v", err)
	}
	if _, _, err := view2(t, s, func(r *docstore.Reader) (docstore.Document, docstore.Thread, error) { return r.CommentThread(d.ID, 9) }); !errors.Is(err, docstore.ErrNoComment) {
		t.Errorf("comment 9: %v", err)
	}
}

// Who may resolve: any person, or the agent that wrote it. A person's comment is never an
// agent's to resolve, whether it asks any agent or that one; another agent's neither.
func TestWhoMayResolve(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", notesText)
	south := docstore.Author{By: "agent:south", For: "person:ana"}
	any := mustComment(t, s, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 3, To: 3}, Text: "Anyone?", Author: anaPerson})
	asksNorth := mustComment(t, s, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 4, To: 4}, Text: "North?", Author: anaPerson, Asks: "agent:north"})
	norths := mustComment(t, s, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 5, To: 5}, Text: "Is the studio right?", Author: north, Asks: "person:ana"})
	for _, tc := range []struct {
		n  int
		by docstore.Author
	}{{any.Number, south}, {any.Number, north}, {asksNorth.Number, north}, {asksNorth.Number, south}, {norths.Number, south}} {
		if _, err := s.Resolve(ctx, d.ID, tc.n, "", tc.by); !errors.Is(err, docstore.ErrNotYours) {
			t.Errorf("%s resolving comment %d: %v, want ErrNotYours", tc.by.By, tc.n, err)
		}
	}
	if _, err := s.Resolve(ctx, d.ID, norths.Number, "", north); err != nil {
		t.Errorf("north resolving its own: %v", err)
	}
	ben := docstore.Author{By: "person:ben"}
	other := mustComment(t, s, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 5}, Text: "x", Author: north})
	for _, n := range []int{other.Number, any.Number, asksNorth.Number} {
		if _, err := s.Resolve(ctx, d.ID, n, "", ben); err != nil {
			t.Errorf("a person resolving comment %d: %v", n, err)
		}
	}
}

// A comment on an older version's lines is carried to the latest; lines that are gone by
// then are refused. The text and the number of comments are bounded.
func TestCommentLimits(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", notesText)
	s.Edit(ctx, d.ID, "# Plan", "# The plan\n\nA new line.", north)
	c := mustComment(t, s, d.ID, docstore.NewComment{Version: 1, Lines: docstore.LineRange{From: 3, To: 3}, Text: "Old line", Author: anaPerson})
	if th, _ := threadOn(t, s, d.ID, 0, c.Number); th.Lines != (docstore.LineRange{From: 5, To: 5}) || th.Version != 1 {
		t.Errorf("a comment on version 1's line 3 is at %+v in version 2", th.Lines)
	}
	if _, err := s.Comment(ctx, d.ID, docstore.NewComment{Version: 1, Lines: docstore.LineRange{From: 1, To: 1}, Text: "gone", Author: anaPerson}); !errors.Is(err, docstore.ErrBadRange) {
		t.Errorf("a comment on a line gone since: %v", err)
	}
	var nolines *docstore.NoLinesError
	if _, err := s.Comment(ctx, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 99}, Text: "x", Author: anaPerson}); !errors.As(err, &nolines) {
		t.Errorf("a comment past the end: %v", err)
	}
	for _, text := range []string{" ", strings.Repeat("x", docstore.MaxComment+1), "bell\a"} {
		if _, err := s.Comment(ctx, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 1}, Text: text, Author: anaPerson}); !errors.Is(err, docstore.ErrBadComment) {
			t.Errorf("a comment of %d bytes: %v", len(text), err)
		}
	}
	var nover *docstore.NoVersionError
	if _, err := s.Comment(ctx, d.ID, docstore.NewComment{Version: 7, Lines: docstore.LineRange{From: 1}, Text: "x", Author: anaPerson}); !errors.As(err, &nover) {
		t.Errorf("a comment on version 7: %v", err)
	}
}

// A comment on every line of an 8 MiB text keeps 2 KB of it, and later saves carry it at the
// cost of the diff, not of the range.
func TestCommentOnEightMiBOfLines(t *testing.T) {
	ctx := t.Context()
	s := docstore.New(kvtest.OpenOnce(t), "personal") // its bound is one call's cost
	text := strings.Repeat("a line of text, forty bytes in all, ok.\n", docstore.MaxText/40)
	d := mustCreate(t, s, "Huge", text)
	start := time.Now()
	c := mustComment(t, s, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 1}, Text: "All of it?", Author: anaPerson})
	made := time.Since(start)
	if len(c.Quote) > docstore.MaxQuote || !c.QuoteCut || c.To != docstore.MaxText/40 {
		t.Fatalf("the comment keeps %d bytes of quote (cut %v), to line %d", len(c.Quote), c.QuoteCut, c.To)
	}
	start = time.Now()
	if _, err := s.Save(ctx, d.ID, 0, "first\n"+text[40:]+"last\n", anaPerson, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	saved := time.Since(start)
	start = time.Now()
	cr, err := view(t, s, func(r *docstore.Reader) (docstore.CommentsRead, error) { return r.Comments(d.ID, 0, 10, 3) })
	read := time.Since(start)
	if err != nil || len(cr.Threads) != 1 || cr.Threads[0].Lines != (docstore.LineRange{From: 2, To: docstore.MaxText / 40}) {
		t.Fatalf("after a save: %+v, %v", cr.Threads, err)
	}
	t.Logf("8 MiB, %d lines: comment on all of them %s, save carrying it %s, read %s", docstore.MaxText/40, made, saved, read)
	if made > slack(2*time.Second) || saved > slack(5*time.Second) || read > slack(100*time.Millisecond) {
		t.Errorf("too slow: comment %s, save %s, read %s", made, saved, read)
	}
}

// Random histories that leave a block of lines alone, around which lines come and go: a
// comment on the block is always on exactly its lines, as of every version read.
func TestCommentsFollowRandomHistories(t *testing.T) {
	ctx := t.Context()
	for _, every := range []int{1, 5, 64} {
		t.Run(fmt.Sprintf("whole every %d", every), func(t *testing.T) {
			defer docstore.SetSnapshotEvery(every)()
			s := docstore.New(kvtest.Open(t), "personal")
			r := rand.New(rand.NewPCG(uint64(every), 7))
			block := []string{"KEEP one\n", "KEEP two\n", "KEEP three\n"}
			before, after := []string{"a\n", "b\n"}, []string{"c\n"}
			join := func() string {
				return strings.Join(before, "") + strings.Join(block, "") + strings.Join(after, "")
			}
			d := mustCreate(t, s, "Random", join())
			c := mustComment(t, s, d.ID, docstore.NewComment{Lines: docstore.LineRange{From: 3, To: 5}, Text: "the block", Author: anaPerson})
			wantAt := map[int]int{1: 3}
			for v := 2; v <= 80; v++ {
				side := &before
				if r.IntN(2) == 0 {
					side = &after
				}
				i := r.IntN(len(*side) + 1)
				if r.IntN(3) == 0 && len(*side) > 0 && i < len(*side) {
					*side = append((*side)[:i], (*side)[i+1:]...)
				} else {
					*side = append((*side)[:i], append([]string{fmt.Sprintf("line of %d\n", v)}, (*side)[i:]...)...)
				}
				if _, err := s.Save(ctx, d.ID, 0, join(), anaPerson, linediff.Clash); err != nil {
					t.Fatal(err)
				}
				wantAt[v] = len(before) + 1
			}
			for _, v := range []int{80, 79, 64, 63, 40, 2, 1} {
				th, ok := threadOn(t, s, d.ID, v, c.Number)
				if !ok || th.Lines != (docstore.LineRange{From: wantAt[v], To: wantAt[v] + 2}) {
					t.Fatalf("as of version %d the comment is on %+v (found %v), want lines %d-%d", v, th.Lines, ok, wantAt[v], wantAt[v]+2)
				}
			}
		})
	}
}
