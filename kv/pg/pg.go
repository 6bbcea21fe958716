// Package pg is the PostgreSQL backend of kv: the same ordered, nested buckets, kept in one
// table of one schema of a database that several compass-mcp servers share.
//
// # Tables
//
// kv_entries(bucket, key, value, child) holds every entry of every bucket; a nested bucket
// is an entry whose child is the number of its own bucket (the root is 0). Keys are bytea,
// which PostgreSQL orders bytewise (memcmp, then length), as bbolt does. The schema is made
// by numbered SQL files embedded in the binary (migrations/), applied by Open in one
// transaction under an advisory lock, so that replicas starting together don't race; a
// schema newer than the binary knows is refused. compass_schema records the versions.
// Everything lives in the first schema of the connection's search_path (a URL may set it:
// postgres://…/db?search_path=team); Open refuses a search_path whose first schema is
// missing (but for the default's "$user"), which PostgreSQL would skip. Every commit
// rewrites a few entries every other commit rewrites too (a document's record, the search
// index's counts): migration 003 keeps their dead versions few as the history grows (an
// update that changes nothing writes no row; autovacuum at 1,000 dead rows, not at a share
// of the table); docs/POSTGRES.md says what was measured.
//
// # Transactions
//
// A View whose first read the cache may answer reads the counter alone (one round trip,
// no transaction), is served by the cache while it holds that count, and sends each miss as
// a REPEATABLE READ READ ONLY transaction of its own, with the counter, in one round trip;
// a miss that finds the counter moved (another commit since the View's first read) makes
// View run fn again, in one transaction (Restarts counts them): fn must set its results
// afresh on every run (kv.DB.View). A View whose first read misses is one REPEATABLE READ
// READ ONLY transaction from there (BEGIN goes with that read), rolled back at the end: one
// snapshot, fn run once. A warm View so costs one round trip. An Update first takes a
// transaction-scoped advisory lock (one per schema), so that no two write transactions run
// at once on any replica, then runs READ COMMITTED: with every writer queued on the lock,
// each one sees everything committed before it and nothing comes between its reads and its
// writes (why not SERIALIZABLE with fn run again on a serialization failure: below).
//
// A Batch, whose fn may run more than once (kv.DB.Batch), first runs optimistically: what
// the cache answers is read at the cache's count with no round trip, and the first round
// trip, a miss or the commit itself, sends BEGIN, the lock, the counter and the change feed
// before the rest, its writes and the counter's move each guarded by that count (a WHERE
// on kv_counter): if another commit came since, nothing is written, the cache catches up on
// the feed, and fn runs again (Restarts counts it) at the store's count: optimistically when
// that round trip was the commit (its COMMIT committed nothing), else in the transaction it
// left open, under the lock, as an Update's fn runs. A run that ends without reaching the
// database (it wrote nothing, or fn failed) reads the counter to check the same. So a warm
// Batch that reads only what the cache holds is one round trip, its commit, and holds the
// lock for no round trip at all; right after another replica's commit it is two (three when
// its first round trip was a miss).
//
// No statement fails when the count moved (migration 004's kv_expect, which raised an error,
// is no longer sent): pgx forgets, on the connection, every prepared statement of a batch
// that failed, and prepares them again, after a round trip to deallocate them, the next time:
// two round trips more for every such write.
//
// Why the lock rather than SERIALIZABLE with fn run again on a serialization failure: with
// the lock an Update's fn runs exactly once, as on bbolt, whereas a retried fn must be
// idempotent (Update's callers are not required to be); serial writers make the
// transaction's read cache and the deferred bucket checks exact; and the lock's cost stays
// flat as writers are added, where SERIALIZABLE's grows with its retries, even on distinct
// keys (its predicate locks cover index pages, not keys): docs/POSTGRES.md has the figures.
// Reads never wait for it. BenchmarkWriters measures the lock.
//
// An Update's Puts and Deletes are kept in memory (its own reads see them) and written at
// commit in a few bulk statements sent in one round trip with the COMMIT; reads are cached
// for the transaction's life (nothing else writes meanwhile), and cursors fetch rows in
// pages (16 rows, doubling to 1,024; a value over 64 KiB is read when the cursor lands on
// it). Bucket numbers are cached for the whole store (compass-mcp deletes a bucket only
// under a name never used again: see bucket.DeleteBucket): opening a bucket costs no round
// trip once it has been seen. A transaction reaches the database at
// its first read (BEGIN goes in the same round trip), and a write transaction that only
// writes sends BEGIN, the lock, its writes, the NOTIFY and the COMMIT in one round trip.
//
// A value written over a bucket, or a bucket deleted as a value, is refused at commit
// (ErrIncompatibleValue from Update) when the transaction had not read that key before:
// checking at the Put would cost a round trip per new key. In a Batch, such a commit fails
// every call of the group, not only the one that wrote it (bbolt refuses it in the Put).
//
// # Cache
//
// Each DB (each replica) keeps a cache of what its transactions read: entries by bucket and
// key (a value, a bucket's number, or no such key) and the pages cursors fetched, at most
// WithCache bytes (DefaultCache, 64 MiB), the least recently used dropped first, and what
// no transaction read for two minutes dropped too (entryCache: so that a replica's heap
// stays the size of what its calls use, not of its budget). It is valid
// for one count of kv_counter, to which every write transaction adds one in its commit's
// round trip; every transaction reads the counter in its first round trip (with BEGIN, and
// the read that needed it when the cache can't answer that; a View the cache may answer
// reads it alone, and with each miss after: see Transactions), inside its snapshot, and uses
// the cache only when the cache is at that very count: what it reads from the cache is then
// what its snapshot holds. A transaction that finds the counter ahead (another replica
// committed) reads, in that same first round trip, the change feed from the cache's count
// (below), and moves the cache on key by key; only what the feed can't tell empties it. A
// commit of this replica moves its cache on with what it wrote, so the replica that writes
// stays warm (an entry it didn't hold waits on probation, in a sixteenth of the budget,
// until transactions read it twice: most writes are never read again); a cursor's pages of a bucket written are patched in place, not dropped, so that
// a listing after a new note reads none again. A transaction whose snapshot is older than
// the cache, or that sent its writes ahead of the commit, neither reads
// nor fills it. Values from the cache are shared by transactions: they must not be changed
// (kv's rule already).
//
// It also keeps gaps (gaps.go): ranges of a bucket that hold no key. A Get that misses asks,
// in the same query, for the keys just before and after its own, and a cursor's page forward
// from a key for the key just before it: what lies between is a gap, so that a later Get of
// a key in it finds none, and a Seek into it lands on the key after it, with no round trip.
// A new document's title, a word the search index hasn't had, the links waiting for a new
// title: each is such a key, asked for once per new document. A commit of this replica
// splits the gap each new key goes in; the gaps have a budget of an eighth of the cache's,
// and past it are all dropped.
//
// Change (kv.Change) reads as a Batch's first run does, from the cache at its count with no
// round trip, and checks that count only when no write follows: the write's Batch checks it
// under the lock, and the write checks what the read saw. A warm edit is so its commit alone.
//
// # Change feed
//
// kv_changes (migration 005) holds, for each commit, the keys it changed (bucket and key),
// written by the statement that moves the counter, so a row is there exactly when its commit
// is: a replica killed mid-commit leaves no half change. A transaction's first round trip
// reads, after the counter, the feed's rows after its cache's count joined with each key's
// entry in the transaction's snapshot (its value when under 256 KiB, and 2 MiB of values in
// all; a larger one is dropped from the cache, read when wanted), and the cache moves on to
// the snapshot's count with them: entries replaced, pages patched, gaps split or joined. It
// costs no round trip: the counter is read there anyway. What it can't follow empties the
// cache, as before the feed: a commit whose row is whole (more than 1,024 keys or 64 KiB of
// keys, a bucket deleted, writes sent ahead of the commit), rows pruned (a gap in the
// counts), or more than one catch-up reads (256 commits, 4,096 keys). Each commit prunes up to
// 8 of the oldest rows past the feed's length or age (WithFeed: 1,024 commits, an hour),
// looking for them from its length back, never through the rows pruned before (dead until a
// vacuum); the feed's query is planned once a connection, not for each count (feed.go says
// why: both had a read's and a commit's cost grow with the dead rows). Why a table and not a
// NOTIFY payload, and what it costs: feed.go and docs/POSTGRES.md.
//
// # Failures
//
// Every transaction has a deadline (WithTimeout, 30 s by default), the wait for a pooled
// connection included, and ends with its caller's context: when either is done, the
// statement under way is stopped on the server by a cancel request (and, should the server
// not answer it within CancelWait, the connection is closed), the transaction is rolled
// back, and the call returns kv.Canceled for the caller's context, kv.ErrUnavailable for the
// deadline. A statement that fails inside a transaction panics with kv.Fail, and
// View, Update and Batch return its error; an error reaching the database wraps
// kv.ErrUnavailable and names the database's host and port. The pool drops connections that
// died (a restart of the database), and a transaction's first statement tries another
// connection when its own is dead, so later transactions work again by themselves. A write
// transaction sets idle_in_transaction_session_timeout to its deadline, so that a writer
// gone silent with the lock (its replica frozen or cut off) is ended by the database then,
// not hours later by TCP, and the other replicas' writes go on. A commit
// whose answer was lost with the connection may or may not have been applied: its Update
// returns ErrUnavailable either way. Data the database reports corrupted (SQLSTATE XX001,
// XX002) is answered with an error wrapping kv.ErrDamaged.
//
// # Pool
//
// pgxpool, sized max(4, 2×GOMAXPROCS) connections unless the URL's pool_max_conns says: a
// transaction holds one connection for its life; readers run side by side; a process's
// writers queue in the process (one at a time takes a connection and waits on the
// database's lock), so writers never starve readers of connections and more connections
// than that only add idle backends to the database. Changes holds one more connection of
// its own while anybody listens.
//
// # Changes
//
// Every committed write transaction sends a NOTIFY on a channel of its schema, inside the
// transaction (so only on commit); Changes delivers it to listeners of this process,
// whichever replica committed.
package pg

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DefaultTimeout is how long a transaction may take, from waiting for a connection to its
// commit, unless WithTimeout says otherwise.
const DefaultTimeout = 30 * time.Second

