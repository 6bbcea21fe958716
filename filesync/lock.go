package filesync

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrLocked is returned (wrapped, naming the other process) by Lock when another sync
// keeps the folder: two would each take the other's writes for a person's edits.
var ErrLocked = errors.New("another sync keeps this folder")

// Lock takes the folder's lock, DIR/.compass/lock, for as long as this process keeps it:
// release gives it up, and so does the process's end, however it ends (the system's
// advisory lock: flock on Unix, LockFileEx on Windows, nothing where there is neither). The
// lock file holds the pid of its holder, so that a second sync names it. A folder that
// isn't there is ErrFolderMissing (the lock never makes it).
func Lock(dir string) (release func(), err error) {
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("%w: %s", ErrFolderMissing, dir)
	}
	p := filepath.Join(dir, ".compass", "lock")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the sync's lock %s: %w", p, err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", p, err)
	}
	if held {
		b := make([]byte, 64)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		who := "another process"
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
			who = fmt.Sprintf("process %d", pid)
		}
		return nil, fmt.Errorf("%w: %s is syncing %s (its lock is %s); stop it first, or sync another folder", ErrLocked, who, dir, p)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		f.Truncate(0)
		unlockFile(f)
		f.Close()
	}, nil
}
