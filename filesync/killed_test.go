package filesync_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
)

// TestSyncRenameKilledThenSaved: a one-line note is renamed in the folder, and its
// document is renamed to the file's new title without the state noting it: by the pass
// that saw the rename, killed before its state was saved, or by an agent. The editor then
// saves the renamed file twice (each save a new inode, a line more), so the file is
// neither the note's inode, nor its bytes, nor mostly its lines. The next passes must not
// leave the renamed file without a document (its title is the document's, whose entry
// still names the old file) nor write the note back at its old name: the file is the
// document's. Before, they did, for good: the torture's "12 files, 11 documents" (seed
// 28904206574470, under load, where syncs are killed mid-pass and the editor saves
// between passes).
func TestSyncRenameKilledThenSaved(t *testing.T) {
	for _, by := range []string{"a killed pass", "an agent"} {
		t.Run(by, func(t *testing.T) {
			f := newFolder(t)
			f.put("kept 5.md", "kept-5\n")
			f.once()
			id := f.titles()["kept 5"]
			if err := os.Rename(filepath.Join(f.dir, "kept 5.md"), filepath.Join(f.dir, "renamed 9.md")); err != nil {
				t.Fatal(err)
			}
			if by == "an agent" {
				check[docstore.Saved](t)(f.s.Rename(f.ctx, id, "renamed 9", north))
			} else {
				undo := filesync.KillAt(f.y, func(at string) bool { return at == "renamed" })
				_, err := f.y.Once(f.ctx)
				undo()
				if err == nil {
					t.Fatal("the pass was not killed after the rename")
				}
				if d, _ := f.doc(id); d.Title != "renamed 9" {
					t.Fatalf("the killed pass renamed %q, want %q", d.Title, "renamed 9")
				}
			}
			// Two saves by temp and rename, as an editor's.
			for _, text := range []string{"kept-5\neditor-line-1\n", "kept-5\neditor-line-1\neditor-line-2\n"} {
				tmp := filepath.Join(f.dir, ".renamed 9.md.tmp")
				if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, filepath.Join(f.dir, "renamed 9.md")); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 {
				f.once()
			}
			f.same(map[string]string{"renamed 9": "kept-5\neditor-line-1\neditor-line-2\n"})
			if d, _ := f.doc("renamed 9"); d.ID != id {
				t.Errorf("the file is document %s, want %s (the note's)", d.ID, id)
			}
			if t.Failed() {
				t.Logf("said: %s", f.say)
			}
		})
	}
}
