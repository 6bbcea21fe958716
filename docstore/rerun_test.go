package docstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// rerun plays the group commit's worst sequence for one write: it runs in a batch that is
// rolled back because another call failed, that other call commits alone (between), then
// the write runs again. Nothing of the first run may leak into the second.
type rerun struct {
	kv.DB
	between func()
}

func (r *rerun) Batch(ctx context.Context, fn func(kv.Tx) error) error {
	if b := r.between; b != nil {
		r.between = nil
		r.DB.Update(ctx, func(tx kv.Tx) error { fn(tx); return errors.New("another call failed") })
		b()
	}
	return r.DB.Update(ctx, fn)
}

func TestRerunWriteTakesTheTitleAfresh(t *testing.T) {
	ctx := t.Context()
	f := kvtest.Open(t)
	plain := docstore.New(f, "personal")
	d := mustCreate(t, plain, "Plan", "one\n")
	s := docstore.New(&rerun{DB: f, between: func() {
		if _, err := plain.Write(ctx, d.ID, "Roadmap", "one\n", 0, north); err != nil {
			t.Fatal(err)
		}
	}}, "personal")
	if _, err := s.Write(ctx, d.ID, "", "two\n", 0, north); err != nil {
		t.Fatal(err)
	}
	if got, v, _ := read(t, s, d.ID, 0); got.Title != "Roadmap" || v.Text != "two\n" {
		t.Errorf("a write without a title after a rename in between: %q %q (v%d, %s)", got.Title, v.Text, v.Number, v.Kind)
	}
}

// Titles are the same when the index says so: "Plan ſ" may not be renamed "Plan S" while
// "Plan s" exists, though strings.EqualFold calls ſ and S the same. (The two look alike,
// ſ being s in NFKC: only a file written before look-alike titles has both.)
func TestRenameCannotTakeATitleByFolding(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	a := mustCreate(t, s, "Plan \u017f", "a\n")
	b, err := s.CreateAsBefore(ctx, "Plan s", "b\n")
	if err != nil {
		t.Fatal(err)
	}
	var taken *docstore.TitleTakenError
	if _, err := s.Write(ctx, a.ID, "Plan S", "a\n", 0, north); !errors.As(err, &taken) || taken.Other.ID != b.ID {
		t.Errorf("renaming onto another's title = %v, want it taken by %s", err, b.ID)
	}
	if d, err := find(t, s, "Plan s"); err != nil || d.ID != b.ID {
		t.Errorf("Find(Plan s) = %s, %v; want %s", d.ID, err, b.ID)
	}
}
