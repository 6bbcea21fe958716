package pg_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/jackc/pgx/v5"
)

// What the change feed costs the database in a read and in a commit doesn't grow with the
// rows its pruning left dead. Every commit deletes the feed's oldest row; until a vacuum
// those rows stay in the table and in its index, at its low end (up to a thousand in a
// store, where autovacuum comes after 1,000 dead rows; here, with autovacuum off, about 900).
// Before: each read's feed query was planned anew for its count, past the end of the
// table's statistics, and the planner looked up the index's lowest key through every dead
// entry (3 index scans of kv_changes a read, and the rows visited), and each commit looked
// for the oldest rows to prune from the low end through them all. Now a read scans the
// index once and a commit's pruning starts at the feed's length.
//
//	COMPASS_TEST_POSTGRES=postgres://… go test -run FeedCost -v ./kv/pg
func TestFeedCostFlat(t *testing.T) {
	url := kvtest.URL(t)
	const length = pg.DefaultFeedLength // long enough that its index is scanned, not its table
	w := open(t, url)
	exec(t, url, "ALTER TABLE kv_changes SET (autovacuum_enabled = false)")
	// A store's history, which no call here reads: what makes a plan that guesses many keys
	// to look up costly, and the planner plan the feed's query anew for each count instead.
	exec(t, url, `INSERT INTO kv_entries (bucket, key, value) SELECT -1, int8send(i), convert_to(repeat(md5(i::text), 6), 'UTF8') FROM generate_series(1, 50000) AS i`)
	exec(t, url, "ANALYZE kv_entries")
	for i := range length {
		put(t, w, fmt.Sprintf("k%d", i%50), strconv.Itoa(i))
	}
	// A transaction that began before the pruning and is still open (a long report, a
	// dump, another schema's work in the same database, replicas' transactions under load)
	// keeps the rows pruned after it visible to it: their index entries can't be marked
	// dead by the scans that pass them, and each scan visits their rows.
	ctx := context.Background()
	old, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close(ctx)
	if _, err := old.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT n FROM kv_counter"); err != nil {
		t.Fatal(err)
	}
	for i := range 800 {
		put(t, w, fmt.Sprintf("k%d", i%50), strconv.Itoa(i))
	}
	exec(t, url, "ANALYZE kv_changes") // as autovacuum does: the statistics the reads' counts then go past
	for i := range 100 {
		put(t, w, fmt.Sprintf("k%d", i%50), strconv.Itoa(i))
	}
	dead := feedCost(t, url).dead
	if dead < 700 {
		t.Fatalf("the feed has %d dead rows after %d commits that keep %d (want the pruned ones, about 900)", dead, length+900, length)
	}

	const views, commits = 300, 100
	reads := measureFeed(t, url, func(db *pg.DB) {
		viewRead(t, db, "k1") // its cache gets a count; the Views after it are answered from it
		for range views {
			viewRead(t, db, "k1")
		}
	})
	writes := measureFeed(t, url, func(db *pg.DB) {
		for i := range commits {
			put(t, db, "k1", strconv.Itoa(i))
		}
	})
	if reads.scans == 0 || writes.blocks == 0 {
		t.Fatalf("the statistics show no work of the measured replicas (%+v, %+v): they did not reach them", reads, writes)
	}
	perView := float64(reads.scans) / views
	viewBlocks := float64(reads.blocks) / views
	commitBlocks := float64(writes.blocks) / commits
	t.Logf("with %d dead rows in the feed: a View %.2f index scans of kv_changes, %.1f buffers; a commit %.1f buffers of kv_changes", dead, perView, viewBlocks, commitBlocks)
	if perView > 1.1 || viewBlocks > 3 {
		t.Errorf("a View scanned kv_changes' index %.2f times and read %.1f of its buffers: want 1 scan and at most 3 buffers, whatever its dead rows", perView, viewBlocks)
	}
	if commitBlocks > 42 {
		t.Errorf("a commit read %.1f buffers of kv_changes: want at most 42, whatever its dead rows (%d)", commitBlocks, dead)
	}
}

// feedStats is what PostgreSQL's statistics say of kv_changes so far.
type feedStats struct {
	scans, blocks, dead int64
}

func feedCost(t *testing.T, url string) feedStats {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var s feedStats
	err = conn.QueryRow(ctx, `SELECT coalesce(u.idx_scan, 0), coalesce(heap_blks_hit + heap_blks_read + idx_blks_hit + idx_blks_read, 0), u.n_dead_tup
		FROM pg_stat_user_tables u JOIN pg_statio_user_tables USING (relid) WHERE relid = 'kv_changes'::regclass`).Scan(&s.scans, &s.blocks, &s.dead)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// measureFeed runs fn on a replica of its own and returns what fn cost kv_changes: a
// backend's statistics reach the statistics system at most once a second, or when it
// ends, so the replica's connections are made to report them (FlushStats) before they are
// read.
func measureFeed(t *testing.T, url string, fn func(db *pg.DB)) feedStats {
	t.Helper()
	ctx := context.Background()
	before := feedCost(t, url)
	db, err := pg.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fn(db)
	if err := db.FlushStats(ctx); err != nil {
		t.Fatal(err)
	}
	after := feedCost(t, url)
	return feedStats{scans: after.scans - before.scans, blocks: after.blocks - before.blocks}
}
