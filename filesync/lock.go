package filesync

import (
	"errors"
	"fmt"
	"io/fs"
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
	release = func() {
		f.Truncate(0)
		unlockFile(f)
		f.Close()
	}
	if other := nestedSync(dir); other != "" {
		release()
		return nil, fmt.Errorf("%w: a sync keeps %s, and one folder holds the other: two syncs of nested folders copy each other's documents a folder deeper every pass; sync one of them", ErrNested, other)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return release, nil
}

// ErrNested is returned (wrapped, naming the other folder) by Lock for a folder inside, or
// holding, a folder another sync keeps.
var ErrNested = errors.New("another sync keeps a folder nested with this one")

// nestedSync is a folder above dir, or beneath it, whose lock another sync holds ("":
// none). Beneath, dot folders and links are not looked in, as the scan doesn't.
func nestedSync(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for up := filepath.Dir(abs); ; up = filepath.Dir(up) {
		if lockHeld(up) {
			return up
		}
		if filepath.Dir(up) == up {
			break
		}
	}
	found := ""
	filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == abs {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if lockHeld(p) {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// lockHeld reports whether a sync holds dir's lock now (a lock file left by one that
// ended is no lock).
func lockHeld(dir string) bool {
	p := filepath.Join(dir, ".compass", "lock")
	if info, err := os.Lstat(p); err != nil || !info.Mode().IsRegular() {
		return false
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	held, err := tryLock(f)
	if err == nil && !held {
		unlockFile(f)
	}
	return held
}
