package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// store is the data a command works on, whichever backend --data chose: a bbolt file
// (*bolt.File) or a PostgreSQL database (pgStore).
type store interface {
	kv.DB
	Close() error
	// Path names the data for people and for the page's identity: the bbolt file's path,
	// or the database's URL without its password.
	Path() string
}

var (
	_ store = (*bolt.File)(nil)
	_ store = pgStore{}
)

// pgStore is a PostgreSQL database with the URL it was opened by, password removed.
type pgStore struct {
	*pg.DB
	shown string
}

func (s pgStore) Path() string { return s.shown }

// isPostgres reports whether --data names a PostgreSQL database rather than a bbolt file.
func isPostgres(data string) bool {
	return strings.HasPrefix(data, "postgres://") || strings.HasPrefix(data, "postgresql://")
}

// redact is a database URL with its passwords (in the user part, or the password and
// sslpassword parameters, the client key's passphrase) removed, for logs and messages.
func redact(data string) string {
	u, err := url.Parse(data)
	if err != nil {
		// Not parsed: show no more than the scheme and what follows the last @, without
		// the parameters.
		data, _, _ = strings.Cut(data, "?")
		if i := strings.LastIndex(data, "@"); i >= 0 {
			scheme, _, _ := strings.Cut(data, "://")
			return scheme + "://…@" + data[i+1:]
		}
		return data
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") || q.Has("sslpassword") {
		q.Del("password")
		q.Del("sslpassword")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// openStore opens data: a postgres:// or postgresql:// URL, else a bbolt file's path. opts
// apply to a database only.
func openStore(data string, opts ...pg.Option) (store, error) {
	if !isPostgres(data) {
		return bolt.OpenFile(data, bolt.DefaultTimeout, bolt.DefaultIdle)
	}
	db, err := pg.Open(context.Background(), data, opts...)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", redact(data), err)
	}
	return pgStore{DB: db, shown: redact(data)}, nil
}
