package filesync

import "golang.org/x/sys/unix"

// exchange swaps the files at a and b in one step (renameat2's RENAME_EXCHANGE), so that
// a write over a file can look at what it replaced and put it back if it wasn't what the
// sync last saw: no save of an editor's can fall between a look and a rename.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
