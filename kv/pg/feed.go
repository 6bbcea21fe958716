package pg

import (
	"bytes"
	"errors"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// The change feed (kv_changes, migration 005). Every commit writes the keys it changed
// under its count, in the statement that moves the counter, inside its transaction: a row
// is there if and only if its commit is. A transaction's first round trip, which reads the
// counter, reads with it the feed after the count its replica's cache is at, joined with
// each changed key's entry as the transaction's snapshot holds it, and the cache moves on to
// the snapshot's count key by key: entries changed are replaced (or dropped, for a value too
// big to bring along), pages of rows a cursor fetched are patched in place, gaps split or
// joined. What the cache can't follow exactly empties it, as before the feed: slower, never
// stale.
//
//   - a commit that wrote more than feedKeys keys or feedKeyBytes bytes of keys, deleted a
//     bucket (with everything in it) or sent its writes ahead of the commit: its row is
//     whole, naming no key;
//   - a gap in the counts read (rows pruned, or cut by the catch-up's bounds: catchUpCommits
//     commits, catchUpKeys keys).
//
// Why a table rather than a NOTIFY payload: a transaction must read the counter in its first
// round trip anyway (to use the cache only at its snapshot's count), so reading the feed in
// that same round trip costs no round trip, and it is read in the snapshot, so it is exactly
// what lies between the cache and the snapshot; a notification arrives on another connection
// at another moment, may be lost with that connection (and every notification sent
// meanwhile), and holds 8,000 bytes at most. The NOTIFY stays, for Changes' listeners.

// Bounds of the feed, and of what one catch-up reads.
const (
	feedKeys     = 1024     // keys a commit lists; more: whole
	feedKeyBytes = 64 << 10 // bytes of keys a commit lists; more: whole

	catchUpCommits = 256       // commits one catch-up reads; a cache further behind is emptied
	catchUpKeys    = 4096      // keys one catch-up reads; more: emptied
	catchUpValue   = 256 << 10 // the largest value a catch-up brings along (a larger one is dropped from the cache)
	catchUpValues  = 2 << 20   // bytes of values one catch-up brings along at most

	// DefaultFeedLength and DefaultFeedAge are how many commits the feed keeps, and for how
	// long: each commit deletes up to feedPrune of the oldest rows past either.
	DefaultFeedLength = 1024
	DefaultFeedAge    = time.Hour
	feedPrune         = 8
)

// WithFeed sets how many commits the change feed keeps and for how long (DefaultFeedLength,
// DefaultFeedAge): a replica whose cache is further behind empties it.
func WithFeed(length int, age time.Duration) Option {
	return func(db *DB) { db.feedLength, db.feedAge = max(length, 1), age }
}

// errFeedCut is a test's connection reset in the middle of a catch-up (feedFault).
var errFeedCut = errors.New("pg: the connection was cut in the middle of the change feed (a test's fault)")

// change is one key a commit changed, as a snapshot at or after it holds it.
type change struct {
	n      int64 // the commit
	bucket int64
	key    string
	e      entry // big: a value too big to come along (the cache drops the key)
}

// catchUp is what a transaction's first round trip read of the feed: the commits after from,
// the count its cache was at when it was sent.
type catchUp struct {
	from    int64
	last    int64 // the last commit read: from if none
	whole   bool  // something read can't be followed key by key (a whole commit, a gap, a cut)
	changes []change
}

// feedQuery reads the commits after $1 (at most catchUpCommits, and catchUpKeys keys: one
// row more tells it was cut), each key with its entry in the snapshot: child, the value's
// length, the value while it is small and the catch-up's values stay under their bound.
//
// It is planned once a connection, not once a transaction. Every transaction runs it, with
// $1 the newest count or near it: past the end of kv_changes' statistics, where the planner
// of a plan for that value (PostgreSQL's choice for this query, whose estimate for it was
// the lowest) looks up the index's actual lowest and highest keys, walking every entry the
// feed's pruning left dead at its low end, and visiting their rows, until a vacuum: three
// index scans a transaction instead of one, and planning the whole query each time (the
// database's CPU a read rose with the dead rows, run after run of the replicas' benchmark;
// docs/POSTGRES.md, "Steady through the day"). Given as a sub-select, $1 is a value no plan knows beforehand, so
// the generic plan costs the same and is kept; each key's entry is a lateral lookup of at
// most one row, an index probe whatever the plan guesses of how many keys come (a hash
// join over the whole table otherwise).
var feedQuery = `SELECT f.n, f.whole, f.b, f.k, e.child, octet_length(e.value),
		CASE WHEN octet_length(e.value) <= ` + strconv.Itoa(catchUpValue) + ` AND sum(CASE WHEN octet_length(e.value) <= ` + strconv.Itoa(catchUpValue) + ` THEN octet_length(e.value) END)
			OVER (ORDER BY f.n, f.i) <= ` + strconv.Itoa(catchUpValues) + ` THEN e.value END
	FROM (SELECT c.n, c.whole, u.b, u.k, u.i FROM kv_changes c
			LEFT JOIN LATERAL unnest(c.buckets, c.keys) WITH ORDINALITY AS u(b, k, i) ON true
			WHERE c.n > (SELECT $1::bigint) AND c.n <= (SELECT $1::bigint) + ` + strconv.Itoa(catchUpCommits) + `
			ORDER BY c.n, u.i LIMIT ` + strconv.Itoa(catchUpKeys+1) + `) f
		LEFT JOIN LATERAL (SELECT child, value FROM kv_entries WHERE bucket = f.b AND key = f.k LIMIT 1) e ON true
	ORDER BY f.n, f.i`

// readFeed reads feedQuery's rows.
func (t *tx) readFeed(rows pgx.Rows, from int64) (*catchUp, error) {
	defer rows.Close()
	cu := &catchUp{from: from, last: from}
	read := 0
	for rows.Next() {
		var n int64
		var whole bool
		var b, child *int64
		var k, value []byte
		var size *int32
		if err := rows.Scan(&n, &whole, &b, &k, &child, &size, &value); err != nil {
			return nil, err
		}
		if read == 0 && t.db.feedFault != nil && t.db.feedFault(t.writable) {
			t.c.Conn().PgConn().Conn().Close() // as a connection reset mid catch-up
			return nil, errFeedCut
		}
		if read++; read > catchUpKeys {
			cu.whole = true // cut: the last commit read may lack keys
			continue
		}
		switch n {
		case cu.last + 1:
			cu.last = n
		case cu.last:
		default:
			cu.whole = true // pruned, or not yet there
		}
		if whole {
			cu.whole = true
		}
		if b == nil || cu.whole {
			continue
		}
		var e entry
		switch {
		case child != nil:
			e = entry{found: true, child: *child}
		case size == nil: // no such key now
		case value == nil:
			e = entry{found: true, big: true}
		default:
			e = entry{found: true, value: value}
		}
		cu.changes = append(cu.changes, change{n: n, bucket: *b, key: string(k), e: e})
	}
	return cu, rows.Err()
}

// feedRow is what the transaction's commit writes in the feed: its keys, or whole.
func (t *tx) feedRow() (whole bool, buckets []int64, keys [][]byte) {
	if t.spills > 0 || len(t.dropped) > 0 || len(t.sentDrop) > 0 {
		return true, []int64{}, [][]byte{}
	}
	size := 0
	for id, s := range t.buckets {
		for k := range s.over {
			size += len(k)
			if len(keys) == feedKeys || size > feedKeyBytes {
				return true, []int64{}, [][]byte{}
			}
			buckets, keys = append(buckets, id), append(keys, []byte(k))
		}
	}
	return false, buckets, keys
}

// advance moves the cache on to count n, the snapshot's of a transaction whose first round
// trip read cu (nil: it read no feed) of what came after the cache's count: key by key when
// cu covers every commit from the cache's count to n, else by emptying it.
func (c *entryCache) advance(n int64, cu *catchUp) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n <= c.count {
		return
	}
	if c.count < 0 || cu == nil || cu.whole || cu.from > c.count || cu.last < n {
		c.clear()
		c.count = n
		c.nEmptied++
		return
	}
	var ch []change
	for _, w := range cu.changes {
		if w.n > c.count && w.n <= n {
			ch = append(ch, w)
		}
	}
	c.apply(ch)
	c.count = n
	c.nFollowed++
}

