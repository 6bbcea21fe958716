package pg

import (
	"context"
	"io/fs"
	"time"

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

// Gaps is how many gaps db's cache holds (gaps.go), in all buckets.
func (db *DB) Gaps() int {
	c := db.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, gs := range c.gaps {
		n += len(gs)
	}
	return n
}

// WithWriteBuffer sets how many bytes of its writes a write transaction keeps in memory
// (DefaultWriteBuffer): the tests make it small, to send writes ahead of their commit
// with small data.
func WithWriteBuffer(n int) Option { return func(db *DB) { db.writeBuffer = max(n, 1) } }

// WithFeedFault makes db cut its connection after the first row of a catch-up whenever
// fault says so (writable: the transaction's), as a connection reset mid catch-up would.
func WithFeedFault(fault func(writable bool) bool) Option {
	return func(db *DB) { db.feedFault = fault }
}

// FeedRows is how many rows the change feed holds.
func (db *DB) FeedRows(ctx context.Context) (n int, err error) {
	err = db.pool.QueryRow(ctx, "SELECT count(*) FROM kv_changes").Scan(&n)
	return n, err
}

// AgeFeed makes the change feed's rows older by d, as d passing would (the feed's age is
// the database's now() against each row's at).
func (db *DB) AgeFeed(ctx context.Context, d time.Duration) error {
	_, err := db.pool.Exec(ctx, "UPDATE kv_changes SET at = at - make_interval(secs => $1)", d.Seconds())
	return err
}

// Feed is the store's count of commits, the counts the change feed holds rows of, in order,
// and every key its rows name, with whether any row is whole.
func (db *DB) Feed(ctx context.Context) (count int64, ns []int64, keys map[string]bool, whole bool, err error) {
	if err = db.pool.QueryRow(ctx, "SELECT n FROM kv_counter").Scan(&count); err != nil {
		return
	}
	rows, err := db.pool.Query(ctx, "SELECT n, whole, keys FROM kv_changes ORDER BY n")
	if err != nil {
		return
	}
	defer rows.Close()
	keys = map[string]bool{}
	for rows.Next() {
		var n int64
		var w bool
		var ks [][]byte
		if err = rows.Scan(&n, &w, &ks); err != nil {
			return
		}
		ns, whole = append(ns, n), whole || w
		for _, k := range ks {
			keys[string(k)] = true
		}
	}
	err = rows.Err()
	return
}

// FlushStats has each of db's idle connections report its activity to PostgreSQL's
// statistics now: pg_stat_force_next_flush (PostgreSQL 15) makes a backend report before it
// answers, where it would otherwise report at most once a second, or as it exits, after
// it has left pg_stat_activity. Every connection is idle once db's calls have returned.
func (db *DB) FlushStats(ctx context.Context) error {
	for _, c := range db.pool.AcquireAllIdle(ctx) {
		_, err := c.Exec(ctx, "SELECT pg_stat_force_next_flush()")
		c.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// Backends is how many connections to the database have application_name name.
func (db *DB) Backends(ctx context.Context, name string) (n int, err error) {
	err = db.pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", name).Scan(&n)
	return n, err
}
