//go:build !linux

package filesync

// openBeneath is the Lstat walk where there is no openat2.
func openBeneath(root, relDir string, create bool) (string, func(), error) {
	p, err := lstatWalk(root, relDir, create)
	return p, func() {}, err
}

// oNonblockNofollow is nothing here: readRegular's Lstat keeps a FIFO out (a FIFO put in
// a file's place between the look and the open is not).
const oNonblockNofollow = 0
