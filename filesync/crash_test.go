package filesync_test

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
	"github.com/compass-mcp/compass-mcp/linediff"
)

// crashWorld is a folder synced once, then changed on both sides so that its next pass
// does one of each step: a file edited (save), a document changed (write), a file moved
// (rename), a document renamed (move), a file deleted (delete), a document deleted
// (remove), a document deleted whose file was edited (undelete, save), a new file
// (create), a new document (write new) and a file and a document of one title with
// different texts (join). want is the folder and the space once that pass is done, as
// title → text.
func crashWorld(t *testing.T) (f *folder, want map[string]string) {
	f = newFolder(t)
	for _, name := range []string{"edited", "agent", "moved", "renamed", "gone", "deleted", "back"} {
		f.put(name+".md", name+" 1\n")
	}
	f.once()
	ids := f.titles()
	f.put("edited.md", "edited 1\nedited 2\n")
	agent, _ := f.doc("agent")
	check[docstore.Saved](t)(f.s.Save(f.ctx, agent.ID, agent.Version, "agent 1\nagent 2\n", north, linediff.Clash))
	if err := os.MkdirAll(filepath.Join(f.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(f.dir, "moved.md"), filepath.Join(f.dir, "sub", "moved 2.md")); err != nil {
		t.Fatal(err)
	}
	check[docstore.Saved](t)(f.s.Rename(f.ctx, ids["renamed"], "renamed 2", north))
	if err := os.Remove(filepath.Join(f.dir, "gone.md")); err != nil {
		t.Fatal(err)
	}
	check[docstore.Document](t)(f.s.Delete(f.ctx, ids["deleted"], north))
	check[docstore.Document](t)(f.s.Delete(f.ctx, ids["back"], north))
	f.put("back.md", "back 1\nback 2\n")
	f.put("new.md", "new 1\n")
	check[docstore.Saved](t)(f.s.Create(f.ctx, "fresh", "fresh 1\n", docstore.KindWrite, north))
	check[docstore.Saved](t)(f.s.Create(f.ctx, "joined", "joined in the space\n", docstore.KindWrite, north))
	f.put("joined.md", "joined in the folder\n")
	return f, map[string]string{
		"edited":      "edited 1\nedited 2\n",
		"agent":       "agent 1\nagent 2\n",
		"sub/moved 2": "moved 1\n",
		"renamed 2":   "renamed 1\n",
		"back":        "back 1\nback 2\n",
		"new":         "new 1\n",
		"fresh":       "fresh 1\n",
		"joined":      "joined in the folder\n",
	}
}

// same checks that the folder's files and the space's documents are both want: nothing
// lost, nothing twice.
func (f *folder) same(want map[string]string) {
	f.t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".compass" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(f.dir, p)
			b, err := os.ReadFile(p)
			files[strings.TrimSuffix(filepath.ToSlash(rel), ".md")] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	if !maps.Equal(files, want) {
		f.t.Errorf("the folder is %q, want %q", files, want)
	}
	docs := map[string]string{}
	for title := range f.titles() {
		_, v := f.doc(title)
		docs[title] = v.Text
	}
	if !maps.Equal(docs, want) {
		f.t.Errorf("the space is %q, want %q", docs, want)
	}
}

// TestSyncCrashPoints: a pass killed at each named point where a sync can be killed
// (after a create, a file written, a save, a rename, ...: filesync.CrashPoints), each time
// the pass reaches it, its state not saved, as kill -9 leaves it; then, before the sync
// starts again, the person moves the new files (the one the pass was making a document
// of, the one it was joining to a document, and the new document's, if it was written) to
// another folder, or moves nothing. The passes after lose
// nothing and duplicate nothing: the folder and the space are what the pass and the moves
// would have made of them. On bbolt, and on PostgreSQL with COMPASS_TEST_DATA.
func TestSyncCrashPoints(t *testing.T) {
	f, want := crashWorld(t)
	var mu sync.Mutex
	reached := map[string]int{}
	undo := filesync.KillAt(f.y, func(at string) bool {
		mu.Lock()
		defer mu.Unlock()
		reached[at]++
		return false
	})
	f.once()
	undo()
	f.same(want) // the pass, not killed
	for _, point := range filesync.CrashPoints {
		if reached[point] == 0 {
			t.Errorf("the pass never reached %q", point)
		}
		for nth := 1; nth <= reached[point]; nth++ {
			t.Run(fmt.Sprintf("%s %d", point, nth), func(t *testing.T) { crashAt(t, point, nth, true) })
			t.Run(fmt.Sprintf("%s %d, nothing moved", point, nth), func(t *testing.T) { crashAt(t, point, nth, false) })
		}
	}
}

// crashAt kills crashWorld's pass the nth time it reaches point, moves the new files (if
// move), and checks the passes after.
func crashAt(t *testing.T, point string, nth int, move bool) {
	f, want := crashWorld(t)
	var mu sync.Mutex
	seen, killed := 0, false
	undo := filesync.KillAt(f.y, func(at string) bool {
		mu.Lock()
		defer mu.Unlock()
		if at == point {
			seen++
			killed = killed || seen == nth
			return seen == nth
		}
		return false
	})
	_, err := f.y.Once(f.ctx)
	undo()
	if !killed || err == nil {
		t.Fatalf("the pass was not killed at %q (%v)\nsaid: %s", point, err, f.say)
	}
	// The join noted ahead (or done) keeps the file its document's when it moves; a file
	// moved before the pass reached the join is no longer of the document's title: a new
	// document, and the document's text is written to a file of its own.
	state, _ := os.ReadFile(filepath.Join(f.dir, ".compass", "sync-personal.json"))
	if move && !strings.Contains(string(state), `"joined.md"`) {
		want["joined"] = "joined in the space\n"
		want["sub/joined moved"] = "joined in the folder\n"
	}
	for _, name := range []string{"new", "fresh", "joined"} {
		if !move || f.get(name+".md") == "<none>" {
			continue
		}
		if err := os.Rename(filepath.Join(f.dir, name+".md"), filepath.Join(f.dir, "sub", name+" moved.md")); err != nil {
			t.Fatal(err)
		}
		if _, both := want["sub/"+name+" moved"]; !both {
			want["sub/"+name+" moved"] = want[name]
			delete(want, name)
		}
	}
	for pass := 0; ; pass++ {
		if pass == 4 {
			t.Fatalf("still changing after 4 passes\nsaid: %s", f.say)
		}
		if !f.once().Changed() {
			break
		}
	}
	f.same(want)
}
