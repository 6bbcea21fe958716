package pg

import (
	"container/list"
	"strconv"
	"sync"
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
// least recently used.
type entryCache struct {
	mu    sync.Mutex
	max   int
	count int64 // the commit what the cache holds is of; -1: none yet
	size  int
	lru   list.List // of *cacheItem, most recently used first
	items map[cacheKey]*list.Element
	pages map[int64]map[string]bool // a bucket's page keys, to patch them when it is written
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
}

// itemOverhead is about what an item costs besides its key's and value's bytes: the map's
// and the list's entries, the item itself, and the allocator's rounding of its copies.
// Measured (e2e/roundtrips' BenchmarkCacheMemory: the heap a day's reads of 10,000 notes
// leave live, with the cache and without): 340 bytes an item; 160 counted 29.8 MiB for
// 42.2 MiB held.
const itemOverhead = 340

func newEntryCache(max int) *entryCache {
	return &entryCache{max: max, count: -1, items: map[cacheKey]*list.Element{}, pages: map[int64]map[string]bool{}, gaps: map[int64]gaps{}}
}

func (c *entryCache) clear() {
	c.items = map[cacheKey]*list.Element{}
	c.pages = map[int64]map[string]bool{}
	c.lru.Init()
	c.size = 0
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
	c.lru.MoveToFront(el)
	return el.Value.(*cacheItem), true
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
	c.store(it)
}

func (c *entryCache) store(it *cacheItem) {
	if el, ok := c.items[it.k]; ok {
		c.remove(el)
	}
	c.items[it.k] = c.lru.PushFront(it)
	c.size += it.size
	if it.k.page != "" {
		p := c.pages[it.k.bucket]
		if p == nil {
			p = map[string]bool{}
			c.pages[it.k.bucket] = p
		}
		p[it.k.page] = true
	}
	for c.size > c.max {
		c.remove(c.lru.Back())
	}
}

func (c *entryCache) remove(el *list.Element) {
	it := c.lru.Remove(el).(*cacheItem)
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
