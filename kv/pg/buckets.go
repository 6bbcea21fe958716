package pg

import "sync"

// bucketCache keeps the numbers of buckets seen committed, by parent and name, for every
// transaction of the store: opening a nested bucket then costs no round trip. a number once
// committed stays right (kv's DeleteBucket is used only for names never used again, see
// bucket.DeleteBucket); but a transaction whose snapshot is older
// than the bucket must not see it, so each number carries the generation it was learnt in,
// and a transaction that has begun uses only those learnt before it began.
//
// A transaction that began before a bucket was deleted still sees it in its snapshot: what
// it reads is not put in the cache (dropGen), or the bucket would be back for everyone.
type bucketCache struct {
	mu      sync.RWMutex
	gen     int64
	dropGen int64 // the generation of the last drop
	ids     map[bucketKey]cachedBucket
}

type bucketKey struct {
	parent int64
	name   string
}

type cachedBucket struct{ id, gen int64 }

// maxCachedBuckets bounds the cache (about 100 bytes a bucket): when full, it starts afresh.
const maxCachedBuckets = 1 << 17

// generation is the generation of the numbers learnt so far.
func (c *bucketCache) generation() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// get returns the number of bucket name of parent, if it was learnt by generation upTo.
func (c *bucketCache) get(parent int64, name []byte, upTo int64) (int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	b, ok := c.ids[bucketKey{parent, string(name)}]
	if !ok || b.gen > upTo {
		return 0, false
	}
	return b.id, true
}

// put records a committed bucket's number.
func (c *bucketCache) put(parent int64, name []byte, id int64) { c.seen(parent, name, id, -1) }

// seen records a bucket's number read by a transaction that began at generation since (-1:
// one that has just committed it), unless a bucket was dropped after that: the
// transaction's snapshot may still hold it.
func (c *bucketCache) seen(parent int64, name []byte, id, since int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if since >= 0 && since < c.dropGen {
		return
	}
	if c.ids == nil || len(c.ids) >= maxCachedBuckets {
		c.ids = map[bucketKey]cachedBucket{}
	}
	c.gen++
	c.ids[bucketKey{parent, string(name)}] = cachedBucket{id, c.gen}
}

// drop forgets a deleted bucket's number.
func (c *bucketCache) drop(parent int64, name []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.ids, bucketKey{parent, string(name)})
	c.gen++
	c.dropGen = c.gen
}
