package filesync_test

import (
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// TestSyncGuardCountsPlannedSteps: the guards count the deletes and removes the pass's
// plan has, which are what it does. Three of six documents deleted in the space whose
// files were edited since are no removes (the edits win: the documents come back), so the
// pass goes on; the guard counted them as removes before, and stopped the pass, changing
// nothing, every pass after.
func TestSyncGuardCountsPlannedSteps(t *testing.T) {
	f := newFolder(t)
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		f.put(n+".md", n+"\n")
	}
	f.once()
	ids := f.titles()
	for _, n := range []string{"a", "b", "c"} {
		if _, err := f.s.Delete(f.ctx, ids[n], docstore.Author{By: "person:ana"}); err != nil {
			t.Fatal(err)
		}
		f.put(n+".md", n+"\nedited\n")
	}
	rep, err := f.y.Once(f.ctx)
	if err != nil {
		t.Fatalf("3 of 6 documents deleted in the space, their files edited: %v\nsaid: %s", err, f.say)
	}
	if rep.Removed != 0 || rep.Saved != 3 || len(f.titles()) != 6 {
		t.Errorf("%+v, documents %v\nsaid: %s", rep, f.titles(), f.say)
	}
	for _, n := range []string{"a", "b", "c"} {
		if _, v := f.doc(n); v.Text != n+"\nedited\n" {
			t.Errorf("%s is %q", n, v.Text)
		}
	}
}
