package pg

import "github.com/compass-mcp/compass-mcp/kv"

// Known tells whether b's transaction knows key k without asking the database.
func Known(b kv.Bucket, k []byte) bool {
	_, ok := b.(*bucket).known(k)
	return ok
}
