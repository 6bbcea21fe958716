package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

const copyUsage = `Usage: compass-mcp copy --from A --to B

Copies everything the data A holds (documents and every version, conversations and their
messages, people, members, tokens, sign-ins, the search index) into B, byte for byte, then
reads both and checks they hold the same bytes. A and B are each a bbolt file's path or a
PostgreSQL database's postgres:// URL, so it moves a server from bbolt to PostgreSQL, back,
or between two databases.

It is all or nothing: A is read in one snapshot and B written in one transaction, so a copy
that fails leaves B as empty as it was, and is simply run again. B must be empty (a new
file, or a database or schema compass-mcp has not used); A may be in use by running servers
(on a bbolt file they wait while the copy reads it). On PostgreSQL the planner's statistics
are updated after the copy (ANALYZE).

Flags:
`

// copyCmd copies one store into another, empty one, and checks the copy.
func copyCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	from := fs.String("from", "", "the data to copy: a bbolt file's path or a postgres:// URL")
	to := fs.String("to", "", "where to copy it: a new bbolt file's path, or an empty PostgreSQL database's (or schema's) postgres:// URL")
	timeout := fs.Duration("timeout", time.Hour, "on PostgreSQL, how long the copy's transactions may take (a server's are 30 s)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), copyUsage)
		fs.PrintDefaults()
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageError{fmt.Sprintf("copy takes no arguments but --from and --to, got %q", pos)}
	case *from == "" || *to == "":
		return usageError{"copy needs --from A and --to B (each a bbolt file's path or a postgres:// URL)"}
	case sameStore(*from, *to):
		return usageError{fmt.Sprintf("--from and --to are the same data (%s): copy into another file or database", redact(*from))}
	}
	if !isPostgres(*from) {
		if _, err := os.Stat(*from); err != nil {
			return fmt.Errorf("--from: %w", err)
		}
	}
	src, err := openStore(*from, pg.WithTimeout(*timeout))
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	defer src.Close()
	_, statErr := os.Stat(*to)
	made := !isPostgres(*to) && errors.Is(statErr, os.ErrNotExist)
	dst, err := openStore(*to, pg.WithTimeout(*timeout))
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	var (
		n       kv.Counts
		srcHash string
	)
	// The source's digest is taken in the copy's own snapshot, so that servers writing to
	// it meanwhile don't make a good copy look wrong.
	err = src.View(func(tx kv.Tx) error {
		snap := snapshot{tx}
		var err error
		if n, err = kv.Copy(snap, dst); err != nil {
			return err
		}
		srcHash, _, err = kv.Digest(snap)
		return err
	})
	if err == nil && n.Buckets == 0 {
		err = fmt.Errorf("%s holds nothing: there is nothing to copy (is --from right?)", src.Path())
	}
	if err != nil {
		dst.Close()
		if made {
			os.Remove(*to) // the file this copy made, left empty
		}
		if errors.Is(err, kv.ErrNotEmpty) {
			return fmt.Errorf("%s is not empty, and a copy never mixes two stores: copy into a new file, or an empty database or schema (CREATE SCHEMA name, then ?search_path=name in the URL); nothing was copied", dst.Path())
		}
		return fmt.Errorf("copying %s to %s (nothing was copied): %w", src.Path(), dst.Path(), err)
	}
	defer dst.Close()
	dstHash, dn, err := kv.Digest(dst)
	if err != nil {
		return fmt.Errorf("checking the copy in %s: %w", dst.Path(), err)
	}
	if dstHash != srcHash || dn != n {
		return fmt.Errorf("the copy in %s differs from %s (sha256 %s, %d buckets, %d keys, %d bytes, against sha256 %s, %d buckets, %d keys, %d bytes): don't use it",
			dst.Path(), src.Path(), dstHash, dn.Buckets, dn.Keys, dn.Bytes, srcHash, n.Buckets, n.Keys, n.Bytes)
	}
	if p, ok := dst.(pgStore); ok {
		if err := p.Analyze(); err != nil {
			return fmt.Errorf("the copy is done and checked, but updating %s's statistics (ANALYZE) failed: %w", dst.Path(), err)
		}
	}
	fmt.Fprintf(stdout, "Copied %d buckets, %d keys, %d bytes from %s to %s; checked: both hold the same bytes (sha256 %s).\n",
		n.Buckets, n.Keys, n.Bytes, src.Path(), dst.Path(), dstHash)
	return nil
}

// snapshot is one read transaction seen as a read-only kv.DB.
type snapshot struct{ tx kv.Tx }

func (s snapshot) View(fn func(kv.Tx) error) error { return fn(s.tx) }
func (s snapshot) Update(func(kv.Tx) error) error  { return kv.ErrTxNotWritable }
func (s snapshot) Batch(func(kv.Tx) error) error   { return kv.ErrTxNotWritable }

// sameStore reports whether a and b name the same data: the same file (symbolic links
// followed), or the same database and schema on the same host and port.
func sameStore(a, b string) bool {
	if isPostgres(a) != isPostgres(b) {
		return false
	}
	if isPostgres(a) {
		return dbIdentity(a) == dbIdentity(b)
	}
	return filepath.Clean(realPath(a)) == filepath.Clean(realPath(b))
}

func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return p
}

// dbIdentity is a database URL's host, port, database and search_path.
func dbIdentity(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port) + u.Path + "?" + u.Query().Get("search_path")
}

// backup writes a consistent copy of the data file to path while servers may be using it.
func backup(args []string, stdout io.Writer) error {
	var c config
	fs := flags("backup", &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"backup takes FILE: where to write the copy"}
	}
	if isPostgres(c.data) {
		return usageError{"backup copies a bbolt file; for a PostgreSQL database use `compass-mcp copy --from " + redact(c.data) + " --to FILE` (a bbolt copy) or pg_dump"}
	}
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	file, ok := db.(*bolt.File)
	if !ok {
		return errors.New("backup copies a bbolt file; for PostgreSQL use `compass-mcp copy --from URL --to FILE` or pg_dump")
	}
	size, err := file.Backup(pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Backed up %s to %s (%d bytes).\n", c.data, pos[0], size)
	return nil
}
