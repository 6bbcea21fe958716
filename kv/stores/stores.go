// Package stores opens the store a --data names, whichever backend it is (a bbolt file,
// kv/bolt, or a PostgreSQL database, kv/pg), copies one store into another, and answers
// what the command asks of a --data without opening it (IsURL, Redact, DefaultPath). It is
// the one package that chooses a backend: the command imports it, and neither backend
// (internal/style's layer test checks).
package stores

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// Store is the data a command works on, whichever backend --data chose: a bbolt file
// (*bolt.File) or a PostgreSQL database (*pg.DB).
type Store interface {
	kv.DB
	Close() error
	// Path names the data for people and for the page's identity: the bbolt file's path,
	// or the database's URL without its password.
	Path() string
}

var (
	_ Store = (*bolt.File)(nil)
	_ Store = (*pg.DB)(nil)
)

// Option sets how a PostgreSQL database is opened; a bbolt file takes none.
type Option struct{ pg pg.Option }

// WithTimeout bounds each of a database's transactions (pg.WithTimeout): a copy's may need
// longer than a server's 30 s.
func WithTimeout(d time.Duration) Option { return Option{pg.WithTimeout(d)} }

func pgOptions(opts []Option) []pg.Option {
	out := make([]pg.Option, len(opts))
	for i, o := range opts {
		out[i] = o.pg
	}
	return out
}

// IsURL reports whether data names a PostgreSQL database (postgres:// or postgresql://)
// rather than a bbolt file.
func IsURL(data string) bool { return pg.IsURL(data) }

// Redact is data as logs and messages may show it: a database URL without its passwords, a
// file's path as it is.
func Redact(data string) string { return pg.Redact(data) }

// DefaultPath is the bbolt file a command opens when neither --data nor COMPASS_DATA says:
// $XDG_DATA_HOME/compass/compass.db, else ~/.local/share/compass/compass.db.
func DefaultPath() (string, error) { return bolt.DefaultPath() }

// ErrNotAFile is returned by Backup for a store that is not a bbolt file.
var ErrNotAFile = errors.New("backup copies a bbolt file")

// Backup copies s, a bbolt file, to path, consistently while others use it (bolt.File's
// Backup), and returns the copy's size; a database is ErrNotAFile.
func Backup(ctx context.Context, s Store, path string) (int64, error) {
	f, ok := s.(*bolt.File)
	if !ok {
		return 0, ErrNotAFile
	}
	return f.Backup(ctx, path)
}

// urlLike is a --data that starts as a URL does (scheme://), which no file path here does.
var urlLike = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

