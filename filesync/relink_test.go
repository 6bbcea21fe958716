package filesync_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncMoveRewritesTheLinks: a file renamed in the folder renames its document, and
// the [[links]] to it in the other files follow, as Obsidian's do: the pass says so, and
// the linking files are written; a file Obsidian rewrote itself meanwhile merges cleanly
// (both made the same change). Before, Plan.md kept [[Budget]], broken in Obsidian.
func TestSyncMoveRewritesTheLinks(t *testing.T) {
	f := newFolder(t)
	f.put("Budget.md", "Ten.\n")
	f.put("Plan.md", "See [[Budget]].\n")
	f.put("Notes.md", "[[budget|the money]] and more\n")
	f.put("Code.md", "`[[Budget]]` stays\n")
	f.once()
	if err := os.Rename(filepath.Join(f.dir, "Budget.md"), filepath.Join(f.dir, "Costs.md")); err != nil {
		t.Fatal(err)
	}
	f.put("Notes.md", "[[Costs|the money]] and more\n") // Obsidian's own rewrite
	f.once()
	f.once()
	for file, want := range map[string]string{
		"Costs.md": "Ten.\n", "Plan.md": "See [[Costs]].\n", "Notes.md": "[[Costs|the money]] and more\n", "Code.md": "`[[Budget]]` stays\n",
	} {
		if got := f.get(file); got != want {
			t.Errorf("%s is %q, want %q", file, got, want)
		}
	}
	if said := f.say.String(); !strings.Contains(said, `sync: Budget.md was moved to Costs.md: "Budget" is "Costs" now, and updated links in`) {
		t.Errorf("the sync said:\n%s", said)
	}
	if _, v := f.doc("Plan"); v.Kind != "relink" || v.Text != "See [[Costs]].\n" {
		t.Errorf("Plan's latest version is %s: %q", v.Kind, v.Text)
	}
	if rep := f.once(); rep.Saved+rep.Written+rep.Renamed != 0 {
		t.Errorf("a third pass did %+v", rep)
	}
}
