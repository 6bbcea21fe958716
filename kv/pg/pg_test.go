package pg_test

import (
	"context"
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

func TestContractSerializable(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.DB { return open(t, kvtest.URL(t), pg.WithSerializable()) })
}
