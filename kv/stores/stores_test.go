package stores

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// A data that looks like a URL but not a PostgreSQL one is refused, naming the forms data
// takes, without its password, and Open creates nothing for it; paths and PostgreSQL URLs
// pass.
func TestCheck(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, data := range []string{"postgress://user:pw@host/db", "postgre://user:pw@10.0.0.1/db", "file:///tmp/x.db", "mysql://user:pw@host/db"} {
		err := Check(data)
		var nd *NotDataError
		if !errors.As(err, &nd) || !strings.Contains(err.Error(), "postgres://USER") || strings.Contains(err.Error(), ":pw") {
			t.Errorf("Check(%q) = %v; want a *NotDataError naming the forms, without the password", data, err)
		}
		if db, err := Open(context.Background(), data); !errors.As(err, &nd) {
			if db != nil {
				db.Close()
			}
			t.Errorf("Open(%q) = %v; want Check's refusal", data, err)
		}
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Errorf("Open of data it refused made %v", ents)
	}
	for _, data := range []string{"compass.db", "/tmp/a b/c.db", "postgres://u:p@127.0.0.1/db", "postgresql://127.0.0.1/db?search_path=s", "C:\\data\\c.db"} {
		if err := Check(data); err != nil {
			t.Errorf("Check(%q) = %v; want nil", data, err)
		}
	}
}

// Same sees one file through two paths, and tells two files, a missing one, and a file
// from a URL apart.
func TestSame(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{a, filepath.Join(dir, ".", "a.db"), true},
		{a, b, false},
		{a, filepath.Join(dir, "missing.db"), false},
		{a, "postgres://u@127.0.0.1/db", false},
		{"postgres://u:one@127.0.0.1/db", "postgresql://v:two@127.0.0.1:5432/db", true},
		{"postgres://u@127.0.0.1/db?search_path=a", "postgres://u@127.0.0.1/db?search_path=b", false},
		{"postgres://u@127.0.0.1/db", "postgres://u@127.0.0.1/other", false},
	} {
		if got := Same(tc.a, tc.b); got != tc.want {
			t.Errorf("Same(%q, %q) = %v; want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// fill writes a few buckets, nested ones among them, into a new bbolt file at path.
func fill(t *testing.T, path string) {
	t.Helper()
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(context.Background(), func(tx kv.Tx) error {
		for _, name := range []string{"docs", "threads", "people"} {
			b, err := tx.CreateBucketIfNotExists([]byte(name))
			if err != nil {
				return err
			}
			if err := b.Put([]byte("k "+name), []byte(strings.Repeat(name, 100))); err != nil {
				return err
			}
			nested, err := b.CreateBucketIfNotExists([]byte("versions"))
			if err != nil {
				return err
			}
			if err := nested.Put([]byte{0, 1, 2}, []byte("ümlaut 🧭")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func digest(t *testing.T, data string) (string, kv.Counts) {
	t.Helper()
	db, err := Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sum, n, err := kv.Digest(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return sum, n
}

// Copy copies a bbolt file into a new one (folders made) and reports what the two hold;
// it refuses a copy into a store that is not empty, from a file that is not there, and
// from one that holds nothing, removing the file it made for that.
func TestCopy(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "from.db")
	fill(t, from)
	wantSum, wantN := digest(t, from)
	to := filepath.Join(dir, "sub", "to.db")
	c, err := Copy(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	if c.Digest != wantSum || c.Counts != wantN || c.From != from || c.To != to {
		t.Fatalf("Copy = %+v; want sha256 %s, %+v, from %s to %s", c, wantSum, wantN, from, to)
	}
	if sum, n := digest(t, to); sum != wantSum || n != wantN {
		t.Fatalf("the copy holds sha256 %s, %+v; the original %s, %+v", sum, n, wantSum, wantN)
	}

	if _, err := Copy(context.Background(), from, to); err == nil || !strings.Contains(err.Error(), "is not empty") || !strings.Contains(err.Error(), "nothing was copied") {
		t.Errorf("a copy into a store that is not empty: %v", err)
	}
	if sum, _ := digest(t, to); sum != wantSum {
		t.Errorf("a refused copy changed the store it was refused")
	}

	missing := filepath.Join(dir, "missing.db")
	if _, err := Copy(context.Background(), missing, filepath.Join(dir, "x.db")); err == nil || !strings.HasPrefix(err.Error(), "--from: ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a copy from a file that is not there: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a copy from a missing file made it: %v", err)
	}

	empty := filepath.Join(dir, "empty.db")
	db, err := Open(context.Background(), empty)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	made := filepath.Join(dir, "made.db")
	if _, err := Copy(context.Background(), empty, made); err == nil || !strings.Contains(err.Error(), "holds nothing") {
		t.Errorf("a copy of an empty store: %v", err)
	}
	if _, err := os.Stat(made); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file a failed copy made is still there: %v", err)
	}
}

// Copy goes from bbolt to PostgreSQL (and ANALYZEs it there) and back, byte for byte.
func TestCopyThroughPostgres(t *testing.T) {
	url := kvtest.URL(t)
	dir := t.TempDir()
	from := filepath.Join(dir, "from.db")
	fill(t, from)
	wantSum, wantN := digest(t, from)
	c, err := Copy(context.Background(), from, url, WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if c.Digest != wantSum || strings.Contains(c.To, "password") {
		t.Fatalf("Copy to PostgreSQL = %+v; want sha256 %s", c, wantSum)
	}
	back := filepath.Join(dir, "back.db")
	if c, err = Copy(context.Background(), url, back); err != nil || c.Digest != wantSum || c.Counts != wantN {
		t.Fatalf("Copy back = %+v, %v; want sha256 %s, %+v", c, err, wantSum, wantN)
	}
	if _, err := Copy(context.Background(), from, url); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("a copy into a database that is not empty: %v", err)
	}
}

// A bbolt file that isn't there is refused by OpenExisting, and neither it nor its
// folders are made; data shaped like a URL with one slash is refused by Check.
func TestOpenExistingMakesNothing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "x.db")
	var me *MissingError
	if db, err := OpenExisting(context.Background(), missing); !errors.As(err, &me) || me.Path != missing {
		if db != nil {
			db.Close()
		}
		t.Fatalf("OpenExisting(%s) = %v", missing, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("made %v", ents)
	}
	t.Chdir(dir)
	for _, data := range []string{"postgres:/bad", "postgresql:/x", "file:/tmp/x.db"} {
		var nd *NotDataError
		if err := Check(data); !errors.As(err, &nd) || !strings.Contains(err.Error(), "Nothing was created") {
			t.Errorf("Check(%q) = %v", data, err)
		}
	}
	for _, data := range []string{`C:/data/c.db`, `C:\data\c.db`, "my:file.db"} {
		if err := Check(data); err != nil {
			t.Errorf("Check(%q) = %v; a path", data, err)
		}
	}
	db, err := Open(context.Background(), filepath.Join(dir, "made.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := OpenExisting(context.Background(), filepath.Join(dir, "made.db")); err != nil {
		t.Errorf("an existing file: %v", err)
	} else {
		db.Close()
	}
}
