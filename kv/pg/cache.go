package pg

import (
	"container/list"
	"strconv"
	"sync"
	"time"
)

// entryCache keeps, for every transaction of one replica, what transactions read from the
// database: entries by bucket and key (a value, a nested bucket's number, or no such key)
// and the pages of rows cursors fetched. Everything in it is the store as it was at one
// commit, counted by kv_counter (every write transaction adds one to it in its commit); a
// transaction reads the counter in its first round trip and uses the cache only while the
// cache holds that very count, so what it reads from the cache is what its snapshot holds.
//
//   - A transaction that finds the counter ahead of the cache (another replica wrote) reads,
//     in the same round trip, the change feed from the cache's count to its own (feed.go),
//     and moves the cache on key by key: entries replaced, pages patched, gaps split or
//     joined. What the feed can't tell (pruned, a gap, too big) empties the cache instead.
//   - A write transaction of this replica that committed count n moves a cache at n-1 to n,
//     with its writes in it (the pages of the buckets it wrote patched the same way): the
//     cache of the replica that writes stays warm.
//   - A transaction whose snapshot is older than the cache (one that began before a commit
//     of this replica) neither reads nor fills it.
//
// It holds at most max bytes (keys, values and a fixed overhead an item), dropping the
// least recently used, and an entry unread for cacheIdle. What commits wrote (this
// replica's, and other replicas' by the feed) goes in as well, so that a call reading what
// the one before it wrote finds it, but on probation: in a list of its own of at most
// max/freshShare bytes, the oldest dropped first, until transactions read it twice. Most
// writes are of entries no call reads again, or only once (a version's record, superseded
// by the next; the search index's postings of a changed line; a session's last-used time).
// When they went in with the entries read, and stayed until the cache was full, two writing
// replicas filled it to its budget in minutes, the heap with it (from 17 to 76 MiB live,
// 90 to 390 MiB before a collection at GOGC=400), and every call cost more as it grew
// (docs/POSTGRES.md, "Steady through the day").
type entryCache struct {
	mu    sync.Mutex
	max   int
	idle  time.Duration // cacheIdle
	now   func() int64  // Unix nanoseconds
	count int64         // the commit what the cache holds is of; -1: none yet
	size  int           // of both lists
	lru   list.List     // of *cacheItem read by a transaction, most recently used first
	// fresh is of the *cacheItem written by a commit and not read since, newest first;
	// freshSize their bytes, at most max/freshShare.
	fresh     list.List
	freshSize int
	items     map[cacheKey]*list.Element
	pages     map[int64]map[string]bool // a bucket's page keys, to patch them when it is written
	// gaps are the ranges of each bucket known to hold no key (gaps.go), in a budget of
	// their own.
	gaps     map[int64]gaps
	gapBytes int
	// how many times the cache moved on over other replicas' commits by the feed, and was
	// emptied instead (feed.go)
	nFollowed, nEmptied int64
}

// cacheKey is an entry (page == "") or a page of rows fetched by a cursor (page says which).
type cacheKey struct {
	bucket int64
	key    string
	page   string
}

type cacheItem struct {
	k     cacheKey
	e     entry
	rows  []row
	full  bool
	query *pageOf // a page's: what its rows are (nil: none, or not known)
	size  int
	// fresh: in entryCache.fresh, written and read at most once since (readOnce); used:
	// when a transaction last read it, in Unix nanoseconds. All three changed under the
	// cache's lock only.
	fresh, readOnce bool
	used            int64
}

// freshShare is the part of the cache's budget that entries written and not yet read may
// take: 1/16, 4 MiB of DefaultCache, some thousands of entries, many calls' writes.
const freshShare = 16

// itemOverhead is about what an item costs besides its key's and value's bytes: the map's
// and the list's entries, the item itself, and the allocator's rounding of its copies.
// Measured (e2e/roundtrips' BenchmarkCacheMemory: the heap a day's reads of 10,000 notes
// leave live, with the cache and without): 340 bytes an item; 160 counted 29.8 MiB for
// 42.2 MiB held.
const itemOverhead = 340

func newEntryCache(max int) *entryCache {
	return &entryCache{max: max, idle: cacheIdle, now: func() int64 { return time.Now().UnixNano() }, count: -1, items: map[cacheKey]*list.Element{}, pages: map[int64]map[string]bool{}, gaps: map[int64]gaps{}}
}

// cacheIdle is how long an entry the cache holds as read stays unread before it goes: the
// entries a team's calls use are read again within seconds (a document being worked on,
// its latest version, the search index's statistics), while a version superseded, a
// document no one reads now, or the postings of a word once searched would otherwise stay
// until the cache is full, the heap the cache's budget's worth larger, and every call
// slower (docs/POSTGRES.md, "Steady through the day"). A document unread for two minutes costs its
// next read the round trips of a cold one (at most 8, TestRoundTripsCold).
const cacheIdle = 2 * time.Minute

func (c *entryCache) clear() {
	c.items = map[cacheKey]*list.Element{}
	c.pages = map[int64]map[string]bool{}
	c.lru.Init()
	c.fresh.Init()
	c.size, c.freshSize = 0, 0
	c.gaps, c.gapBytes = map[int64]gaps{}, 0
}

