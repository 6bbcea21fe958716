//go:build windows

package filesync

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockAt is the byte locked: past the pid the file holds (4 GiB in), so that another
// process can still read who holds it (a Windows lock keeps others from reading its bytes).
const lockAt = 1

// tryLock takes an exclusive lock of one byte of f without waiting: held reports that
// another has it.
func tryLock(f *os.File) (held bool, err error) {
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &windows.Overlapped{OffsetHigh: lockAt})
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return true, nil
	}
	return false, err
}

func unlockFile(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &windows.Overlapped{OffsetHigh: lockAt})
}
