//go:build windows

package clientconfig

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockFile waits for an exclusive lock of f's first byte (LockFileEx without
// LOCKFILE_FAIL_IMMEDIATELY waits).
func lockFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, new(windows.Overlapped))
}

func unlockFile(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}