// maxPatched is the most keys one bucket's pages are patched for, in one commit or one
// catch-up: past it (an import, a big catch-up) the bucket's pages are dropped, so that
// what the cache does under its lock stays about the size of the changes.
const maxPatched = 16

// apply puts changes, committed after what the cache holds, into it: called with c.mu held.
func (c *entryCache) apply(ch []change) {
	per := map[int64]int{}
	for _, w := range ch {
		per[w.bucket]++
	}
	splits := map[int64]int{}
	for _, w := range ch {
		c.patchPages(w.bucket, []byte(w.key), w.e, per[w.bucket] > maxPatched)
		switch {
		case !w.e.found:
			c.emptied(w.bucket, []byte(w.key))
		case c.filled(w.bucket, []byte(w.key)):
			if splits[w.bucket]++; splits[w.bucket] > maxSplits {
				c.dropGaps(w.bucket)
			}
		}
		it := &cacheItem{k: cacheKey{bucket: w.bucket, key: w.key}, e: w.e}
		it.size = itemOverhead + len(w.key) + len(w.e.value)
		if w.e.big || it.size > c.max/8 {
			if el, ok := c.items[it.k]; ok {
				c.remove(el)
			}
			continue
		}
		c.store(it, true)
	}
}

// pageOf is the query a cached page of rows answers: its rows are the first limit rows of
// the bucket in its order (desc: descending) from key (op one of > >= < <=; nil: from the
// end), as many as there are.
type pageOf struct {
	op    string
	desc  bool
	key   []byte
	limit int
}

