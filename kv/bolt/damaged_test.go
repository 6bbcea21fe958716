package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// One flipped byte, a value's size in a leaf page, made the next write die with "fatal
// error: fault" (SIGSEGV) on every start, while bbolt's Check called the file clean. Now
// the write is answered with an error wrapping kv.ErrDamaged, naming the file, and the
// process goes on.
func TestDamagedFileIsAnErrorNotACrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	f, err := OpenFile(path, time.Second, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	put := func(k string, n int) error {
		return f.Batch(context.Background(), func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("docs"))
			if err != nil {
				return err
			}
			return b.Put([]byte(k), []byte(strings.Repeat("v", n)))
		})
	}
	for i := range 200 {
		if err := put(fmt.Sprintf("key %03d", i), 100); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	flipValueSizes(t, path)

	f, err = OpenFile(path, time.Second, time.Hour)
	if err != nil {
		t.Fatalf("opening the damaged file: %v", err)
	}
	defer f.Close()
	var got []error
	for i := range 3 {
		err := put(fmt.Sprintf("key %03d", i), 2000)
		got = append(got, err)
	}
	err = f.View(context.Background(), func(tx kv.Tx) error {
		return tx.Bucket([]byte("docs")).ForEach(func(k, v []byte) error {
			_ = append([]byte(nil), v...)
			return nil
		})
	})
	got = append(got, err)
	damaged := 0
	for _, err := range got {
		if errors.Is(err, kv.ErrDamaged) {
			damaged++
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "backup") {
				t.Errorf("the error doesn't name the file and say to restore a backup: %v", err)
			}
		}
	}
	if damaged == 0 {
		t.Errorf("no transaction on the damaged file said so: %v", got)
	}
}

// flipValueSizes sets a high byte of the first value size in every leaf page of the file.
func flipValueSizes(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	size := int(binary.LittleEndian.Uint32(raw[16+8:])) // the meta page's page size
	flipped := 0
	for off := 2 * size; off+size <= len(raw); off += size {
		flags, count := binary.LittleEndian.Uint16(raw[off+8:]), binary.LittleEndian.Uint16(raw[off+10:])
		if flags&0x02 == 0 || count == 0 { // not a leaf page
			continue
		}
		raw[off+16+12+3] ^= 0x10 // the first element's vsize, its high byte: +256 MiB
		flipped++
	}
	if flipped == 0 {
		t.Fatal("no leaf page to damage")
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}
