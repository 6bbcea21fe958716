package kv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
)

// A change works out what to write in a read (which may see a store a commit old, and
// may run again), then writes in a Batch whose function checks that what the read saw
// still holds: here, that the counter is still at the value the read doubled.
func ExampleChange() {
	dir, _ := os.MkdirTemp("", "compass-example-")
	defer os.RemoveAll(dir)
	db, err := bolt.OpenFile(filepath.Join(dir, "compass.db"), time.Second, time.Hour)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()
	db.Update(ctx, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("counters"))
		if err != nil {
			return err
		}
		return b.Put([]byte("n"), []byte("21"))
	})

	var was, next string
	err = kv.Change(ctx, db, func(tx kv.Tx) (bool, error) {
		was = string(tx.Bucket([]byte("counters")).Get([]byte("n"))) // afresh on every run
		var n int
		fmt.Sscan(was, &n)
		next = fmt.Sprint(2 * n)
		return next != was, nil // nothing to write when nothing changes
	}, func(tx kv.Tx) error {
		b := tx.Bucket([]byte("counters"))
		if string(b.Get([]byte("n"))) != was {
			return fmt.Errorf("the counter moved since the read")
		}
		return b.Put([]byte("n"), []byte(next))
	})
	fmt.Println(was, "->", next, err)
	// Output: 21 -> 42 <nil>
}
