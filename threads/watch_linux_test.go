package threads

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
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

// A follower that was woken by a change and then stopped leaves no inotify descriptor (nor
// the goroutine reading it) behind: a blocking descriptor would keep its reader in read(2)
// past Close (os.File.Fd makes one blocking; NewFile of a non-blocking one doesn't).
func TestFollowStopsItsWatcher(t *testing.T) {
	before := inotifyFDs(t)
	db := openDB(t)
	s := New(db, "personal")
	dir := ccFixtures(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ccImporter(t, s, dir, "").Follow(ctx, time.Hour) }()
	file := filepath.Join(dir, "-home-ana-notes", ccNotes+".jsonl")
	waitLatest := func(text string) {
		t.Helper()
		start := time.Now()
		for {
			if c, err := s.Get(ccNotes); err == nil && c.Latest.Text == text {
				return
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("%q not imported", text)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// The first pass has read the folder (and watches it); the line written after it
	// comes by a notification, the poll being an hour.
	waitLatest("which three?")
	appendTo(t, file, ccLine(ccNotes, "assistant", "f0000000-0000-4000-8000-0000000000aa", "2026-11-09T07:41:00Z", "Woken.")+"\n")
	waitLatest("Woken.")
	time.Sleep(100 * time.Millisecond) // the watcher's reader is back waiting for the next event
	cancel()
	if err := <-done; err != nil {
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
	db := openDB(t)
	s := New(db, "personal")
	dir := ccFixtures(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ccImporter(t, s, dir, "").Follow(ctx, time.Hour) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	waitLatest := func(conv, text string) {
		t.Helper()
		start := time.Now()
		for {
			if c, err := s.Get(conv); err == nil && c.Latest.Text == text {
				return
			}
			if time.Since(start) > time.Second {
				t.Fatalf("%q not imported within a second", text)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitLatest(ccNotes, "which three?")
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
	waitLatest(session, "In the folder made again.")
	time.Sleep(100 * time.Millisecond)
	appendTo(t, file, ccLine(session, "assistant", "c2", "2026-11-13T08:00:01Z", "And appended to.")+"\n")
	waitLatest(session, "And appended to.")
}
