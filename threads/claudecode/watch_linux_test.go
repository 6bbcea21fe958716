package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/threads"
)

// inotifyFDs counts this process's open inotify descriptors.
func inotifyFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// following starts a follower of dir into s that looks at every file only once an hour
// (so what it reads later comes by a notification), and returns a func that stops it and
// returns what Follow did.
func following(t *testing.T, s *threads.Store, dir string) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ccImporter(t, s, dir, "").Follow(ctx, time.Hour) }()
	var err error
	stopped := false
	stop = func() error {
		if !stopped {
			cancel()
			err, stopped = <-done, true
		}
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

// waitLatest waits, at most within, for conv's latest message to be text.
func waitLatest(t *testing.T, s *threads.Store, conv, text string, within time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		if c, err := s.Get(conv); err == nil && c.Latest.Text == text {
			return
		}
		if time.Since(start) > within {
			t.Fatalf("%q not imported within %v", text, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A follower that was woken by a change and then stopped leaves no inotify descriptor (nor
// the goroutine reading it) behind: a blocking descriptor would keep its reader in read(2)
// past Close (os.File.Fd makes one blocking; NewFile of a non-blocking one doesn't).
func TestFollowStopsItsWatcher(t *testing.T) {
	before := inotifyFDs(t)
	s := threads.New(openDB(t), "personal")
	dir := ccFixtures(t)
	stop := following(t, s, dir)
	// The first pass has read the folder (and watches it); the line written after it
	// comes by a notification.
	waitLatest(t, s, ccNotes, "which three?", 5*time.Second)
	appendTo(t, filepath.Join(dir, "-home-ana-notes", ccNotes+".jsonl"), ccLine(ccNotes, "assistant", "f0000000-0000-4000-8000-0000000000aa", "2026-11-09T07:41:00Z", "Woken.")+"\n")
	waitLatest(t, s, ccNotes, "Woken.", 5*time.Second)
	time.Sleep(100 * time.Millisecond) // the watcher's reader is back waiting for the next event
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for inotifyFDs(t) != before {
		if time.Now().After(deadline) {
			t.Fatalf("%d inotify descriptors open after the follower stopped, %d before", inotifyFDs(t), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A project folder removed and made again (a new folder at the same path) is watched
// again: a line appended to a transcript in it comes within a second, not at the next
// rescan.
func TestFollowWatchesAFolderMadeAgain(t *testing.T) {
	s := threads.New(openDB(t), "personal")
	dir := ccFixtures(t)
	following(t, s, dir)
	waitLatest(t, s, ccNotes, "which three?", 5*time.Second)
	proj := filepath.Join(dir, "-home-ana-notes")
	if err := os.RemoveAll(proj); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the follower looks at the folder without it
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	const session = "33333333-4444-4555-8666-777777777777"
	file := filepath.Join(proj, session+".jsonl")
	appendTo(t, file, ccLine(session, "user", "c1", "2026-11-13T08:00:00Z", "In the folder made again.")+"\n")
	waitLatest(t, s, session, "In the folder made again.", time.Second)
	time.Sleep(100 * time.Millisecond)
	appendTo(t, file, ccLine(session, "assistant", "c2", "2026-11-13T08:00:01Z", "And appended to.")+"\n")
	waitLatest(t, s, session, "And appended to.", time.Second)
}
