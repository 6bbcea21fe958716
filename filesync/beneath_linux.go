package filesync

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// oNonblockNofollow opens without following a final link and without waiting on a FIFO.
const oNonblockNofollow = unix.O_NONBLOCK | unix.O_NOFOLLOW

// openBeneath opens the folder relDir beneath root with openat2's RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS (made a folder at a time if missing and create), and returns its
// /proc/self/fd path: what is then done there is done in that folder, whatever is put in
// its place meanwhile. A system without openat2 (before Linux 5.6) or /proc falls back to
// the Lstat walk.
func openBeneath(root, relDir string, create bool) (string, func(), error) {
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	if _, err := os.Stat(fdPath(rfd)); err != nil {
		unix.Close(rfd)
		p, err := lstatWalk(root, relDir, create)
		return p, func() {}, err
	}
	fd, err := walkBeneath(rfd, relDir, create)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		unix.Close(rfd)
		p, err := lstatWalk(root, relDir, create)
		return p, func() {}, err
	}
	if fd != rfd {
		unix.Close(rfd)
	}
	if err != nil {
		return "", nil, err
	}
	return fdPath(fd), func() { unix.Close(fd) }, nil
}

func fdPath(fd int) string { return fmt.Sprintf("/proc/self/fd/%d", fd) }

var beneathHow = unix.OpenHow{
	Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
	Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
}

// walkBeneath opens relDir beneath the folder rfd: at once, else (missing, and create) a
// folder at a time, each made if missing. It returns rfd itself for ".".
func walkBeneath(rfd int, relDir string, create bool) (int, error) {
	if relDir == "." {
		return rfd, nil
	}
	how := beneathHow
	fd, err := unix.Openat2(rfd, relDir, &how)
	if err == nil || !errors.Is(err, unix.ENOENT) || !create {
		return fd, beneathErr(relDir, err)
	}
	cur := rfd
	for _, part := range strings.Split(relDir, "/") {
		next, err := unix.Openat2(cur, part, &how)
		if errors.Is(err, unix.ENOENT) {
			if err := unix.Mkdirat(cur, part, 0o777); err != nil && !errors.Is(err, unix.EEXIST) {
				closeUnless(cur, rfd)
				return -1, &os.PathError{Op: "mkdir", Path: relDir, Err: err}
			}
			next, err = unix.Openat2(cur, part, &how)
		}
		closeUnless(cur, rfd)
		if err != nil {
			return -1, beneathErr(relDir, err)
		}
		cur = next
	}
	return cur, nil
}

func closeUnless(fd, keep int) {
	if fd != keep {
		unix.Close(fd)
	}
}

// beneathErr says a link or a way out as errNotBeneath.
func beneathErr(relDir string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV), errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("%w (%s)", errNotBeneath, relDir)
	}
	return &os.PathError{Op: "open", Path: relDir, Err: err}
}