// ErrSchemaTooNew is returned by Open when the database was migrated by a newer compass-mcp.
var ErrSchemaTooNew = errors.New("the database's schema is newer than this compass-mcp knows")

// Option changes how Open opens the database.
type Option func(*DB)

// WithTimeout sets every transaction's deadline.
func WithTimeout(d time.Duration) Option { return func(db *DB) { db.timeout = d } }

// CancelWait is how long a statement whose context ended may take to stop once the server
// was asked to cancel it, before its connection is closed instead.
const CancelWait = 2 * time.Second

// DefaultWriteBuffer is how many bytes of its writes a write transaction keeps in memory
// before sending them ahead of its commit (still inside the transaction), and forgetting
// them: a transaction as large as a whole store (compass-mcp copy) needs no more memory.
const DefaultWriteBuffer = 64 << 20

// DefaultCache is how many bytes of the store's entries each DB keeps in memory, unless
// WithCache says otherwise.
const DefaultCache = 64 << 20

// WithCache sets how many bytes of the store's entries the DB keeps in memory (see
// "Cache" in the package doc); 0: none, every read asks the database.
func WithCache(bytes int) Option { return func(db *DB) { db.cacheSize = bytes } }

// CacheStats tells how many bytes and items the cache of the store's entries holds now.
func (db *DB) CacheStats() (bytes, items int) { return db.cache.stats() }

