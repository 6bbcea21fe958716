package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

var (
	copyHelp = subcommand{name: "copy", args: "--from A --to B",
		does: "everything in A (a bbolt file or postgres:// URL) into B, empty, all or nothing, then checked byte for byte", more: copyUsage}
	backupHelp = subcommand{name: "backup", args: "FILE",
		does: "a consistent copy of the bbolt data file (--data) into FILE, servers running or not", more: "FILE is never half-written: the copy goes to FILE.partial, then is renamed. For a PostgreSQL database: copy --from URL --to FILE, or pg_dump."}
)

const copyUsage = `Copies everything the data A holds (documents and every version, conversations and their
messages, people, members, tokens, sign-ins, the search index) into B, byte for byte, then
reads both and checks they hold the same bytes. A and B are each a bbolt file's path or a
PostgreSQL database's postgres:// URL, so it moves a server from bbolt to PostgreSQL, back,
or between two databases.

It is all or nothing: A is read in one snapshot and B written in one transaction, so a copy
that fails leaves B as empty as it was, and is simply run again. B must be empty (a new
file, or a database or schema compass-mcp has not used); A may be in use by running servers
(on a bbolt file they wait while the copy reads it). On PostgreSQL the planner's statistics
are updated after the copy (ANALYZE).`

// copyCmd copies one store into another, empty one, and checks the copy.
func copyCmd(args []string, stdout io.Writer) error {
	fs := newFlags(copyHelp, os.Stderr)
	from := fs.String("from", "", "the data to copy: a bbolt file's path or a postgres:// URL")
	to := fs.String("to", "", "where to copy it: a new bbolt file's path, or an empty PostgreSQL database's (or schema's) postgres:// URL")
	timeout := fs.Duration("timeout", time.Hour, "on PostgreSQL, how long the copy's transactions may take (a server's are 30 s)")
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
		return usageError{fmt.Sprintf("--from and --to are the same data (%s): copy into another file or database", pg.Redact(*from))}
	}
	if !pg.IsURL(*from) {
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
	made := !pg.IsURL(*to) && errors.Is(statErr, os.ErrNotExist)
	dst, err := openStore(*to, pg.WithTimeout(*timeout))
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	n, digest, err := kv.CopyChecked(src, dst)
	if err == nil && n.Buckets == 0 {
		err = fmt.Errorf("%s holds nothing: there is nothing to copy (is --from right?)", src.Path())
	}
	var differs *kv.DiffersError
	if err != nil && !errors.As(err, &differs) {
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
	if differs != nil {
		return fmt.Errorf("%s, copied from %s: %w", dst.Path(), src.Path(), err)
	}
	if p, ok := dst.(*pg.DB); ok {
		if err := p.Analyze(); err != nil {
			return fmt.Errorf("the copy is done and checked, but updating %s's statistics (ANALYZE) failed: %w", dst.Path(), err)
		}
	}
	fmt.Fprintf(stdout, "Copied %d buckets, %d keys, %d bytes from %s to %s; checked: both hold the same bytes (sha256 %s).\n",
		n.Buckets, n.Keys, n.Bytes, src.Path(), dst.Path(), digest)
	return nil
}

// sameStore reports whether a and b name the same data: the same file (whatever the path
// to it), or the same database and schema on the same host and port.
func sameStore(a, b string) bool {
	if pg.IsURL(a) || pg.IsURL(b) {
		return pg.IsURL(a) && pg.IsURL(b) && pg.SameDatabase(a, b)
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// backup writes a consistent copy of the data file to path while servers may be using it.
func backup(args []string, stdout io.Writer) error {
	var c config
	fs := flags(backupHelp, &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"backup takes FILE: where to write the copy"}
	}
	if pg.IsURL(c.data) {
		return usageError{"backup copies a bbolt file; for a PostgreSQL database use `compass-mcp copy --from " + pg.Redact(c.data) + " --to FILE` (a bbolt copy) or pg_dump"}
	}
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	size, err := db.(*bolt.File).Backup(pos[0]) // not a URL (above): a bbolt file
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Backed up %s to %s (%d bytes).\n", c.data, pos[0], size)
	return nil
}
