package filesync

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// errNotBeneath is returned (wrapped, with the path) for a path the sync would write, move
// or remove that is not beneath the folder, or passes a symbolic link or a file on the way:
// a link inside the folder (link -> /elsewhere) must not take a document's file out of it,
// nor a hostile server's name.
var errNotBeneath = errors.New("it would be outside the folder or through a symbolic link")

// checkRel refuses a relative path that is not plainly beneath the folder: absolute, empty
// parts, "." or "..".
func checkRel(rel string) error {
	if rel == "" || strings.HasPrefix(rel, "/") || filepath.IsAbs(filepath.FromSlash(rel)) {
		return fmt.Errorf("%w: %q", errNotBeneath, rel)
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." || part == ".." || strings.ContainsRune(part, '\\') && filepath.Separator == '\\' {
			return fmt.Errorf("%w: %q", errNotBeneath, rel)
		}
	}
	return nil
}

// folderOf opens the folder that holds the file rel (slash-separated) beneath root, its
// missing folders made if create, with no symbolic link on the way; it returns a path to
// reach that folder by (on Linux, the opened folder itself, so that a link put in its
// place afterwards leads nowhere), the file's name in it, and what to call when done.
func folderOf(root, rel string, create bool) (dir, name string, done func(), err error) {
	if err := checkRel(rel); err != nil {
		return "", "", nil, err
	}
	dir, done, err = openBeneath(root, path.Dir(rel), create)
	if err != nil {
		return "", "", nil, fmt.Errorf("%s: %w", rel, err)
	}
	return dir, path.Base(rel), done, nil
}

// lstatWalk is openBeneath where the system can't open beneath: each folder on the way
// looked at with Lstat (not followed), made if missing and create. A link put in a
// folder's place between the look and the write is not caught: the window is short, and
// only Linux closes it.
func lstatWalk(root, relDir string, create bool) (string, error) {
	cur := root
	if relDir == "." {
		return cur, nil
	}
	for _, part := range strings.Split(relDir, "/") {
		next := filepath.Join(cur, part)
		info, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err := os.Mkdir(next, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", err
			}
			info, err = os.Lstat(next)
		}
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink != 0 || !info.IsDir() {
			return "", fmt.Errorf("%w (%s is not a folder)", errNotBeneath, part)
		}
		cur = next
	}
	return cur, nil
}

// readBeneath reads the file rel beneath root, if it is a regular file reached through no
// symbolic link.
func readBeneath(root, rel string) ([]byte, error) {
	dir, name, done, err := folderOf(root, rel, false)
	if err != nil {
		return nil, err
	}
	defer done()
	return readRegular(filepath.Join(dir, name))
}

// readRegular reads the file at p (up to one byte more than a document holds) only if it
// is a regular file (not a link, a FIFO, a device): a FIFO put where a file was, or named
// .compassignore or as the state, would hang every pass.
func readRegular(p string) ([]byte, error) { return readRegularUpTo(p, docstore.MaxText+1) }

// readRegularUpTo is readRegular of at most limit bytes.
func readRegularUpTo(p string, limit int64) ([]byte, error) {
	if info, err := os.Lstat(p); err != nil {
		return nil, err
	} else if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(p))
	}
	f, err := os.OpenFile(p, os.O_RDONLY|oNonblockNofollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(p))
	}
	return io.ReadAll(io.LimitReader(f, limit))
}
