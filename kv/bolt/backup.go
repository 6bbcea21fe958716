package bolt

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/compass-mcp/compass-mcp/kv"
)

// Backup writes a consistent copy of the data file to path while this process and others
// go on using it, and returns the copy's size in bytes. path is never a half-written copy:
// the copy goes to path.partial, is synced, then renamed.
//
// # Caveats
//
// The copy is one read transaction, and a File is held by one process at a time: other
// processes wait for the file while it is read (at most their lock timeout, then they say
// it is busy). So the consistent copy is written next to the data file, a local disk as
// fast as the file itself, inside the transaction; the copy to path, which may be on a slow
// disk or a share, comes after, with the file let go.
func (f *File) Backup(ctx context.Context, path string) (int64, error) {
	local, err := os.CreateTemp(filepath.Dir(f.path), ".compass-backup-*")
	if err != nil {
		return 0, fmt.Errorf("backing up to %s: %w", path, err)
	}
	defer os.Remove(local.Name())
	defer local.Close()
	var size int64
	err = f.View(ctx, func(tx kv.Tx) (err error) {
		size, err = tx.(boltTx).tx.WriteTo(local)
		return err
	})
	if err == nil {
		err = copyFile(local, path)
	}
	if err != nil {
		return 0, fmt.Errorf("backing up to %s: %w", path, err)
	}
	return size, nil
}

// copyFile copies from, from its start, to path, through path.partial, synced, so that
// path is never a half-written copy.
func copyFile(from *os.File, path string) error {
	if _, err := from.Seek(0, io.SeekStart); err != nil {
		return err
	}
	tmp := path + ".partial"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, from); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