// DB is a kv.DB on a PostgreSQL database.
type DB struct {
	pool           *pgxpool.Pool
	shown          string // the URL, password removed (Redact)
	addr           string // host:port, for error messages
	schema         string
	writeLock      int64 // advisory lock key of write transactions
	channel        string
	timeout        time.Duration
	connectTimeout time.Duration
	writeBuffer    int // bytes of a write transaction's writes kept in memory before they're sent
	cacheSize      int
	feedLength     int           // commits the change feed keeps (feed.go)
	feedAge        time.Duration // ...and for how long
	batcher        kv.Batcher
	writer         chan struct{} // held by this process's write transaction

	idMu           sync.Mutex
	nextID, lastID int64 // bucket numbers reserved from kv_bucket_ids, not yet used

	changes changes
	buckets bucketCache
	cache   *entryCache // nil: none (WithCache(0))

	restarts atomic.Int64 // Views and Batches whose optimistic run found the store changed

	// feedFault, set by tests only, is asked after each first row of a catch-up read whether
	// to cut the connection there (feed.go).
	feedFault func(writable bool) bool
}

// Restarts is how many Views and Batch transactions ran their function a second time, in a
// transaction, because the store changed after their first run had read from the cache.
func (db *DB) Restarts() int64 { return db.restarts.Load() }

