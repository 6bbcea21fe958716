package main

import (
	"context"
	"fmt"
	"regexp"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// store is the data a command works on, whichever backend --data chose: a bbolt file
// (*bolt.File) or a PostgreSQL database (*pg.DB).
type store interface {
	kv.DB
	Close() error
	// Path names the data for people and for the page's identity: the bbolt file's path,
	// or the database's URL without its password.
	Path() string
}

var (
	_ store = (*bolt.File)(nil)
	_ store = (*pg.DB)(nil)
)

// urlLike is a --data that starts as a URL does (scheme://), which no file path here does.
var urlLike = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

// checkData refuses a --data that looks like a URL but is not a PostgreSQL one (a typo,
// postgress://, would otherwise make folders of the URL and a data file in them, its
// password in their names).
func checkData(data string) error {
	if m := urlLike.FindStringSubmatch(data); m != nil && !pg.IsURL(data) {
		return usageError{fmt.Sprintf("--data %s is neither of the two forms it takes: a bbolt file's path (like ~/.local/share/compass/compass.db), or a PostgreSQL database's URL, postgres://USER:PASSWORD@HOST:PORT/DB (or postgresql://...); %s:// is not one. Nothing was created.", pg.Redact(data), m[1])}
	}
	return nil
}

// openStore opens data: a postgres:// or postgresql:// URL, else a bbolt file's path. opts
// apply to a database only.
func openStore(data string, opts ...pg.Option) (store, error) {
	if err := checkData(data); err != nil {
		return nil, err
	}
	if !pg.IsURL(data) {
		return bolt.OpenFile(data, bolt.DefaultTimeout, bolt.DefaultIdle)
	}
	db, err := pg.Open(context.Background(), data, opts...)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", pg.Redact(data), err)
	}
	return db, nil
}
