package pg

import (
	"bytes"
	"context"
	"errors"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// entry is one key's state as a transaction knows it.
type entry struct {
	found bool   // false: no such key (or deleted, in the overlay)
	value []byte // the value, or nil for a bucket
	child int64  // the nested bucket's number, or 0
	big   bool   // a value too big to come with a cursor's page: fetched when landed on
}

// bucketState is what a transaction knows of one bucket.
type bucketState struct {
	fresh bool              // made by this transaction: nothing of it in the database
	read  map[string]entry  // read from the database (which nothing changes during the tx)
	over  map[string]*entry // written by this transaction, not yet committed
	keys  [][]byte          // over's keys, sorted...
	tail  [][]byte          // ...but for these, added out of order since
}

// write records k's new state in the overlay.
func (s *bucketState) write(k []byte, e entry) {
	if s.over == nil {
		s.over = map[string]*entry{}
	}
	if old, ok := s.over[string(k)]; ok {
		*old = e
		return
	}
	k = bytes.Clone(k)
	s.over[string(k)] = &e
	if n := len(s.keys); len(s.tail) == 0 && (n == 0 || bytes.Compare(k, s.keys[n-1]) > 0) {
		s.keys = append(s.keys, k)
	} else {
		s.tail = append(s.tail, k)
	}
}

// sorted returns the overlay's keys in order.
func (s *bucketState) sorted() [][]byte {
	if len(s.tail) > 0 {
		sort.Slice(s.tail, func(i, j int) bool { return bytes.Compare(s.tail[i], s.tail[j]) < 0 })
		merged := make([][]byte, 0, len(s.keys)+len(s.tail))
		i, j := 0, 0
		for i < len(s.keys) || j < len(s.tail) {
			if j == len(s.tail) || (i < len(s.keys) && bytes.Compare(s.keys[i], s.tail[j]) < 0) {
				merged = append(merged, s.keys[i])
				i++
			} else {
				merged = append(merged, s.tail[j])
				j++
			}
		}
		s.keys, s.tail = merged, nil
	}
	return s.keys
}

type createdBucket struct {
	parent int64
	name   []byte
	id     int64
}

type tx struct {
	db       *DB
	ctx      context.Context
	writable bool
	c        *pgxpool.Conn
	begun    bool // a transaction is open on c
	// A View's first run reads optimistically (see send): once counted, every read has
	// checked that the counter is still snap. A Batch's first run reads optimistically
	// too: assumed, it has read from the cache at its count snap without asking the
	// database, and its first round trip checks, under the lock, that snap is still the
	// store's count (send, guard).
	optimistic, counted, assumed bool
	beginGen                     int64 // the bucket cache's generation when the transaction began
	snap                         int64 // kv_counter as the transaction's snapshot holds it (once begun)
	created                      []createdBucket
	dropped                      []createdBucket        // buckets deleted, with all they hold, not yet sent
	sentDrop                     []createdBucket        // ...and those already sent (spill)
	pending                      int                    // bytes of writes kept in memory, not yet sent
	spills                       int                    // how many times the writes were sent ahead of the commit
	buckets                      map[int64]*bucketState // what the transaction knows of each bucket
	dirty                        bool
	// handover: the round trip that found an optimistic writer's count moved on left its
	// transaction open, under the lock, at the store's count snap (send): runTx runs fn
	// again in it.
	handover bool
	// prepare, for Change's read, is where the read says whether a write follows: the read
	// assumes the cache's count as a Batch does, confirmed only when none follows.
	prepare *bool
}

func (t *tx) Writable() bool { return t.writable }

func (t *tx) Bucket(name []byte) kv.Bucket { return t.root().Bucket(name) }

func (t *tx) CreateBucketIfNotExists(name []byte) (kv.Bucket, error) {
	return t.root().CreateBucketIfNotExists(name)
}

func (t *tx) ForEachBucket(fn func(name []byte) error) error {
	return t.root().ForEachBucket(fn)
}

func (t *tx) root() *bucket { return &bucket{t: t, id: 0} }

func (t *tx) state(id int64) *bucketState {
	if t.buckets == nil {
		t.buckets = map[int64]*bucketState{}
	}
	s := t.buckets[id]
	if s == nil {
		s = &bucketState{read: map[string]entry{}}
		t.buckets[id] = s
	}
	return s
}

// commits tells whether b ends the transaction with COMMIT.
func commits(b *pgx.Batch) bool {
	n := len(b.QueuedQueries)
	return n > 0 && b.QueuedQueries[n-1].SQL == "COMMIT"
}

// errStale is what an optimistic run fails with (kv.Fail) when the store changed after
// what it had read from the cache: View or Batch runs fn again in a transaction.
var errStale = errors.New("pg: the store changed under an optimistic read")

// send sends b in the transaction. The first time, it begins the transaction in the same
// round trip (a write transaction: taking the write lock first); a transaction that never
// reads and never writes never reaches the database. The results of b are read from what
// send returns, then closed.
//
// A View's first run (optimistic) whose first read the cache may answer begins no
// transaction that outlives a round trip: it reads the counter alone (begin), and each
// batch after is a REPEATABLE READ transaction of its own, BEGIN, the counter, b and COMMIT
// in one round trip, which fails with errStale when the counter moved (what was read before
// may be older than what it reads now). Nothing is left to roll back: a View the cache
// serves costs one round trip, and one more each miss. A View whose first read misses
// begins a transaction as an Update does: it never runs again.
func (t *tx) send(b *pgx.Batch) pgx.BatchResults {
	if t.begun {
		return t.c.SendBatch(t.ctx, b)
	}
	// b.Len() == 0: from begin. assumed: Change's read, which checks its count with each miss.
	mini := !t.writable && t.optimistic && (t.counted || t.assumed || b.Len() == 0)
	var err error
	// Every pooled connection may have died with the database (a restart): one more try
	// than there are, each on another connection.
	for range t.db.PoolSize() + 1 {
		// A batch afresh each time: pgx keeps what it learnt of a query on its item.
		first, begin, from := t.firstBatch(b, mini)
		if t.c == nil {
			if t.c, err = t.db.pool.Acquire(t.ctx); err != nil {
				kv.Fail(t.db.wrap(err))
			}
		}
		if !t.counted && !t.assumed {
			t.beginGen = t.db.buckets.generation() // before the snapshot
		}
		br := t.c.SendBatch(t.ctx, first)
		for range begin {
			if _, err = br.Exec(); err != nil {
				break
			}
		}
		var n int64
		if err == nil {
			err = br.QueryRow().Scan(&n)
		}
		var cu *catchUp
		if err == nil && from >= 0 {
			var rows pgx.Rows
			if rows, err = br.Query(); err == nil {
				cu, err = t.readFeed(rows, from)
			}
		}
		if err == nil && t.assumed && n != t.snap {
			// A commit came after the count the run assumed: what it read of the cache may
			// be older than the store. Nothing of the round trip was written (its writes
			// and the counter's move are guarded by that count: guard), and no statement
			// failed (a failed one would make pgx forget every statement of the batch on
			// this connection, and the next round trip prepare them again). The cache moves
			// on with the feed the round trip read, and fn's next run reads it at the
			// store's count (Batch, Change).
			br.Close()
			if cu != nil {
				t.db.cache.advance(n, cu)
			}
			if !commits(first) {
				// A transaction left open: a writer's holds the lock at the store's count,
				// for fn to run again in (runTx); end rolls back any other.
				t.begun, t.snap, t.handover = true, n, t.writable
			}
			kv.Fail(errStale)
		}
		if err == nil {
			switch {
			case !mini:
				t.begun, t.snap = true, n
			case !t.counted:
				t.counted, t.snap = true, n
			case n != t.snap:
				br.Close()
				kv.Fail(errStale)
			}
			t.db.cache.advance(n, cu)
			return br
		}
		br.Close()
		// A connection that died while pooled fails here, before anything was done: try
		// again on another. But a batch that ends in COMMIT (a transaction that wrote
		// without reading) may have been committed before its answer was lost: sent again,
		// it would write the same values over whatever another writer committed since.
		// It is tried again only when nothing of it was sent (pgconn.SafeToRetry); a
		// connection that died while idle is found by the pool's ping first (idle > 1 s).
		// (An optimistic read's COMMIT commits nothing: always safe.)
		t.c.Conn().Close(t.ctx)
		t.c.Release()
		t.c = nil
		if t.ctx.Err() != nil || commits(b) && !pgconn.SafeToRetry(err) {
			break
		}
	}
	kv.Fail(t.db.wrap(err))
	return nil
}

// firstBatch is b as the transaction's first round trip sends it: first its BEGIN (and, for
// a writer, its lock), begin queries in all; then the counter, the change feed from the
// cache's count (from; -1: not queued, see queueFeed), b's queries and, for a read of one
// round trip (mini), COMMIT. A run that assumed the cache's count checks it against the
// counter read here (send), and its writes in b were queued guarded by it (guard), so that
// when the store moved its cache catches up in this round trip all the same, and nothing
// is written.
func (t *tx) firstBatch(b *pgx.Batch, mini bool) (first *pgx.Batch, begin int, from int64) {
	first = &pgx.Batch{}
	switch {
	case !t.writable:
		first.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
	default:
		first.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
		// A writer that goes silent holding the lock (its replica frozen, or cut off
		// without its connection being closed) would hold every replica's writes until
		// TCP gave up on it, hours later: past its own deadline, the database ends its
		// session, which lets go of the lock.
		first.Queue("SELECT set_config('idle_in_transaction_session_timeout', $1, true)",
			strconv.FormatInt(min(max(t.db.timeout.Milliseconds(), 1), math.MaxInt32), 10)) // its most: 24 days
		first.Queue("SELECT pg_advisory_xact_lock($1)", t.db.writeLock)
	}
	begin = first.Len()
	first.Queue("SELECT n FROM kv_counter")
	from = t.queueFeed(first)
	for _, q := range b.QueuedQueries {
		first.Queue(q.SQL, q.Arguments...)
	}
	if mini {
		first.Queue("COMMIT")
	}
	return first, begin, from
}

// guard is the count a write statement queued now must find the store at to write anything
// (nil: no condition). A run that assumed the cache's count sends its first writes in its
// first round trip, before it knows whether the store is still there: each write, and the
// counter's move, is then conditioned on it, and the round trip that finds the store moved
// writes nothing, with no error (send). Once the transaction has begun, its count was read
// under the lock, and nothing else commits.
func (t *tx) guard() *int64 {
	if !t.assumed || t.begun {
		return nil
	}
	n := t.snap
	return &n
}

// begin begins the transaction, if it has not begun, with nothing else: to learn the count
// its snapshot is at before it may read the cache.
func (t *tx) begin() {
	if !t.begun && !t.counted {
		if err := t.send(&pgx.Batch{}).Close(); err != nil {
			kv.Fail(t.db.wrap(err))
		}
	}
}

// cached returns the cache's item k, if the transaction may use it; when the cache holds k
// and the transaction has not begun, it begins it to find out, or, a Batch's optimistic
// run, assumes the cache's count (assume).
func (t *tx) cached(k cacheKey) (*cacheItem, bool) {
	if t.db.cache == nil || t.spills > 0 {
		return nil, false
	}
	if !t.begun && !t.counted && !t.assumed {
		if !t.db.cache.has(k) {
			return nil, false
		}
		if !t.assume() {
			t.begin()
		}
	}
	return t.db.cache.get(t.snap, k)
}

// assume takes the cache's count for the snapshot of a Batch's optimistic run, with no
// round trip: what it reads from the cache is the store at that count, and its first round
// trip checks the count (under the lock, for a writer: send, guard), so that a run which
// read an older store than the one it writes into writes nothing, fails with errStale and
// runs again. Views, Updates and
// a Batch's second run begin instead.
func (t *tx) assume() bool {
	if !t.writable && t.prepare == nil || !t.optimistic {
		return false
	}
	n := t.db.cache.at()
	if n < 0 {
		return false
	}
	t.beginGen = t.db.buckets.generation()
	t.snap, t.assumed = n, true
	return true
}

// confirm tells whether the store is still at the count an optimistic Batch assumed, for a
// run that ends without reaching the database (it wrote nothing, or its fn failed): one
// round trip, reading the counter.
func (t *tx) confirm() bool {
	if !t.assumed || t.begun || t.counted {
		return true
	}
	var n int64
	if err := t.db.pool.QueryRow(t.ctx, "SELECT n FROM kv_counter").Scan(&n); err != nil {
		kv.Fail(t.db.wrap(err))
	}
	return n == t.snap
}

// keep puts what the transaction read from the database in the cache, unless its writes
// were sent (a spill: it may read its own, not committed).
func (t *tx) keep(it *cacheItem) {
	if t.db.cache != nil && t.spills == 0 && (t.begun || t.counted) {
		t.db.cache.put(t.snap, it)
	}
}

// query runs one query in the transaction; done closes its rows.
func (t *tx) query(sql string, args ...any) (rows pgx.Rows, done func()) {
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	br := t.send(b)
	rows, _ = br.Query() // its error, if any, is rows.Err's
	return rows, func() {
		rows.Close()
		br.Close()
	}
}

// queryRow scans the one row of sql into dest, and tells whether there was one.
func (t *tx) queryRow(sql string, args []any, dest ...any) bool {
	rows, done := t.query(sql, args...)
	defer done()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			kv.Fail(t.db.wrap(err))
		}
		return false
	}
	if err := rows.Scan(dest...); err != nil {
		kv.Fail(t.db.wrap(err))
	}
	return true
}

