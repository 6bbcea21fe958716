package pg_test

import (
	"context"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// After GetAll, the transaction knows every key asked (found or not, a value or a nested
// bucket) without asking the database again; the contract (kvtest) checks the answers.
func TestGetAllKnows(t *testing.T) {
	db := open(t, kvtest.URL(t))
	name := []byte("b")
	if err := db.Update(context.Background(), func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		if err != nil {
			return err
		}
		if _, err := b.CreateBucketIfNotExists([]byte("sub")); err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	keys := [][]byte{[]byte("k"), []byte("sub"), []byte("missing")}
	if err := db.View(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket(name)
		for _, k := range keys {
			if pg.Known(b, k) {
				t.Errorf("%q known before GetAll", k)
			}
		}
		kv.GetAll(b, keys)
		for _, k := range keys {
			if !pg.Known(b, k) {
				t.Errorf("%q not known after GetAll", k)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
