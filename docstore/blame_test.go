package docstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/linediff"
)

// blameByHand is what Blame must say, worked out the slow way: every version's whole text,
// diffed against the one before, each line owned by the version that inserted it.
func blameByHand(texts []string) []int {
	withEOL := func(s string) string {
		if s != "" && !strings.HasSuffix(s, "\n") {
			return s + "\n"
		}
		return s
	}
	var owner []int
	prev := []string(nil)
	for i, text := range texts {
		lines := linediff.Lines(withEOL(text))
		next := make([]int, len(lines))
		for _, op := range linediff.Diff(prev, lines) {
			for k := op.B0; k < op.B1; k++ {
				if op.Kind == linediff.Equal {
					next[k] = owner[op.A0+k-op.B0]
				} else {
					next[k] = i + 1
				}
			}
		}
		owner, prev = next, lines
	}
	return owner
}

func checkBlame(t *testing.T, s *docstore.Store, id string, texts []string) {
	t.Helper()
	ctx := t.Context()
	bl, err := s.Blame(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := blameByHand(texts)
	var got []int
	for i, r := range bl.Runs {
		if r.First != len(got)+1 || r.Count < 1 || (i > 0 && bl.Runs[i-1].Version == r.Version) {
			t.Fatalf("run %d is %+v after %d lines", i, r, len(got))
		}
		if v, ok := bl.Versions[r.Version]; !ok || v.Number != r.Version || v.Text != "" {
			t.Fatalf("run %d names version %d, whose header is %+v", i, r.Version, v)
		}
		for range r.Count {
			got = append(got, r.Version)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("blame of %d versions:\n got %v\nwant %v", len(texts), got, want)
	}
	latest := texts[len(texts)-1]
	if len(bl.Lines) != len(want) || (latest != "" && strings.Join(bl.Lines, "\n") != strings.TrimSuffix(latest, "\n")) {
		t.Fatalf("blame's lines are %q, want the latest text's %q", bl.Lines, latest)
	}
}

// Blame says of every line the version that inserted it, exactly as diffing each version
// against the one before says, whatever the history (edits, duplicate lines, a missing final
// line break, an empty version) and however often versions are kept whole.
func TestBlameIsTheDiffsOfEveryVersion(t *testing.T) {
	ctx := t.Context()
	for _, every := range []int{1, 5, 64} {
		t.Run(fmt.Sprintf("whole every %d", every), func(t *testing.T) {
			defer docstore.SetSnapshotEvery(every)()
			s := docstore.New(kvtest.Open(t), "personal")
			for seed := range uint64(3) {
				id, texts := randomHistory(t, s, 150, seed+uint64(every)*10)
				checkBlame(t, s, id, texts)
				if _, err := s.Rename(ctx, id, fmt.Sprintf("History %d", seed), ana); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// A file written before blame keeps versions whole without what blame follows (every
// version, in the layout before deltas): blame diffs them instead, and says the same.
func TestBlameOfTheOldLayout(t *testing.T) {
	ctx := t.Context()
	_, s, want := oldLayout(t)
	for title, texts := range want {
		d, err := find(t, s, title)
		if err != nil {
			t.Fatal(err)
		}
		checkBlame(t, s, d.ID, texts)
		text := "a new first line\n" + texts[len(texts)-1]
		if _, err := s.Save(ctx, d.ID, 0, text, ana, linediff.Clash); err != nil {
			t.Fatal(err)
		}
		checkBlame(t, s, d.ID, append(texts, text))
	}
}

// One version's blame is all its own; a document not found is ErrNotFound.
func TestBlameOfOneVersion(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", "a\nb")
	bl, err := s.Blame(ctx, "plan")
	if err != nil || len(bl.Runs) != 1 || bl.Runs[0] != (docstore.Run{Version: 1, First: 1, Count: 2}) || bl.Versions[1].Author != north {
		t.Fatalf("Blame = %+v, %v", bl, err)
	}
	if _, err := s.Blame(ctx, d.ID+"x"); !errors.Is(err, docstore.ErrNotFound) {
		t.Errorf("Blame of nothing: %v", err)
	}
	empty := mustCreate(t, s, "Empty", "")
	if bl, err := s.Blame(ctx, empty.ID); err != nil || len(bl.Runs) != 0 || len(bl.Lines) != 0 {
		t.Errorf("Blame of an empty text = %+v, %v", bl, err)
	}
}

// twice is a store whose every read transaction runs its function a second time, as a
// View may (kv.DB.View): what the first run did must be undone, not added to.
type twice struct{ kv.DB }

func (d twice) View(ctx context.Context, fn func(kv.Tx) error) error {
	if err := d.DB.View(ctx, fn); err != nil {
		return err
	}
	return d.DB.View(ctx, fn)
}

// Blame undoes what a range did when its read runs again (issue 34: it used to copy all
// it had found at every range instead, which made it quadratic): the same blame either way.
func TestBlameWhenReadsRunAgain(t *testing.T) {
	for _, every := range []int{1, 5, 64} {
		t.Run(fmt.Sprintf("whole every %d", every), func(t *testing.T) {
			defer docstore.SetSnapshotEvery(every)()
			db := kvtest.Open(t)
			s := docstore.New(db, "personal")
			id, texts := randomHistory(t, s, 150, uint64(every)*7)
			checkBlame(t, docstore.New(twice{db}, "personal"), id, texts)
		})
	}
}