var _ kv.DB = (*DB)(nil)

// Open connects to the database at url (postgres://user:pass@host:port/db?search_path=s),
// migrates its schema and returns it. It refuses a schema newer than it knows
// (ErrSchemaTooNew) and a search_path whose first schema does not exist.
func Open(ctx context.Context, url string, opts ...Option) (*DB, error) {
	if err := checkURL(url); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("reading the database URL: %w", err)
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["connect_timeout"]; !ok && !strings.Contains(url, "connect_timeout") {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	cfg.ConnConfig.DialFunc = sniffingDialer()
	// Each statement is planned once a connection, not once an execution: PostgreSQL's
	// default (auto) plans a prepared statement anew every time while the plans for the
	// values it was given look cheaper than the generic one, which for the commits' array
	// statements (unnest of the keys) is always, and planning them cost more than running
	// them. Every query here is an index lookup or a short range by (bucket, key), whose plan
	// no value changes. Measured on the soak of two replicas (docs/POSTGRES.md): the
	// database's CPU a call 1,512–2,041 µs → 1,016–1,078 µs, calls/s +40%. A URL that sets
	// plan_cache_mode keeps its own. It needs PostgreSQL 12 or later.
	if _, ok := cfg.ConnConfig.RuntimeParams["plan_cache_mode"]; !ok {
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	// A context that ends stops the statement on the server with a cancel request, and the
	// connection stays good for the pool; pgx's default closes it (sending the cancel as it
	// goes), so that the next transaction pays for a new connection. CancelWait bounds a
	// server that doesn't answer the cancel: the connection is closed then.
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: CancelWait}
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = int32(max(4, 2*runtime.GOMAXPROCS(0)))
	}
	db := &DB{shown: Redact(url), addr: net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))), timeout: DefaultTimeout, writeBuffer: DefaultWriteBuffer,
		writer: make(chan struct{}, 1), cacheSize: DefaultCache, feedLength: DefaultFeedLength, feedAge: DefaultFeedAge}
	for _, o := range opts {
		o(db)
	}
	if db.cacheSize > 0 {
		db.cache = newEntryCache(db.cacheSize)
	}
	db.connectTimeout = cfg.ConnConfig.ConnectTimeout
	db.changes.db = db
	if db.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, db.wrap(err)
	}
	if err := db.migrate(ctx); err != nil {
		db.pool.Close()
		var np *notPostgresError
		if errors.As(err, &np) {
			return nil, np // its own words say it all; pgx's around them, nothing more
		}
		return nil, err
	}
	h := fnv.New64a()
	h.Write([]byte("compass kv writes\x00" + db.schema))
	db.writeLock = int64(h.Sum64())
	db.channel = fmt.Sprintf("compass_kv_%016x", h.Sum64())
	return db, nil
}

// Close stops listening for changes and closes the pool's connections.
func (db *DB) Close() error {
	db.changes.close()
	db.pool.Close()
	return nil
}

// Analyze updates the planner's statistics of the store's table, as autovacuum does after
// enough writes: for a bulk load (a copy into an empty database) whose cursors are read
// at once.
func (db *DB) Analyze(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, db.timeout)
	defer cancel()
	if _, err := db.pool.Exec(ctx, "ANALYZE kv_entries"); err != nil {
		return db.wrap(err)
	}
	return nil
}

