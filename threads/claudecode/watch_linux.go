package claudecode

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"
)

// watcher wakes a follower when something changes in the folders it watches: on Linux, by
// inotify, so that a follower at rest costs nothing but a look at every file each rescan.
type watcher struct {
	log    *slog.Logger
	f      *os.File // the inotify descriptor, non-blocking so that Go's poller waits on it
	events chan struct{}
	mu     sync.Mutex
	failed map[string]bool // folders that could not be watched, said once
}

// settle is how long a follower, woken by a change, waits for the changes that come with it.
const settle = 20 * time.Millisecond

const watchMask = syscall.IN_MODIFY | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE | syscall.IN_MOVED_TO |
	syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_ATTRIB

func newWatcher(log *slog.Logger, notify bool) *watcher {
	w := &watcher{log: log, events: make(chan struct{}, 1), failed: map[string]bool{}}
	if !notify {
		return w
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		log.Info("no file notifications: looking for changes at intervals", "err", err)
		return w
	}
	w.f = os.NewFile(uintptr(fd), "inotify")
	go w.read()
	return w
}

// read turns inotify's events into wake-ups until the descriptor is closed.
func (w *watcher) read() {
	buf := make([]byte, 64<<10)
	for {
		if _, err := w.f.Read(buf); err != nil {
			return
		}
		select {
		case w.events <- struct{}{}:
		default:
		}
	}
}

// live reports whether changes are notified (else the follower must look at intervals).
func (w *watcher) live() bool { return w.f != nil }

// watch watches the folders, each pass: a folder removed and made again at the same path
// is another one, which inotify must be told of (it forgets the old one by itself). For a
// folder already watched the call only sets the same mask again.
func (w *watcher) watch(root string, dirs []string) {
	if w.f == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range append([]string{root}, dirs...) {
		if _, err := syscall.InotifyAddWatch(int(w.f.Fd()), d, watchMask); err != nil {
			if !w.failed[d] {
				w.log.Debug("not watching a folder", "dir", d, "err", err)
			}
			w.failed[d] = true
			continue
		}
		delete(w.failed, d)
	}
}

// wait returns when a change was notified (after a short pause that gathers the ones
// that come with it), when d has passed (true), or when ctx ends (false).
func (w *watcher) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	case <-w.events:
	}
	// A line written is often followed by others within milliseconds: one pass reads them all.
	select {
	case <-ctx.Done():
		return false
	case <-time.After(settle):
	}
	select {
	case <-w.events:
	default:
	}
	return true
}

func (w *watcher) close() {
	if w.f != nil {
		w.f.Close()
	}
}

// seekData is Linux's SEEK_DATA (lseek(2)): the next offset at or after the one given that
// holds data rather than a hole.
const seekData = 3

// nextData is the first offset at or after pos of f that is not in a hole (pos itself on a
// file system that doesn't say; the end of f when only a hole is left), so that a sparse
// file's holes are skipped without being read.
func nextData(f *os.File, pos int64) (int64, error) {
	off, err := f.Seek(pos, seekData)
	switch {
	case errors.Is(err, syscall.ENXIO): // nothing but a hole from pos to the end
		fi, err := f.Stat()
		if err != nil {
			return 0, err
		}
		return max(pos, fi.Size()), nil
	case err != nil || off < pos:
		return pos, nil
	}
	return off, nil
}
