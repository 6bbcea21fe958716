package command

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/compass-mcp/compass-mcp/kv/stores"
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
func copyCmd(ctx context.Context, args []string, stdout io.Writer) error {
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
	case stores.Same(*from, *to):
		return usageError{fmt.Sprintf("--from and --to are the same data (%s): copy into another file or database", stores.Redact(*from))}
	}
	n, err := stores.Copy(ctx, *from, *to, stores.WithTimeout(*timeout))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Copied %d buckets, %d keys, %d bytes from %s to %s; checked: both hold the same bytes (sha256 %s).\n",
		n.Buckets, n.Keys, n.Bytes, n.From, n.To, n.Digest)
	return nil
}

// backup writes a consistent copy of the data file to path while servers may be using it.
func backup(ctx context.Context, args []string, stdout io.Writer) error {
	var c config
	fs := flags(backupHelp, &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"backup takes FILE: where to write the copy"}
	}
	if stores.IsURL(c.data) {
		return usageError{"backup copies a bbolt file; for a PostgreSQL database use `compass-mcp copy --from " + stores.Redact(c.data) + " --to FILE` (a bbolt copy) or pg_dump"}
	}
	db, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	size, err := stores.Backup(ctx, db, pos[0]) // not a URL (above): a bbolt file
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Backed up %s to %s (%d bytes).\n", c.data, pos[0], size)
	return nil
}
