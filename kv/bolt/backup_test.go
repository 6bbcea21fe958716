package bolt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// A backup taken while writes go on is a consistent bbolt file holding at least what was
// committed before it began, and leaves nothing behind: no temporary copy beside the data
// file, no .partial beside the backup.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	f, err := OpenFile(filepath.Join(dir, "data", "c.db"), time.Second, DefaultIdle)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	put := func(k string) error {
		return f.Batch(context.Background(), func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("docs"))
			if err != nil {
				return err
			}
			return b.Put([]byte(k), make([]byte, 1000))
		})
	}
	for i := range 500 {
		if err := put(fmt.Sprintf("before %03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var during atomic.Int64
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := put(fmt.Sprintf("during %05d", i)); err != nil {
				t.Errorf("a write during the backup: %v", err)
				return
			}
			during.Add(1)
		}
	})
	to := filepath.Join(dir, "backups", "copy.db")
	if err := os.Mkdir(filepath.Dir(to), 0o700); err != nil {
		t.Fatal(err)
	}
	size, err := f.Backup(context.Background(), to)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d writes went on during the backup", during.Load())

	if fi, err := os.Stat(to); err != nil {
		t.Error(err)
	} else if fi.Size() != size {
		t.Errorf("the backup has %d bytes; Backup said %d", fi.Size(), size)
	}
	for _, pattern := range []string{filepath.Join(dir, "data", ".compass-backup-*"), to + ".partial"} {
		if left, _ := filepath.Glob(pattern); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	}
	copied, err := Open(to, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	err = Wrap(copied).View(context.Background(), func(tx kv.Tx) error {
		btx, _ := TxOf(tx)
		for err := range btx.Check() {
			return fmt.Errorf("the backup is inconsistent: %w", err)
		}
		b := tx.Bucket([]byte("docs"))
		if b == nil {
			return fmt.Errorf("the backup has no bucket docs")
		}
		for i := range 500 {
			if k := fmt.Sprintf("before %03d", i); b.Get([]byte(k)) == nil {
				return fmt.Errorf("the backup lacks %q, committed before it began", k)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// A backup that cannot be written says where it was going, and leaves no temporary copy
// beside the data file.
func TestBackupToAMissingFolder(t *testing.T) {
	dir := t.TempDir()
	f, err := OpenFile(filepath.Join(dir, "c.db"), time.Second, DefaultIdle)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	to := filepath.Join(dir, "no such folder", "copy.db")
	if _, err := f.Backup(context.Background(), to); err == nil || !strings.Contains(err.Error(), to) {
		t.Errorf("a backup into a missing folder = %v, want an error naming %s", err, to)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".compass-backup-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
