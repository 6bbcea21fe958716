//go:build !unix

package filesync

import "io/fs"

// inodeOf is 0 where the system has no inodes in a FileInfo (Windows): renames are then
// found by content hash alone.
func inodeOf(fs.FileInfo) uint64 { return 0 }
