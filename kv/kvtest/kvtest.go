// Package kvtest is the contract every kv backend keeps (Run), and fresh stores for tests
// (Open, URL): a bbolt file by default, a PostgreSQL schema of its own when
// COMPASS_TEST_DATA=postgres://… is set.
package kvtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/jackc/pgx/v5"
	"go.etcd.io/bbolt"
)

// Env names the variable that points tests at a PostgreSQL database.
const Env = "COMPASS_TEST_DATA"

// Open returns a fresh, empty store, closed (and on PostgreSQL dropped) when t ends: a bbolt
// file in t's temp dir, or a schema of its own in $COMPASS_TEST_DATA.
func Open(t testing.TB) kv.DB {
	t.Helper()
	if os.Getenv(Env) == "" {
		return OpenBolt(t)
	}
	db, err := pg.Open(context.Background(), URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// OpenBolt returns a fresh bbolt store in t's temp dir.
func OpenBolt(t testing.TB) kv.DB {
	t.Helper()
	// A large first map: a writer that grows the map waits for readers, and the contract's
	// snapshot test holds a reader open across a write.
	b, err := bbolt.Open(filepath.Join(t.TempDir(), "kv.db"), 0o600, &bbolt.Options{Timeout: time.Second, InitialMmapSize: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return kv.BoltDB(b)
}

// Postgres returns $COMPASS_TEST_DATA, the database of the PostgreSQL tests. Without it, t
// is skipped, or fails when CI=true: CI must run every PostgreSQL test.
func Postgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI runs the PostgreSQL tests (.ci/postgres.sh prints the URL)", Env)
		}
		t.Skipf("%s=postgres://... is not set", Env)
	}
	return base
}

// URL returns the URL of a new, empty schema of its own in $COMPASS_TEST_DATA (the URL's
// search_path names it), dropped when t ends. Without COMPASS_TEST_DATA, t is skipped, or
// fails when CI=true: CI must run every PostgreSQL test.
func URL(t testing.TB) string {
	t.Helper()
	base := Postgres(t)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL: %q", Env, base)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	schema := "kvtest_" + hex.EncodeToString(rnd[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connecting to %s: %v", Env, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// CopyToPostgres returns a store in a new PostgreSQL schema of its own (URL), holding a copy
// of from byte for byte (kv.Copy), closed and dropped when t ends: the same data on both
// backends, to compare their answers. Without COMPASS_TEST_DATA, t is skipped (CI: fails).
func CopyToPostgres(t testing.TB, from kv.DB) kv.DB {
	t.Helper()
	db, err := pg.Open(context.Background(), URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := kv.Copy(from, db); err != nil {
		t.Fatal(err)
	}
	return db
}
