//go:build !linux

package claudecode

import (
	"context"
	"log/slog"
	"os"
	"time"
)

// watcher, where inotify is not, only waits: the follower looks for changes every poll.
type watcher struct{}

func newWatcher(*slog.Logger, bool) *watcher { return &watcher{} }

func (w *watcher) live() bool             { return false }
func (w *watcher) watch(string, []string) {}
func (w *watcher) close()                 {}

func (w *watcher) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// nextData is pos: holes are not known here, and a sparse file is read as it reads, within
// each pass's budget.
func nextData(_ *os.File, pos int64) (int64, error) { return pos, nil }
