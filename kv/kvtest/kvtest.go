// Package kvtest is the contract every kv backend keeps (Run), and fresh stores for tests
// (Open, Data, URL): a bbolt file by default, a PostgreSQL schema of its own when
// COMPASS_TEST_DATA=postgres://… is set.
//
// Two variables name databases, for two kinds of test:
//
//   - COMPASS_TEST_DATA is the store of every store and end-to-end test (Open, Data): unset,
//     they run on bbolt; set to a postgres:// URL, on PostgreSQL.
//   - COMPASS_TEST_POSTGRES is a database for the tests that need PostgreSQL whatever the
//     store (kv/pg's own, replicas, the copy between stores: Postgres, URL), so that a run
//     on bbolt still runs them. COMPASS_TEST_DATA, when it is a postgres:// URL, serves
//     them too.
package kvtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/jackc/pgx/v5"
	"go.etcd.io/bbolt"
)

// Env names the variable that chooses the store of the store and end-to-end tests.
const Env = "COMPASS_TEST_DATA"

// PostgresEnv names the variable that gives the PostgreSQL-only tests a database when the
// store is bbolt.
const PostgresEnv = "COMPASS_TEST_POSTGRES"

// OnPostgres tells whether the store of the tests is PostgreSQL ($COMPASS_TEST_DATA is set).
func OnPostgres() bool { return os.Getenv(Env) != "" }

// Open returns a fresh, empty store, closed (and on PostgreSQL dropped) when t ends: a bbolt
// file in t's temp dir (openFile), or a schema of its own in $COMPASS_TEST_DATA.
func Open(t testing.TB) kv.DB {
	t.Helper()
	if OnPostgres() {
		return OpenURL(t, URL(t))
	}
	return openFile(t)
}

// OpenOnce is Open for a test that bounds what one call costs: on bbolt its functions run
// once, as in the product, not twice (openFile); on PostgreSQL it is Open.
func OpenOnce(t testing.TB) kv.DB {
	t.Helper()
	if OnPostgres() {
		return OpenURL(t, URL(t))
	}
	return openFile(t).(rerun).File
}

// openFile returns a fresh bbolt store in t's temp dir: a bolt.File, as the server
// holds it (its Batch groups the writers that arrive together and commits at once;
// bbolt's own waits up to 10 ms for more), kept open for the whole test and checked for
// consistency (bbolt's Tx.Check) when t ends. It runs every View's and Batch's function
// twice (rerun), as PostgreSQL may; its Path is the file's.
func openFile(t testing.TB) kv.DB {
	t.Helper()
	f, err := bolt.OpenFile(filepath.Join(t.TempDir(), "compass.db"), time.Second, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		checkBolt(t, f)
		f.Close()
	})
	return rerun{f}
}

// checkBolt fails t if the bbolt file of db is inconsistent (bbolt's Tx.Check).
func checkBolt(t testing.TB, db kv.DB) {
	t.Helper()
	if err := db.View(context.Background(), func(tx kv.Tx) error {
		btx, _ := bolt.TxOf(tx)
		for err := range btx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Errorf("the bbolt file is inconsistent: %v", err)
	}
}

// OpenURL opens the PostgreSQL store at url (a URL from URL or Data), closed when t ends.
// Opening it again opens the same data, as a restarted server would.
func OpenURL(t testing.TB, url string) *pg.DB {
	t.Helper()
	db, err := pg.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Data returns what a test passes to compass-mcp's --data (or COMPASS_DATA) for a fresh,
// empty store: a file named name in dir, or, on PostgreSQL, the URL of a new schema of its
// own (URL). A test that opens the store itself afterwards opens it with OpenData.
func Data(t testing.TB, dir, name string) string {
	t.Helper()
	if !OnPostgres() {
		return filepath.Join(dir, name)
	}
	return URL(t)
}

// Store is a store that a test may close before it ends, to open it again (OpenData) as a
// restarted server would; closing it twice does no harm.
type Store interface {
	kv.DB
	Close() error
}

// OpenData opens what Data returned, as a test does after (or while) compass-mcp runs on
// it: the bbolt file held only while in use (bolt.File, as the server holds it, so
// that a server still running can have it between transactions), or the PostgreSQL
// schema. It is closed when t ends, if the test has not closed it.
func OpenData(t testing.TB, data string) Store {
	t.Helper()
	if strings.HasPrefix(data, "postgres://") || strings.HasPrefix(data, "postgresql://") {
		return OpenURL(t, data)
	}
	f, err := bolt.OpenFile(data, bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// OpenBolt returns a fresh bbolt store in t's temp dir, whose file is checked for
// consistency (bbolt's Tx.Check) when t ends.
func OpenBolt(t testing.TB) kv.DB {
	t.Helper()
	// A large first map: a writer that grows the map waits for readers, and the contract's
	// snapshot test holds a reader open across a write.
	b, err := bbolt.Open(filepath.Join(t.TempDir(), "kv.db"), 0o600, &bbolt.Options{Timeout: time.Second, InitialMmapSize: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	db := bolt.Wrap(b)
	t.Cleanup(func() {
		checkBolt(t, db)
		b.Close()
	})
	return db
}

// Postgres returns the database of the PostgreSQL tests: $COMPASS_TEST_DATA when the store
// is PostgreSQL, else $COMPASS_TEST_POSTGRES. Without either, t is skipped, or fails when
// CI=true: CI must run every PostgreSQL test.
func Postgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	if base == "" {
		base = os.Getenv(PostgresEnv)
	}
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("neither %s nor %s is set: CI runs the PostgreSQL tests (.ci/postgres.sh prints a URL)", Env, PostgresEnv)
		}
		t.Skipf("a PostgreSQL test: set %s=postgres://... (or %s) to run it", PostgresEnv, Env)
	}
	return base
}

// URL returns the URL of a new, empty schema of its own in the database Postgres returns
// (the URL's search_path names it), dropped when t ends. Without a database, t is skipped,
// or fails when CI=true: CI must run every PostgreSQL test.
func URL(t testing.TB) string {
	t.Helper()
	base := Postgres(t)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s and %s must be postgres:// URLs: %q", Env, PostgresEnv, base)
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
	if _, err := kv.Copy(context.Background(), from, db); err != nil {
		t.Fatal(err)
	}
	return db
}
