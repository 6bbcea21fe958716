package pg

import (
	"io/fs"

	"github.com/compass-mcp/compass-mcp/kv"
)

// Known tells whether b's transaction knows key k without asking the database.
func Known(b kv.Bucket, k []byte) bool {
	_, ok := b.(*bucket).known(k)
	return ok
}

// Migrations is how many migrations the binary knows.
func Migrations() int {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	return len(names)
}
