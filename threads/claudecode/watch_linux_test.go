package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
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

// A follower that was woken by a change and then stopped leaves no inotify descriptor (nor
// the goroutine reading it) behind: a blocking descriptor would keep its reader in read(2)
// past Close (os.File.Fd makes one blocking; NewFile of a non-blocking one doesn't).
func TestFollowStopsItsWatcher(t *testing.T) {
	before := inotifyFDs(t)
	s := threads.New(openDB(t), "personal")
	dir := ccFixtures(t)
	f := follow(t, s, dir, time.Hour)
	// The first pass has read the folder (and watches it); the line written after it
	// comes by a notification.
	f.waitLatest(ccNotes, "which three?", 5*time.Second)
	appendTo(t, filepath.Join(dir, "-home-ana-notes", ccNotes+".jsonl"), ccLine(ccNotes, "assistant", "f0000000-0000-4000-8000-0000000000aa", "2026-11-09T07:41:00Z", "Woken.")+"\n")
	f.waitLatest(ccNotes, "Woken.", 5*time.Second)
	// The watcher's reader is back waiting for the next event: there, a blocking
	// descriptor would hold it past Close (between two reads, it would see the Close and
	// let go). Nothing tells when it got there but the runtime's own account of its
	// goroutines, asked again (no clock) until it says so; it almost always does at once.
	deadline := time.Now().Add(5 * time.Second)
	for !readerWaiting() {
		if time.Now().After(deadline) {
			t.Fatal("the watcher's reader is not waiting for the next event 5 s after passing one on")
		}
		runtime.Gosched()
	}
	if err := f.stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	// Follow closed its watcher before it returned, and the Close of a non-blocking
	// descriptor returns once it is closed (it wakes the reader and waits for it to let go);
	// a blocking one's stays open as long as the reader's read(2) does: for good.
	if n := inotifyFDs(t); n != before {
		t.Fatalf("%d inotify descriptors open after the follower stopped, %d before", n, before)
	}
}

// readerWaiting reports whether a watcher's reader is in os.File.Read, waiting for
// inotify's next event: parked in Go's poller ([IO wait]), as a non-blocking descriptor's
// is, or in read(2) itself ([syscall]), as a blocking one's would be.
func readerWaiting() bool {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		state, _, _ := strings.Cut(g, "\n")
		if strings.Contains(g, "claudecode.(*watcher).read(") && strings.Contains(g, "os.(*File).Read(") &&
			(strings.Contains(state, "[IO wait") || strings.Contains(state, "[syscall")) {
			return true
		}
	}
	return false
}

// A project folder removed and made again (a new folder at the same path) is watched
// again: a line appended to a transcript in it comes within a second, not at the next
// rescan.
func TestFollowWatchesAFolderMadeAgain(t *testing.T) {
	s := threads.New(openDB(t), "personal")
	dir := ccFixtures(t)
	f := follow(t, s, dir, time.Hour)
	f.waitLatest(ccNotes, "which three?", 5*time.Second)
	proj := filepath.Join(dir, "-home-ana-notes")
	if err := os.RemoveAll(proj); err != nil {
		t.Fatal(err)
	}
	// The follower looks at the folder without it: a transcript made after the removal is
	// imported by a pass that listed the folder after it.
	const other = "88888888-9999-4aaa-8bbb-cccccccccccc"
	appendTo(t, filepath.Join(dir, "-home-ana-launch", other+".jsonl"), ccLine(other, "user", "c0", "2026-11-13T07:59:00Z", "After the folder went.")+"\n")
	f.waitLatest(other, "After the folder went.", 5*time.Second)
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	const session = "33333333-4444-4555-8666-777777777777"
	file := filepath.Join(proj, session+".jsonl")
	appendTo(t, file, ccLine(session, "user", "c1", "2026-11-13T08:00:00Z", "In the folder made again.")+"\n")
	f.waitLatest(session, "In the folder made again.", time.Second)
	// The pass that read it watched the folder before reading. A wake-up left from the
	// events before (the folder made) may still bring a pass that reads the next line
	// unnotified, so whether the folder is watched is asked of inotify itself.
	if !watched(t, proj) {
		t.Fatalf("the folder made again, %s, is not watched", proj)
	}
	appendTo(t, file, ccLine(session, "assistant", "c2", "2026-11-13T08:00:01Z", "And appended to.")+"\n")
	f.waitLatest(session, "And appended to.", time.Second)
}

// watched reports whether an inotify descriptor of this process watches the folder dir (the
// folder there now, not one that was there before): /proc/self/fdinfo lists each watch's
// inode and device.
func watched(t *testing.T, dir string) bool {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	// fdinfo gives the kernel's device number (major<<20 | minor); stat, the user's.
	dev := uint64(st.Dev)
	major, minor := dev>>8&0xfff|dev>>32&^0xfff, dev&0xff|dev>>12&^0xff
	want := fmt.Sprintf("ino:%x sdev:%x ", st.Ino, major<<20|minor)
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err != nil || l != "anon_inode:inotify" {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", e.Name()))
		if err != nil {
			continue // closed since
		}
		if strings.Contains(string(info), want) {
			return true
		}
	}
	return false
}