// Path names the database for people: its URL without the password (Redact).
func (db *DB) Path() string { return db.shown }

// PoolSize is the most connections the store's transactions hold at once.
func (db *DB) PoolSize() int { return int(db.pool.Config().MaxConns) }

// Schema is the schema the store lives in.
func (db *DB) Schema() string { return db.schema }

func (db *DB) migrate(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, db.timeout)
	defer cancel()
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	known := len(names)
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return db.wrap(err)
	}
	defer conn.Release()
	return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var schema *string
		var path string
		if err := tx.QueryRow(ctx, "SELECT current_schema(), current_setting('search_path')").Scan(&schema, &path); err != nil {
			return db.wrap(err)
		}
		if schema == nil {
			return fmt.Errorf("the database at %s has no schema named by the search_path: create it (CREATE SCHEMA) or fix the URL's search_path", db.addr)
		}
		// PostgreSQL skips a search_path's schemas that don't exist: a missing first one
		// (a typo) would put the store in the next, maybe another team's. Only the
		// default's "$user" may be skipped.
		if first := firstSchema(path); first != "$user" && first != *schema {
			return fmt.Errorf("the database at %s has no schema %q, the first of the search_path (%s): create it (CREATE SCHEMA) or fix the URL's search_path", db.addr, first, path)
		}
		db.schema = *schema
		h := fnv.New64a()
		h.Write([]byte("compass kv migrations\x00" + db.schema))
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(h.Sum64())); err != nil {
			return db.wrap(err)
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS compass_schema (version int PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())"); err != nil {
			return db.wrap(err)
		}
		var have int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM compass_schema").Scan(&have); err != nil {
			return db.wrap(err)
		}
		if have > known {
			return fmt.Errorf("%w: schema %q of the database at %s is at version %d, this compass-mcp knows versions up to %d: run a newer compass-mcp",
				ErrSchemaTooNew, db.schema, db.addr, have, known)
		}
		for v := have + 1; v <= known; v++ {
			sql, err := migrations.ReadFile(names[v-1])
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, string(sql)); err != nil {
				return fmt.Errorf("migrating schema %q to version %d (%s): %w", db.schema, v, names[v-1], db.wrap(err))
			}
			if _, err := tx.Exec(ctx, "INSERT INTO compass_schema (version) VALUES ($1)", v); err != nil {
				return db.wrap(err)
			}
		}
		return nil
	})
}

// firstSchema is the first schema a search_path setting names, as PostgreSQL reads it: a
// quoted name as it is ("" for "), an unquoted one with its ASCII letters in lower case.
func firstSchema(path string) string {
	path = strings.TrimSpace(path)
	if rest, ok := strings.CutPrefix(path, `"`); ok {
		var b strings.Builder
		for i := 0; i < len(rest); i++ {
			if rest[i] == '"' {
				if i+1 < len(rest) && rest[i+1] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			b.WriteByte(rest[i])
		}
		return b.String()
	}
	first, _, _ := strings.Cut(path, ",")
	// PostgreSQL folds only ASCII letters (in UTF-8 databases).
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, strings.TrimSpace(first))
}

// View runs fn on one snapshot of the store: first optimistically, each read a REPEATABLE
// READ READ ONLY transaction of its own checked against the counter of the first (see
// "Transactions" in the package doc); when the store changed after fn had read from the
// cache, fn runs again, in one REPEATABLE READ READ ONLY transaction.
func (db *DB) View(ctx context.Context, fn func(kv.Tx) error) error {
	err := db.run(ctx, false, true, fn)
	if errors.Is(err, errStale) {
		db.restarts.Add(1)
		return db.run(ctx, false, false, fn)
	}
	return err
}

// Update runs fn in a write transaction, under the advisory lock.
func (db *DB) Update(ctx context.Context, fn func(kv.Tx) error) error {
	return db.run(ctx, true, false, fn)
}

