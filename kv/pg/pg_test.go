package pg_test

import (
	"context"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

func open(t testing.TB, opts ...pg.Option) *pg.DB {
	t.Helper()
	db, err := pg.Open(context.Background(), kvtest.URL(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestContract(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.DB { return open(t) })
}

func TestContractSerializable(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.DB { return open(t, pg.WithSerializable()) })
}
