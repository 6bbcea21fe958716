package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
	"unicode/utf8"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/compass-mcp/compass-mcp/kv"
)

// busyError is kv.ErrBusy, said of the data file: another process has held it for longer
// than this one waited.
type busyError struct {
	path   string
	waited time.Duration
}

func (e *busyError) Error() string {
	return fmt.Sprintf("another compass-mcp process is using the data file (%s): waited %s for its lock; stop the other process or give this one another --data file", e.path, e.waited)
}

func (e *busyError) Unwrap() error { return kv.ErrBusy }

// DefaultTimeout is how long Open waits for another process's lock unless told otherwise.
const DefaultTimeout = 2 * time.Second

// DefaultPath is where the data file lives when neither --data nor COMPASS_DATA says:
// $XDG_DATA_HOME/compass/compass.db, else ~/.local/share/compass/compass.db.
func DefaultPath() (string, error) {
	if dir := os.Getenv("XDG_DATA_HOME"); dir != "" {
		return filepath.Join(dir, "compass", "compass.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the home folder for the default data file (set --data): %w", err)
	}
	return filepath.Join(home, ".local", "share", "compass", "compass.db"), nil
}

// initialMmap is how much of the file's address space bbolt maps at once. Each time a
// write transaction outgrows the map, bbolt copies every page the transaction has touched
// to the heap before mapping the file again (node.dereference): importing 100,000
// messages in one transaction allocated 580 MB that way, and 1.1 GB in all, for 19 MB of
// input. Mapping 1 GiB from the start costs address space only (pages are read as they
// are touched) on 64-bit Linux and macOS; on Windows, where bbolt grows the file to the
// map's size, and on 32-bit systems, bbolt's default stays.
var initialMmap = func() int {
	if runtime.GOOS == "windows" || strconv.IntSize < 64 {
		return 0
	}
	return 1 << 30
}()

// growStep is how far past its need the data file grows when it must (see Open).
const growStep = 1 << 20

// Open opens (creating it, and its folder, on first use) the bbolt file at path, waiting at
// most timeout for another process's lock. It returns an error wrapping kv.ErrBusy, naming
// the path, when the lock could not be had in time.
func Open(path string, timeout time.Duration) (*bbolt.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the folder of the data file %s: %w", path, err)
	}
	// bbolt retries a held lock every 50 ms; two processes taking turns would wait that
	// long each time. Ask it to try once (a timeout under its retry time) and retry here
	// sooner, backing off to 10 ms.
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 10*time.Millisecond) {
		db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Millisecond, InitialMmapSize: initialMmap})
		if err == nil {
			// With a mapping larger than bbolt's AllocSize (16 MiB), bbolt grows the file by
			// that much past what it needs at every growth: a 3.6 MB store became a 16.9 MB
			// file. Growing by growStep keeps the file near what is in use, at the cost of a
			// truncate and a sync every growStep of new data.
			db.AllocSize = growStep
			return db, nil
		}
		if !errors.Is(err, bolterrors.ErrTimeout) {
			return nil, openError(path, err)
		}
		if time.Now().After(deadline) {
			return nil, &busyError{path, timeout}
		}
		time.Sleep(wait)
	}
}

// openError says why path could not be opened: bbolt's error, or, for a file that is not a
// bbolt file at all (--data given the wrong file), what it seems to hold and what to do.
func openError(path string, err error) error {
	head := make([]byte, 4096)
	f, ferr := os.Open(path)
	if ferr == nil {
		n, _ := io.ReadFull(f, head)
		head = head[:n]
		f.Close()
	}
	// bbolt's first page is a meta page: a 16-byte page header, then its magic number.
	if ferr != nil || len(head) == 0 || len(head) >= 20 && binary.LittleEndian.Uint32(head[16:]) == boltMagic {
		return fmt.Errorf("opening the data file %s: %w", path, err)
	}
	return fmt.Errorf("%s is not a compass-mcp data file: it holds %s (%v). Give --data the path of compass-mcp's data file, or of a file that doesn't exist yet to start a new one; this file was left as it is", path, holds(head), err)
}

// boltMagic is the number bbolt writes in its meta pages.
const boltMagic = 0xED0CDAED

// holds names what a file that starts with head seems to be.
func holds(head []byte) string {
	for _, k := range []struct{ prefix, what string }{
		{"SQLite format 3\x00", "an SQLite database"},
		{"PK\x03\x04", "a zip archive"},
		{"\x1f\x8b", "gzip data"},
		{"%PDF", "a PDF document"},
	} {
		if bytes.HasPrefix(head, []byte(k.prefix)) {
			return k.what
		}
	}
	if t := head; utf8.Valid(t[:max(0, len(t)-utf8.UTFMax)]) && bytes.IndexByte(t, 0) < 0 {
		return "text"
	}
	return "data of another kind"
}
