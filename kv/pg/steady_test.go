package pg_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/jackc/pgx/v5"
)

// A store made before migration 003 (its schema at version 2, with entries in it) is
// migrated on Open: its entries read as before, and the table has the settings and the
// trigger 003 gives it.
func TestMigrationSteadyOnAnExistingStore(t *testing.T) {
	url := kvtest.URL(t)
	exec(t, url, "CREATE TABLE compass_schema (version int PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())")
	for v, name := range []string{"001_kv.sql", "002_counter.sql"} {
		sql, err := os.ReadFile(filepath.Join("migrations", name))
		if err != nil {
			t.Fatal(err)
		}
		exec(t, url, string(sql))
		exec(t, url, "INSERT INTO compass_schema (version) VALUES ($1)", v+1)
	}
	// A bucket "docs" in the root with one value, as a store of version 2 holds them.
	exec(t, url, "INSERT INTO kv_entries (bucket, key, child) SELECT 0, 'docs', nextval('kv_bucket_ids')")
	exec(t, url, "INSERT INTO kv_entries (bucket, key, value) SELECT child, 'a', 'one' FROM kv_entries WHERE bucket = 0 AND key = 'docs'")

	db := open(t, url)
	err := db.View(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket([]byte("docs"))
		if b == nil {
			t.Fatal("bucket docs is gone after the migration")
		}
		if got := string(b.Get([]byte("a"))); got != "one" {
			t.Errorf("docs/a is %q after the migration, want one", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(context.Background(), func(tx kv.Tx) error { return tx.Bucket([]byte("docs")).Put([]byte("a"), []byte("two")) }); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var opts []string
	if err := conn.QueryRow(ctx, "SELECT reloptions FROM pg_class WHERE oid = 'kv_entries'::regclass").Scan(&opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"autovacuum_vacuum_scale_factor=0", "autovacuum_vacuum_threshold=1000", "autovacuum_vacuum_cost_delay=0"} {
		if !slices.Contains(opts, want) {
			t.Errorf("kv_entries has options %v, without %s", opts, want)
		}
	}
	var triggers int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'kv_entries'::regclass AND tgname = 'kv_entries_unchanged'").Scan(&triggers); err != nil {
		t.Fatal(err)
	}
	if triggers != 1 {
		t.Errorf("kv_entries has %d triggers kv_entries_unchanged, want 1", triggers)
	}
	var version int
	if err := conn.QueryRow(ctx, "SELECT max(version) FROM compass_schema").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != pg.Migrations() {
		t.Errorf("the schema is at version %d after Open, want %d", version, pg.Migrations())
	}
}

// A Put of the value a key already holds writes no new row version (no dead row for vacuum
// to find); a Put of another value does. The row's xmin names the transaction that wrote
// the version seen.
func TestUnchangedPutWritesNoRow(t *testing.T) {
	url := kvtest.URL(t)
	db := open(t, url)
	put := func(v string) {
		t.Helper()
		err := db.Update(context.Background(), func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			return b.Put([]byte("k"), []byte(v))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	xmin := func() string {
		t.Helper()
		var x string
		err := conn.QueryRow(ctx, `SELECT e.xmin::text FROM kv_entries e JOIN kv_entries b ON e.bucket = b.child
			WHERE b.bucket = 0 AND b.key = 'b' AND e.key = 'k'`).Scan(&x)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	put("same")
	first := xmin()
	for range 3 {
		put("same")
	}
	if got := xmin(); got != first {
		t.Errorf("putting the same value again wrote a new row (xmin %s, was %s)", got, first)
	}
	put("other")
	if got := xmin(); got == first {
		t.Errorf("putting another value wrote no new row (xmin still %s)", got)
	}
	err = db.View(context.Background(), func(tx kv.Tx) error {
		if got := string(tx.Bucket([]byte("b")).Get([]byte("k"))); got != "other" {
			t.Errorf("b/k is %q, want other", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
