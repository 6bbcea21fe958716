package pg_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// open opens the store at url (kvtest.URL), closed when t ends.
func open(t testing.TB, url string, opts ...pg.Option) *pg.DB {
	t.Helper()
	db, err := pg.Open(context.Background(), url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestContract(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.DB { return open(t, kvtest.URL(t)) })
}

// The contract holds when a transaction's writes are sent ahead of its commit after every
// few bytes (as a copy of a whole store does past the write buffer): reads, cursors,
// rollback and deleted buckets see the same thing as when everything is kept until commit.
func TestContractSpilling(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.DB { return open(t, kvtest.URL(t), pg.WithWriteBuffer(100)) })
}

// A cursor that fetched a page before the transaction's writes were sent ahead of the
// commit sees those writes on its next move.
func TestCursorSeesSpilledWrites(t *testing.T) {
	db := open(t, kvtest.URL(t), pg.WithWriteBuffer(100))
	name := []byte("b")
	if err := db.Update(context.Background(), func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		if err != nil {
			return err
		}
		for _, k := range []string{"a", "c", "e"} {
			if err := b.Put([]byte(k), []byte(k)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var walk []string
	if err := db.Update(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket(name)
		c := b.Cursor()
		k, _ := c.First()
		walk = append(walk, string(k))
		if err := b.Put([]byte("b"), make([]byte, 200)); err != nil { // past the buffer: sent now
			return err
		}
		if err := b.Delete([]byte("c")); err != nil {
			return err
		}
		if err := b.Put([]byte("d"), make([]byte, 200)); err != nil {
			return err
		}
		for k, _ = c.Next(); k != nil; k, _ = c.Next() {
			walk = append(walk, string(k))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(walk); got != "[a b d e]" {
		t.Errorf("walk across spills = %s, want [a b d e]", got)
	}
}