// covers tells whether key k, put or deleted, lies in the rows a page of q answers.
func (q *pageOf) covers(k []byte, rows []row, full bool) bool {
	if q.key != nil {
		c := bytes.Compare(k, q.key)
		if q.op == ">" && c <= 0 || q.op == ">=" && c < 0 || q.op == "<" && c >= 0 || q.op == "<=" && c > 0 {
			return false
		}
	}
	if full && len(rows) > 0 { // the rows end at their last: beyond it, another page
		c := bytes.Compare(k, rows[len(rows)-1].key)
		if !q.desc && c > 0 || q.desc && c < 0 {
			return false
		}
	}
	return true
}

// patchPages patches the cached pages of bucket for k, now e (or drops them all): called
// with c.mu held. A page is replaced, never changed: transactions use its rows after the
// lock is let go.
func (c *entryCache) patchPages(bucket int64, k []byte, e entry, drop bool) {
	var names []string
	for page := range c.pages[bucket] {
		names = append(names, page)
	}
	for _, page := range names {
		el, ok := c.items[cacheKey{bucket: bucket, page: page}]
		if !ok {
			continue // pushed out by a page patched before it
		}
		it := el.Value.(*cacheItem)
		if drop || it.query == nil {
			c.remove(el)
			continue
		}
		nu, keep := it.patched(k, e)
		switch {
		case !keep:
			c.remove(el)
		case nu != it:
			nu.size = it.size - itemRows(it.rows) + itemRows(nu.rows)
			if nu.size > c.max/8 {
				c.remove(el)
				continue
			}
			c.store(nu, true) // in its place, keeping when it was last read
		}
	}
}

// patched is the page it with key k now e: it itself when k is not in its rows' range, none
// (keep false) when it can't be told.
func (it *cacheItem) patched(k []byte, e entry) (nu *cacheItem, keep bool) {
	q := it.query
	if !q.covers(k, it.rows, it.full) {
		return it, true
	}
	rows := it.rows
	i := sort.Search(len(rows), func(i int) bool {
		c := bytes.Compare(rows[i].key, k)
		return !q.desc && c >= 0 || q.desc && c <= 0
	})
	there := i < len(rows) && bytes.Equal(rows[i].key, k)
	re := e
	switch {
	case e.child != 0:
		re = entry{found: true, child: e.child}
	case e.big || len(e.value) > pageValue:
		re = entry{found: true, big: true}
	}
	var out []row
	switch {
	case there && e.found:
		out = append(append(append(make([]row, 0, len(rows)), rows[:i]...), row{key: rows[i].key, e: re}), rows[i+1:]...)
	case there:
		out = append(append(make([]row, 0, len(rows)), rows[:i]...), rows[i+1:]...)
	case e.found:
		out = append(append(append(make([]row, 0, len(rows)+1), rows[:i]...), row{key: bytes.Clone(k), e: re}), rows[i:]...)
	default:
		return it, true
	}
	// A page may hold more rows than its query asked for: they are still every row from its
	// start to its last, and the next page, asked from its last, is the one cached. Trimmed,
	// the page would end elsewhere, and the next page with it (a listing after a new note
	// would read its pages again). Past its length and maxPage more, it is trimmed.
	full := it.full
	if len(out) > q.limit+maxPage {
		out, full = out[:q.limit], true
	}
	if full && len(out) == 0 {
		return nil, false // where the next rows begin is not known
	}
	return &cacheItem{k: it.k, rows: out, full: full, query: q}, true
}

// itemRows is what a page's rows count in the cache's size.
func itemRows(rows []row) int {
	n := 0
	for _, r := range rows {
		n += 48 + len(r.key) + len(r.e.value)
	}
	return n
}

// FeedStats tells how many times this replica's cache moved on over other replicas'
// commits key by key (followed), and how many times it was emptied instead (emptied: the
// feed could not be followed, or the cache was empty anyway).
func (db *DB) FeedStats() (followed, emptied int64) {
	c := db.cache
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nFollowed, c.nEmptied
}

// queueFeed queues the catch-up in first, if the transaction may use the cache, and returns
// the count it reads from (-1: none queued).
func (t *tx) queueFeed(first *pgx.Batch) int64 {
	if t.db.cache == nil || t.counted {
		return -1
	}
	from := t.db.cache.at()
	if from < 0 {
		return -1
	}
	first.Queue(feedQuery, from)
	return from
}
