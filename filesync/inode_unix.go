//go:build unix

package filesync

import (
	"io/fs"
	"syscall"
)

// inodeOf is a file's inode number, which a rename or a move in the folder keeps.
func inodeOf(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
