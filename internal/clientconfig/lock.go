package clientconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// lock takes the lock of install's writers on file, waiting for another install that holds
// it, and returns its release. Two installs into one file then read and write it one after
// the other, and neither loses the other's server.
//
// The lock is a file of its own in the person's cache folder (compass-mcp/locks, named by
// a hash of file's path), never beside the file: a project's .vscode or .cursor folder is
// committed, and the client's own folder is not install's to fill. It is locked with the
// system's advisory lock (flock on Unix, LockFileEx on Windows: lock_*.go), which the
// system releases when the process ends, so a crashed install leaves no stale lock. A
// client doesn't take it: its own saves are caught by Write's comparison, and Install reads
// the file again.
func lock(file string) (release func(), err error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "compass-mcp", "locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making the folder of install's locks: %w", err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(abs))
	f, err := os.OpenFile(filepath.Join(dir, hex.EncodeToString(sum[:12])+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening install's lock for %s: %w", file, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s for install: %w", file, err)
	}
	return func() {
		unlockFile(f)
		f.Close()
	}, nil
}