// Batch runs fn in a write transaction shared with the Batch calls that arrive while one is
// being committed (kv.Batcher): one commit for all of them.
//
// Its first run is optimistic: what the cache answers is read at the cache's count, with no
// round trip, and the first round trip (a miss, or the commit itself) checks under the lock
// that the store is still at that count; when it is not, or a run that ends without
// reaching the database finds it moved, fn runs again at the store's count (batch;
// Restarts counts these too). A warm Batch that reads nothing the cache lacks so costs one
// round trip, and two right after another replica's commit.
func (db *DB) Batch(ctx context.Context, fn func(kv.Tx) error) error {
	return db.batcher.Do(ctx, db.batch, fn)
}

// batch runs one transaction of Batch: optimistically, then, if the store changed under
// it, as Update.
//
// A run whose first round trip found the store moved caught its cache up in it (the change
// feed): when that round trip was its commit (nothing written), the next run is optimistic
// again, reading the cache at the store's new count, so that a write right after another
// replica's commit costs that round trip and its commit; when it was a miss, runTx has run
// fn again in the transaction it left open. Only a run that finds the store moved again, or
// that caught nothing up, is run as an Update.
func (db *DB) batch(ctx context.Context, fn func(kv.Tx) error) error {
	at := db.cache.at()
	err := db.run(ctx, true, true, fn)
	if errors.Is(err, errStale) && db.cache.at() > at {
		db.restarts.Add(1)
		err = db.run(ctx, true, true, fn)
	}
	if errors.Is(err, errStale) {
		db.restarts.Add(1)
		return db.run(ctx, true, false, fn)
	}
	return err
}

// Change is kv.Change: read runs optimistically as a Batch's first run does, reading what
// the cache holds at its count with no round trip (a miss: BEGIN, the counter, checked
// against that count, and the read, committed, in one round trip, as a View's later misses
// are), and nothing checks then that the cache was current: write's Batch checks it under
// the lock, and write checks what read saw. Only when read fails or has nothing to write
// does Change read the counter, and if the store moved, read runs again as a View's does. A
// warm edit so costs one round trip, its commit, where a View and a Batch cost two.
func (db *DB) Change(ctx context.Context, read func(kv.Tx) (bool, error), write func(kv.Tx) error) error {
	var w bool
	fn := func(tx kv.Tx) (err error) { w, err = read(tx); return err }
	at := db.cache.at()
	err := db.runTx(ctx, &tx{db: db, optimistic: true, prepare: &w}, fn)
	if errors.Is(err, errStale) && db.cache.at() > at { // caught up: as Batch's next run
		db.restarts.Add(1)
		err = db.runTx(ctx, &tx{db: db, optimistic: true, prepare: &w}, fn)
	}
	if errors.Is(err, errStale) {
		db.restarts.Add(1)
		err = db.run(ctx, false, false, fn)
	}
	if err != nil || !w {
		return err
	}
	return db.Batch(ctx, write)
}

func (db *DB) run(ctx context.Context, writable, optimistic bool, fn func(kv.Tx) error) error {
	return db.runTx(ctx, &tx{db: db, writable: writable, optimistic: optimistic}, fn)
}

// runTx runs fn in t, which says what kind of transaction it is, for the caller's context
// and within the store's deadline. What the store answers once either has ended (a
// statement the server canceled, a connection closed) is said as what ended it:
// kv.Canceled for the caller's context, ErrUnavailable's deadline for the store's. fn's
// own error is returned as it is.
func (db *DB) runTx(caller context.Context, t *tx, fn func(kv.Tx) error) (err error) {
	if caller.Err() != nil {
		return kv.Canceled(caller)
	}
	ctx, cancel := context.WithTimeout(caller, db.timeout)
	defer cancel()
	t.ctx = ctx
	fromStore := false // err is the store's (a failure, the commit's), not fn's
	defer func() {
		if err == nil || !fromStore || errors.Is(err, errStale) {
			return
		}
		switch {
		case caller.Err() != nil:
			err = kv.Canceled(caller)
		case ctx.Err() != nil && !errors.Is(err, kv.ErrUnavailable):
			err = db.wrap(ctx.Err())
		}
	}()
	if t.writable {
		// One writer of this process at a time queues on the database's lock: the others
		// wait here, holding no connection, so that readers always find one in the pool.
		select {
		case db.writer <- struct{}{}:
			defer func() { <-db.writer }()
		case <-ctx.Done():
			fromStore = true
			return db.wrap(ctx.Err())
		}
	}
	defer func() { t.end() }() // also on a panic, so that the connection goes back; t may be the rerun's
	fromStore, err = t.attempt(fn)
	if errors.Is(err, errStale) && t.handover {
		// The round trip that found the store moved on left its transaction open, under the
		// lock, at the store's count, and the cache caught up in it: fn runs again in it, as
		// an Update's fn does, with no round trip to roll it back and begin another.
		db.restarts.Add(1)
		t = &tx{db: db, ctx: t.ctx, writable: true, c: t.c, begun: true, snap: t.snap, beginGen: db.buckets.generation()}
		fromStore, err = t.attempt(fn)
	}
	return err
}

