package main

import (
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/compass-mcp/compass-mcp/kv/stores"
)

// store is the data a command works on, whichever backend --data chose (kv/stores).
type store = stores.Store

// openStore opens data: a postgres:// or postgresql:// URL, else a bbolt file's path. opts
// apply to a database only. A --data that is neither is a usage error (exitCode).
func openStore(data string, opts ...pg.Option) (store, error) {
	return stores.Open(data, opts...)
}
