//go:build unix

package filesync_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
)

// TestSyncReadsRegularFilesOnly: a FIFO named .compassignore, or where the state file
// is, hung every pass (an open of a FIFO waits for a writer). Now a pass with the first
// goes on (no patterns), and one with the second stops with an error; neither waits. And
// a path with ".." is refused before anything is opened.
func TestSyncReadsRegularFilesOnly(t *testing.T) {
	f := newFolder(t)
	f.put("a.md", "# a\n")
	if err := syscall.Mkfifo(filepath.Join(f.dir, ".compassignore"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := f.y.Once(f.ctx); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a pass with a FIFO as .compassignore: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a pass with a FIFO as .compassignore hangs")
	}
	state := filepath.Join(f.dir, ".compass", "sync-personal.json")
	os.Remove(state)
	if err := syscall.Mkfifo(state, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() { _, err := f.y.Once(f.ctx); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a pass with a FIFO as its state: %v, want it refused", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a pass with a FIFO as its state hangs")
	}
	if _, err := filesync.ReadBeneath(t.TempDir(), "../x.md"); !errors.Is(err, filesync.ErrNotBeneath) {
		t.Errorf("../x.md: %v", err)
	}
}

// TestSyncFilesFollowTheUmask: the files the sync wrote were 0600 where an editor's
// beside them are 0644; now they are 0666 less the umask, as an editor's new file is.
func TestSyncFilesFollowTheUmask(t *testing.T) {
	mask := syscall.Umask(0o022)
	defer syscall.Umask(mask)
	f := newFolder(t)
	check[docstore.Saved](t)(f.s.Create(f.ctx, "Plans/Q3", "# Q3\n", docstore.KindWrite, north))
	f.once()
	for _, rel := range []string{"Plans/Q3.md", ".compass/sync-personal.json"} {
		info, err := os.Stat(filepath.Join(f.dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o644 {
			t.Errorf("%s is %v, want -rw-r--r-- (umask 022)", rel, info.Mode().Perm())
		}
	}
}