// attempt runs fn once in t and commits what it wrote; fromStore tells that err is the
// store's (a failure, the commit's), not fn's.
func (t *tx) attempt(fn func(kv.Tx) error) (fromStore bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, ok := p.(*kv.Failure)
			if !ok {
				panic(p)
			}
			fromStore, err = true, f.Err
		}
	}()
	if err := fn(t); err != nil {
		if !t.confirm() { // it may have failed on what it read of an older store
			return false, errStale
		}
		return false, err
	}
	switch {
	case t.writable:
		return true, t.commit()
	case t.prepare != nil && !*t.prepare && !t.confirm():
		return false, errStale // Change's read found nothing to write in an older store
	}
	return false, nil
}

// unavailable is an error reaching the database.
type unavailable struct {
	addr string
	err  error
}

func (u *unavailable) Error() string {
	return fmt.Sprintf("the database at %s is unavailable: %s", u.addr, oneLine(u.err.Error()))
}

// oneLine joins the lines of a message, dropping repeated ones: pgx says once per attempt
// (TLS, then plain) why it could not connect, each on its own line, and a log line or a
// tool's answer should read as one.
func oneLine(msg string) string {
	if !strings.Contains(msg, "\n") {
		return msg
	}
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(parts, l) {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}
func (u *unavailable) Unwrap() []error { return []error{kv.ErrUnavailable, u.err} }

// wrap tells an error of the database (returned as it is, a *pgconn.PgError) from a failure
// to reach it (wrapped as kv.ErrUnavailable) and from damaged data (wrapped as
// kv.ErrDamaged).
func (db *DB) wrap(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "KV001":
			return fmt.Errorf("%w: %s", kv.ErrIncompatibleValue, pe.Message)
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"), pe.Code == "53300":
			return &unavailable{db.addr, err} // connection, shutdown, too many connections
		case pe.Code == "XX001", pe.Code == "XX002": // data_corrupted, index_corrupted
			return fmt.Errorf("%w: the database at %s reports corrupted data (its log says where); restore it from a backup: %w", kv.ErrDamaged, db.addr, err)
		}
		return err
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && errors.Is(err, context.DeadlineExceeded) && db.connectTimeout > 0 {
		return &unavailable{db.addr, fmt.Errorf("no answer as PostgreSQL within the connect timeout (%v; connect_timeout in the URL sets it): is the URL's host and port PostgreSQL's? %w", db.connectTimeout, err)}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &unavailable{db.addr, fmt.Errorf("no answer within the transaction's %v deadline: %w", db.timeout, err)}
	}
	return &unavailable{db.addr, err}
}

// reserveID returns a new bucket number. Numbers come from kv_bucket_ids 64 at a time.
func (db *DB) reserveID(t *tx) int64 {
	db.idMu.Lock()
	defer db.idMu.Unlock()
	if db.nextID == 0 || db.nextID > db.lastID {
		var first int64
		t.queryRow("SELECT nextval('kv_bucket_ids')", nil, &first)
		db.nextID, db.lastID = first, first+63
	}
	id := db.nextID
	db.nextID++
	return id
}