// end rolls back whatever was not committed and gives the connection back.
func (t *tx) end() {
	if t.c == nil {
		return
	}
	// An optimistic read that failed half way may have left its transaction open (its
	// COMMIT not run).
	if t.begun || t.c.Conn().PgConn().TxStatus() != 'I' {
		// The transaction's own deadline may be what ended it: give the rollback its own.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := t.c.Exec(ctx, "ROLLBACK"); err != nil {
			t.c.Conn().Close(ctx) // unknown state: don't pool it
		}
	}
	t.c.Release()
	t.c = nil
}

// commit writes the overlay in bulk, notifies, and commits, in one round trip.
func (t *tx) commit() (err error) {
	defer kv.Recover(&err)
	if !t.dirty {
		if !t.confirm() {
			return errStale
		}
		return nil
	}
	b := &pgx.Batch{}
	t.queueWrites(b)
	writes := b.Len()
	// The counter, the commit's row of the change feed and the feed's oldest rows pruned,
	// in one statement (feed.go); like the writes, nothing of it is done when the store is
	// not at the count the run assumed (guard), and send finds that out.
	//
	// The rows pruned are looked for from the feed's length back, not from its low end
	// (p): the rows pruned before lie there, dead until a vacuum, and an index scan from the
	// end walks every one of them, visiting its row, in every commit (up to a thousand
	// between two vacuums; docs/POSTGRES.md). Every commit deletes the row its count puts
	// past the length, so nothing is left below; what is (a feed kept longer before, a
	// commit of another version) goes once every length commits (q).
	whole, fb, fk := t.feedRow()
	guard := t.guard()
	b.Queue(`WITH c AS (UPDATE kv_counter SET n = n + 1 WHERE $6::bigint IS NULL OR n = $6 RETURNING n),
			f AS (INSERT INTO kv_changes (n, whole, buckets, keys) SELECT n, $1, $2, $3 FROM c),
			p AS (DELETE FROM kv_changes WHERE n IN (SELECT n FROM kv_changes WHERE n > (SELECT n FROM c) - $4 - `+strconv.Itoa(feedPrune)+`
					ORDER BY n LIMIT `+strconv.Itoa(feedPrune)+`)
				AND (n <= (SELECT n FROM c) - $4 OR at < now() - make_interval(secs => $5))),
			q AS (DELETE FROM kv_changes WHERE (SELECT n FROM c) % $4 = 0 AND n <= (SELECT n FROM c) - $4 - `+strconv.Itoa(feedPrune)+`)
		SELECT n FROM c`, whole, fb, fk, t.db.feedLength, t.db.feedAge.Seconds(), guard)
	b.Queue("SELECT pg_notify($1, '') WHERE $2::bigint IS NULL OR (SELECT n FROM kv_counter) = $2 + 1", t.db.channel, guard)
	b.Queue("COMMIT")
	br := t.send(b)
	var count int64
	for range writes {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	if err == nil {
		err = br.QueryRow().Scan(&count)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		kv.Fail(t.db.wrap(err))
	}
	t.begun = false // committed: nothing for end to roll back
	t.db.cache.committed(count, t.cacheWrites())
	gone := droppedIDs(append(t.sentDrop, t.dropped...), t.created)
	for _, c := range t.created {
		if !gone[c.id] {
			t.db.buckets.put(c.parent, c.name, c.id)
		}
	}
	for _, d := range append(t.sentDrop, t.dropped...) {
		t.db.buckets.drop(d.parent, d.name)
	}
	t.db.changes.committed()
	return nil
}

// cacheWrites returns what the transaction wrote, for the cache: nil when it can't tell
// (its writes were sent ahead of the commit and forgotten) or deleted a bucket (whose
// entries, and those of buckets inside it, the cache may hold).
func (t *tx) cacheWrites() func(put func(bucket int64, key string, e entry)) {
	if t.spills > 0 || len(t.dropped) > 0 || len(t.sentDrop) > 0 {
		return nil
	}
	return func(put func(bucket int64, key string, e entry)) {
		for id, s := range t.buckets {
			for k, e := range s.over {
				put(id, k, *e)
			}
		}
	}
}

// spill sends the writes kept so far ahead of the commit, in the transaction, and forgets
// them (and what was read: the database now has the transaction's writes), so that a
// transaction writing more than the write buffer (a copy of a whole store) needs no more
// memory than that. Cursors see the spill (epoch) and fetch again.
func (t *tx) spill() {
	b := &pgx.Batch{}
	t.queueWrites(b)
	if err := t.send(b).Close(); err != nil {
		kv.Fail(t.db.wrap(err))
	}
	// The overlay that said these buckets are gone is forgotten below: the store's cache
	// must not answer for them either (dropping a number from it is always safe).
	for _, d := range t.dropped {
		t.db.buckets.drop(d.parent, d.name)
	}
	t.sentDrop, t.dropped = append(t.sentDrop, t.dropped...), nil
	for _, s := range t.buckets {
		s.over, s.keys, s.tail, s.fresh = nil, nil, nil, false
		s.read = map[string]entry{}
	}
	t.pending = 0
	t.spills++
}

// grow counts n more bytes of writes kept in memory, and spills them past the buffer.
func (t *tx) grow(n int) {
	if t.pending += n; t.pending > t.db.writeBuffer {
		t.spill()
	}
}

// queueWrites queues the writes kept in memory: buckets deleted, then keys.
func (t *tx) queueWrites(b *pgx.Batch) {
	guard := t.guard()
	var delB []int64
	var delK [][]byte
	var putB, putC []int64
	var putK, putV [][]byte
	size := 0
	// A put may replace a value (a bucket made where the transaction deleted a value: it
	// looked the name up first, so a value still there is one it deleted), never a bucket
	// (one it deleted was deleted above): a Put over a bucket it had not read is refused.
	flushPuts := func() {
		if len(putK) == 0 {
			return
		}
		b.Queue(`INSERT INTO kv_entries (bucket, key, value, child)
			SELECT b, k, v, nullif(c, 0) FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::bigint[]) AS t(b, k, v, c)
			WHERE $5::bigint IS NULL OR (SELECT n FROM kv_counter) = $5
			ON CONFLICT (bucket, key) DO UPDATE SET value = excluded.value, child = excluded.child
			WHERE kv_compatible(kv_entries.child IS NULL, kv_entries.key)`,
			putB, putK, putV, putC, guard)
		putB, putK, putV, putC, size = nil, nil, nil, nil, 0
	}
	gone := droppedIDs(t.dropped, t.created)
	for _, d := range t.dropped {
		if !t.state(d.parent).fresh {
			b.Queue("DELETE FROM kv_entries WHERE bucket = $1 AND key = $2 AND ($3::bigint IS NULL OR (SELECT n FROM kv_counter) = $3)", d.parent, d.name, guard)
		}
	}
	if len(gone) > 0 {
		ids := make([]int64, 0, len(gone))
		for id := range gone {
			ids = append(ids, id)
		}
		b.Queue(`WITH RECURSIVE sub(id) AS (
				SELECT unnest($1::bigint[]) UNION ALL SELECT e.child FROM kv_entries e JOIN sub ON e.bucket = sub.id WHERE e.child IS NOT NULL)
			DELETE FROM kv_entries WHERE bucket IN (SELECT id FROM sub) AND ($2::bigint IS NULL OR (SELECT n FROM kv_counter) = $2)`, ids, guard)
	}
	for id, s := range t.buckets {
		if gone[id] {
			continue
		}
		for k, e := range s.over {
			switch {
			case !e.found:
				if t.isDropped(id, k) {
					continue // deleted above, with what it held
				}
				if !s.fresh {
					delB, delK = append(delB, id), append(delK, []byte(k))
				}
			default:
				putB, putK, putV, putC = append(putB, id), append(putK, []byte(k)), append(putV, e.value), append(putC, e.child)
				if size += len(k) + len(e.value); size > 64<<20 {
					flushPuts() // keep each statement's message well under PostgreSQL's 1 GB
				}
			}
		}
	}
	if len(delK) > 0 {
		// The check is on the rows deleted: in the WHERE, the planner may run it on rows
		// it then leaves.
		b.Queue(`WITH d AS (DELETE FROM kv_entries e USING unnest($1::bigint[], $2::bytea[]) AS t(b, k)
				WHERE e.bucket = t.b AND e.key = t.k AND ($3::bigint IS NULL OR (SELECT n FROM kv_counter) = $3) RETURNING e.key, e.child)
			SELECT kv_compatible(false, key) FROM d WHERE child IS NOT NULL`, delB, delK, guard)
	}
	flushPuts()
}

// bucket is a bucket of a transaction: its number and the transaction.
type bucket struct {
	t  *tx
	id int64
}

func (b *bucket) state() *bucketState { return b.t.state(b.id) }

// lookup returns k's entry: from the overlay, else from what was read, else from the database.
func (b *bucket) lookup(k []byte) entry {
	t := b.t
	s := b.state()
	if e, ok := s.over[string(k)]; ok {
		return *e
	}
	if e, ok := s.read[string(k)]; ok {
		return e
	}
	var e entry
	upTo := t.beginGen
	if !t.begun && !t.counted {
		upTo = math.MaxInt64 // the snapshot, taken later, will hold every bucket known now
	}
	if id, ok := t.db.buckets.get(b.id, k, upTo); ok && !s.fresh {
		e = entry{found: true, child: id}
	} else if ck := (cacheKey{bucket: b.id, key: string(k)}); !s.fresh {
		it, ok := t.cached(ck)
		switch {
		case ok:
			e = it.e
		case t.inGap(b.id, k): // none there
		default:
			if it, ok := t.cached(ck); ok { // what inGap's first round trip caught up on
				e = it.e
				break
			}
			e = b.read(k)
			t.keep(&cacheItem{k: ck, e: e})
		}
	}
	s.read[string(k)] = e
	return e
}

// read asks the database for k, and, in the same query, for the keys before and after it:
// what lies between them is a gap (gaps.go), learnt. The key after, if its value is small,
// is kept too (a Seek into the gap lands on it).
func (b *bucket) read(k []byte) entry {
	t := b.t
	rows, done := t.query(`(SELECT key, child, octet_length(value), CASE WHEN key = $2 OR octet_length(value) <= `+strconv.Itoa(gapValue)+` THEN value END
		FROM kv_entries WHERE bucket = $1 AND key >= $2 ORDER BY key LIMIT 1)
		UNION ALL (SELECT key, NULL::bigint, NULL::integer, NULL::bytea FROM kv_entries WHERE bucket = $1 AND key < $2 ORDER BY key DESC LIMIT 1)`, b.id, k)
	defer done()
	var e entry
	var before, after []byte
	for rows.Next() {
		var key, value []byte
		var child *int64
		var size *int32
		if err := rows.Scan(&key, &child, &size, &value); err != nil {
			kv.Fail(t.db.wrap(err))
		}
		switch c := bytes.Compare(key, k); {
		case c < 0:
			before = key
		case c == 0:
			after, e = key, t.found(b.id, k, value, child)
		default:
			after = key
			if child != nil || value != nil {
				t.keep(&cacheItem{k: cacheKey{bucket: b.id, key: string(key)}, e: t.found(b.id, key, value, child)})
			}
		}
	}
	if err := rows.Err(); err != nil {
		kv.Fail(t.db.wrap(err))
	}
	t.learn(b.id, before, after)
	return e
}

// gapValue is the most bytes of the value of the key after a Get's that come with it.
const gapValue = 1024

// found is the entry of key k of bucket, read from the database with its value and child:
// a nested bucket (learnt) when child is set, else a value (never nil: an empty one is
// found).
func (t *tx) found(bucket int64, k, value []byte, child *int64) entry {
	if child != nil {
		t.learnt(bucket, k, *child)
		return entry{found: true, child: *child}
	}
	if value == nil {
		value = []byte{}
	}
	return entry{found: true, value: value}
}

// learnt records in the store's cache a nested bucket the transaction read. Once the
// transaction's writes were sent (a spill), what it reads may be its own, not committed (and
// maybe never): only committed buckets go in the store's cache, which other transactions
// trust; and the cache takes it only if no bucket was dropped since the transaction began.
func (t *tx) learnt(parent int64, name []byte, child int64) {
	if t.spills == 0 {
		t.db.buckets.seen(parent, name, child, t.beginGen)
	}
}

func (b *bucket) Get(key []byte) []byte {
	if e := b.lookup(key); e.found {
		return e.value
	}
	return nil
}

func (b *bucket) checkWrite(key []byte) error {
	switch {
	case !b.t.writable:
		return kv.ErrTxNotWritable
	case len(key) == 0:
		return kv.ErrKeyRequired
	case len(key) > kv.MaxKeySize:
		return kv.ErrKeyTooLarge
	}
	return nil
}

// known returns k's entry if the transaction knows it without asking the database.
func (b *bucket) known(k []byte) (entry, bool) {
	s := b.state()
	if e, ok := s.over[string(k)]; ok {
		return *e, true
	}
	e, ok := s.read[string(k)]
	return e, ok || s.fresh
}

// Put keeps the value until commit. A key known to hold a bucket is refused now; one the
// transaction has not read is checked by the commit.
func (b *bucket) Put(key, value []byte) error {
	if err := b.checkWrite(key); err != nil {
		return err
	}
	if e, ok := b.known(key); ok && e.found && e.child != 0 {
		return kv.ErrIncompatibleValue
	}
	if value == nil {
		value = []byte{}
	}
	b.state().write(key, entry{found: true, value: bytes.Clone(value)})
	b.t.dirty = true
	b.t.grow(len(key) + len(value))
	return nil
}

func (b *bucket) Delete(key []byte) error {
	if err := b.checkWrite(key); err != nil {
		return err
	}
	e, ok := b.known(key)
	if ok && e.found && e.child != 0 {
		return kv.ErrIncompatibleValue
	}
	if ok && !e.found {
		return nil
	}
	b.state().write(key, entry{})
	b.t.dirty = true
	b.t.grow(len(key))
	return nil
}

func (b *bucket) Bucket(name []byte) kv.Bucket {
	if e := b.lookup(name); e.found && e.child != 0 {
		return &bucket{t: b.t, id: e.child}
	}
	return nil
}

func (b *bucket) CreateBucketIfNotExists(name []byte) (kv.Bucket, error) {
	if err := b.checkWrite(name); err != nil {
		return nil, err
	}
	e := b.lookup(name)
	switch {
	case e.found && e.child != 0:
		return &bucket{t: b.t, id: e.child}, nil
	case e.found:
		return nil, kv.ErrIncompatibleValue
	}
	id := b.t.db.reserveID(b.t)
	b.state().write(name, entry{found: true, child: id})
	b.t.created = append(b.t.created, createdBucket{b.id, bytes.Clone(name), id})
	b.t.state(id).fresh = true
	b.t.dirty = true
	b.t.grow(len(name))
	return &bucket{t: b.t, id: id}, nil
}

// DeleteBucket deletes the nested bucket name and everything in it, at commit.
//
// Caveat: every server on the database keeps the numbers of buckets it has opened, so
// another server may go on seeing a deleted bucket (empty) by its old name. compass-mcp
// deletes only buckets named by a purged document's id, which is never used again.
func (b *bucket) DeleteBucket(name []byte) error {
	if err := b.checkWrite(name); err != nil {
		return err
	}
	e := b.lookup(name)
	switch {
	case !e.found:
		return kv.ErrBucketNotFound
	case e.child == 0:
		return kv.ErrIncompatibleValue
	}
	b.state().write(name, entry{})
	b.t.dropped = append(b.t.dropped, createdBucket{b.id, bytes.Clone(name), e.child})
	b.t.dirty = true
	return nil
}

// droppedIDs returns the numbers of the buckets dropped, and of those made inside them.
func droppedIDs(dropped, created []createdBucket) map[int64]bool {
	if len(dropped) == 0 {
		return nil
	}
	gone := map[int64]bool{}
	for _, d := range dropped {
		gone[d.id] = true
	}
	for grew := true; grew; {
		grew = false
		for _, c := range created {
			if gone[c.parent] && !gone[c.id] {
				gone[c.id], grew = true, true
			}
		}
	}
	return gone
}

// isDropped tells whether key k of bucket parent is a bucket the transaction deleted (and
// did not make again).
func (t *tx) isDropped(parent int64, k string) bool {
	for _, d := range t.dropped {
		if d.parent == parent && string(d.name) == k {
			if e := t.state(parent).over[k]; e != nil && e.found {
				return false
			}
			return true
		}
	}
	return false
}

func (b *bucket) Cursor() kv.Cursor { return &cursor{b: b} }

func (b *bucket) ForEach(fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

func (b *bucket) ForEachBucket(fn func(name []byte) error) error {
	c := &cursor{b: b}
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if c.cur.child != 0 {
			if err := fn(k); err != nil {
				return err
			}
		}
	}
	return nil
}

// KeyN counts in the database when the transaction has written nothing, else walks.
func (b *bucket) KeyN() int {
	if !b.t.dirty {
		var n int
		b.t.queryRow(`WITH RECURSIVE sub(id) AS (
				SELECT $1::bigint UNION ALL SELECT e.child FROM kv_entries e JOIN sub ON e.bucket = sub.id WHERE e.child IS NOT NULL)
			SELECT count(*) FROM kv_entries e JOIN sub ON e.bucket = sub.id`, []any{b.id}, &n)
		return n
	}
	n := 0
	c := &cursor{b: b}
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
		if c.cur.child != 0 {
			n += (&bucket{t: b.t, id: c.cur.child}).KeyN()
		}
	}
	return n
}

func (b *bucket) Tune(float64) {}