// schemeLike is data shaped like a URL with one slash (postgres:/db): no path a person
// means (a Windows drive, C:/data, has one letter before its colon).
var schemeLike = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]+):/`)

// NotDataError is returned by Check (so by Open and Copy) for a data that looks like a URL
// but is not a PostgreSQL one (a typo, postgress://, would otherwise make folders of the
// URL and a data file in them, its password in their names). It names the two forms data
// takes, without the password.
type NotDataError struct {
	Data     string // as given
	Scheme   string // what it has instead of postgres: "postgress", "file", ...
	OneSlash bool   // SCHEME:/..., a URL missing a slash
}

func (e *NotDataError) Error() string {
	if e.OneSlash {
		return fmt.Sprintf("--data %s is neither of the two forms it takes: a bbolt file's path (like ~/.local/share/compass/compass.db), or a PostgreSQL database's URL, postgres://USER:PASSWORD@HOST:PORT/DB (two slashes after the colon); %s:/ is not one. Nothing was created.", pg.Redact(e.Data), e.Scheme)
	}
	return fmt.Sprintf("--data %s is neither of the two forms it takes: a bbolt file's path (like ~/.local/share/compass/compass.db), or a PostgreSQL database's URL, postgres://USER:PASSWORD@HOST:PORT/DB (or postgresql://...); %s:// is not one. Nothing was created.", pg.Redact(e.Data), e.Scheme)
}

// Check refuses a data that looks like a URL but is not a PostgreSQL one, with a
// *NotDataError.
func Check(data string) error {
	if m := urlLike.FindStringSubmatch(data); m != nil && !pg.IsURL(data) {
		return &NotDataError{Data: data, Scheme: m[1]}
	}
	if m := schemeLike.FindStringSubmatch(data); m != nil && !pg.IsURL(data) {
		return &NotDataError{Data: data, Scheme: m[1], OneSlash: true}
	}
	return nil
}

// A MissingError is returned by OpenExisting for a bbolt file that isn't there: nothing
// was created.
type MissingError struct {
	Path string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("there is no data file at %s, and this command doesn't make one (nothing was created): check --data (or COMPASS_DATA) for a typo. "+
		"To start a new store there, run compass-mcp serve --data %s, or a command that writes, such as compass-mcp docs save", e.Path, e.Path)
}

// OpenExisting is Open for a command that only reads, or that makes no sense on a new
// store: a bbolt file that doesn't exist is a *MissingError, and neither it nor its
// folders are made, since a mistyped path would otherwise answer as an empty store. On
// PostgreSQL, nothing changes: Open never creates a database or a schema (a URL naming
// one that isn't there is refused either way), and the tables in a schema the person
// made are made by whichever command opens it first.
func OpenExisting(ctx context.Context, data string, opts ...Option) (Store, error) {
	if err := Check(data); err != nil {
		return nil, err
	}
	if !pg.IsURL(data) {
		if _, err := os.Stat(data); errors.Is(err, fs.ErrNotExist) {
			return nil, &MissingError{Path: data}
		}
	}
	return Open(ctx, data, opts...)
}

// Open opens data: a postgres:// or postgresql:// URL, else a bbolt file's path (made, with
// its folders, if it is not there). opts apply to a database only. A data Check refuses is
// refused with Check's error, and nothing is created.
func Open(ctx context.Context, data string, opts ...Option) (Store, error) {
	if err := Check(data); err != nil {
		return nil, err
	}
	if !pg.IsURL(data) {
		return bolt.OpenFile(data, bolt.DefaultTimeout, bolt.DefaultIdle)
	}
	db, err := pg.Open(ctx, data, pgOptions(opts)...)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", pg.Redact(data), err)
	}
	return db, nil
}

// Same reports whether a and b name the same data: the same file (whatever the path to it),
// or the same database and schema on the same host and port.
func Same(a, b string) bool {
	if pg.IsURL(a) || pg.IsURL(b) {
		return pg.IsURL(a) && pg.IsURL(b) && pg.SameDatabase(a, b)
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// Copied is what a Copy copied, and where from and to (each store's Path).
type Copied struct {
	kv.Counts
	Digest   string // the sha256 both stores' bytes have (kv.Digest)
	From, To string
}

// Copy copies everything the data from holds into to, which must be empty, byte for byte,
// then reads both and checks they hold the same bytes (kv.CopyChecked); on PostgreSQL it
// then updates the planner's statistics (ANALYZE). opts apply to a database only (a copy's
// transactions may need longer than a server's).
//
// It is all or nothing: a copy that fails leaves to as empty as it was (a bbolt file it
// made is removed again). A store that can't be opened is named as compass-mcp copy's
// flags name them ("--from: ...", "--to: ..."). It returns a *kv.DiffersError when the
// copy, read back, differs; an error saying so when from holds nothing or to is not empty.
func Copy(ctx context.Context, from, to string, opts ...Option) (Copied, error) {
	if !pg.IsURL(from) {
		if _, err := os.Stat(from); err != nil {
			return Copied{}, fmt.Errorf("--from: %w", err)
		}
	}
	src, err := Open(ctx, from, opts...)
	if err != nil {
		return Copied{}, fmt.Errorf("--from: %w", err)
	}
	defer src.Close()
	_, statErr := os.Stat(to)
	made := !pg.IsURL(to) && errors.Is(statErr, os.ErrNotExist)
	dst, err := Open(ctx, to, opts...)
	if err != nil {
		return Copied{}, fmt.Errorf("--to: %w", err)
	}
	c := Copied{From: src.Path(), To: dst.Path()}
	c.Counts, c.Digest, err = kv.CopyChecked(ctx, src, dst)
	if err == nil && c.Buckets == 0 {
		err = fmt.Errorf("%s holds nothing: there is nothing to copy (is --from right?)", src.Path())
	}
	var differs *kv.DiffersError
	if err != nil && !errors.As(err, &differs) {
		dst.Close()
		if made {
			os.Remove(to) // the file this copy made, left empty
		}
		if errors.Is(err, kv.ErrNotEmpty) {
			return c, fmt.Errorf("%s is not empty, and a copy never mixes two stores: copy into a new file, or an empty database or schema (CREATE SCHEMA name, then ?search_path=name in the URL); nothing was copied", dst.Path())
		}
		return c, fmt.Errorf("copying %s to %s (nothing was copied): %w", src.Path(), dst.Path(), err)
	}
	defer dst.Close()
	if differs != nil {
		return c, fmt.Errorf("%s, copied from %s: %w", dst.Path(), src.Path(), err)
	}
	if p, ok := dst.(*pg.DB); ok {
		if err := p.Analyze(ctx); err != nil {
			return c, fmt.Errorf("the copy is done and checked, but updating %s's statistics (ANALYZE) failed: %w", dst.Path(), err)
		}
	}
	return c, nil
}