func (c *entryCache) get(n int64, k cacheKey) (*cacheItem, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n != c.count {
		return nil, false
	}
	el, ok := c.items[k]
	if !ok {
		return nil, false
	}
	it := el.Value.(*cacheItem)
	if it.fresh && !it.readOnce { // read once: kept on probation, as the newest
		it.readOnce = true
		c.fresh.MoveToFront(el)
		return it, true
	}
	it.used = c.now()
	if it.fresh { // read again: off probation
		c.fresh.Remove(el)
		c.freshSize -= it.size
		it.fresh = false
		c.items[k] = c.lru.PushFront(it)
		return it, true
	}
	c.lru.MoveToFront(el)
	return it, true
}

// at is the count the cache is at (-1: none yet).
func (c *entryCache) at() int64 {
	if c == nil {
		return -1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count
}

// has tells whether the cache holds k at all, at whatever count: worth beginning a
// transaction with nothing but the counter to find out whether it may be used.
func (c *entryCache) has(k cacheKey) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.items[k]
	return ok
}

// put keeps it, read by a transaction at count n, if the cache is at n.
func (c *entryCache) put(n int64, it *cacheItem) {
	if c == nil {
		return
	}
	it.size = itemOverhead + len(it.k.key) + len(it.k.page) + len(it.e.value) + itemRows(it.rows)
	if it.size > c.max/8 {
		return // one item must not push out most of the rest
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n != c.count {
		return
	}
	c.store(it, false)
}

// store keeps it, read by a transaction (written false) or written by a commit: a written
// entry the cache doesn't hold goes on probation (entryCache.fresh); one it holds as read
// takes the place of the one it replaces, with its time of last use, so that an entry
// written often and no longer read still goes when idle.
func (c *entryCache) store(it *cacheItem, written bool) {
	now := c.now()
	it.fresh, it.readOnce, it.used = written, false, now
	l := &c.lru
	var at *list.Element // where it goes: before at, or at the front (nil)
	if el, ok := c.items[it.k]; ok {
		if old := el.Value.(*cacheItem); written && !old.fresh {
			it.fresh, it.used, at = false, old.used, el
		}
		if at == nil {
			c.remove(el)
		}
	}
	if it.fresh && it.size > c.max/freshShare/4 {
		return // one write must not push out most of the others on probation
	}
	if it.fresh {
		l = &c.fresh
		c.freshSize += it.size
	}
	if at != nil {
		el := l.InsertBefore(it, at)
		c.remove(at)
		c.items[it.k] = el
	} else {
		c.items[it.k] = l.PushFront(it)
	}
	c.size += it.size
	if it.k.page != "" {
		p := c.pages[it.k.bucket]
		if p == nil {
			p = map[string]bool{}
			c.pages[it.k.bucket] = p
		}
		p[it.k.page] = true
	}
	for c.freshSize > c.max/freshShare {
		c.remove(c.fresh.Back())
	}
	for c.size > c.max {
		if back := c.lru.Back(); back != nil {
			c.remove(back)
		} else {
			c.remove(c.fresh.Back())
		}
	}
	// The least recently read go once idle: at most a few for each item kept, so that no
	// store holds the lock long after a quiet hour, and each item goes once.
	for range 4 {
		back := c.lru.Back()
		if back == nil || now-back.Value.(*cacheItem).used <= c.idle.Nanoseconds() {
			break
		}
		c.remove(back)
	}
}

func (c *entryCache) remove(el *list.Element) {
	it := el.Value.(*cacheItem)
	if it.fresh {
		c.fresh.Remove(el)
		c.freshSize -= it.size
	} else {
		c.lru.Remove(el)
	}
	delete(c.items, it.k)
	c.size -= it.size
	if it.k.page != "" {
		if p := c.pages[it.k.bucket]; p != nil {
			delete(p, it.k.page)
			if len(p) == 0 {
				delete(c.pages, it.k.bucket)
			}
		}
	}
}

// committed tells the cache a transaction of this replica committed count n with writes
// (nil: it can't tell them all, as after a spill; the cache is then emptied). A cache at
// n-1 takes them and moves to n; any other is left for the next transaction to move on.
func (c *entryCache) committed(n int64, writes func(put func(bucket int64, key string, e entry))) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.count != n-1 {
		return
	}
	c.count = n
	if writes == nil {
		c.clear()
		return
	}
	var ch []change
	writes(func(bucket int64, key string, e entry) {
		ch = append(ch, change{n: n, bucket: bucket, key: key, e: e})
	})
	c.apply(ch)
}

// stats is the cache's bytes and items.
func (c *entryCache) stats() (bytes, items int) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, gs := range c.gaps {
		n += len(gs)
	}
	return c.size + c.gapBytes, len(c.items) + n
}

// pageKey names a page a cursor fetches.
func pageKey(op, order string, key []byte, limit int) string {
	if key == nil {
		return op + order + "/" + strconv.Itoa(limit) // from either end
	}
	return op + order + "/" + strconv.Itoa(limit) + "/k" + string(key)
}
