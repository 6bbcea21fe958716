package pg

import (
	"bytes"
	"sort"
)

// A gap is a range of one bucket's keys in which the store holds none, at the cache's count:
// the keys strictly between lo and hi, two keys next to each other in the bucket (or its
// ends, inf). A Get that misses reads, with its key, the keys before and after it, and a
// cursor's Seek the key before where it lands: what lies between is a gap. A Get of a key in
// a gap then finds it absent, and a Seek into one lands on hi, with no round trip: a new
// title, a word the search index hasn't, links to a document not there yet, once anything
// has read near them. A commit of this replica that puts a key into a gap splits it in two,
// and one that deletes a key joins the gaps on either side of it (a gap's ends are always
// keys of the store, so gaps never overlap); a commit of another replica does the same
// when the change feed brings its keys (feed.go), and empties the cache, gaps and all, when
// the feed can't.
type gap struct {
	lo, hi bound // exclusive: inf, or a key (incl false)
}

// holds tells whether k is strictly inside g.
func (g gap) holds(k []byte) bool {
	return (g.lo.inf || bytes.Compare(k, g.lo.key) > 0) && (g.hi.inf || bytes.Compare(k, g.hi.key) < 0)
}

func (g gap) size() int { return gapOverhead + len(g.lo.key) + len(g.hi.key) }

// maxGaps is the most gaps one bucket keeps: past it, its gaps are dropped and learnt again.
// A gap learnt, or split by a commit, goes into a sorted slice (a copy of up to 4,096 gaps of
// 64 bytes, some microseconds), and a flood of misses can't make that copy grow.
const maxGaps = 4096

// gapOverhead is about what a gap costs besides its two keys: its place in the bucket's
// slice, two slices' headers.
const gapOverhead = 64

// gaps are one bucket's, sorted and apart (two gaps of one bucket at one count never
// overlap: each lies between two keys next to each other).
type gaps []gap

// at is the gap that holds k.
func (gs gaps) at(k []byte) (gap, bool) {
	// The last gap whose lo is below k: the only one that may hold it.
	i := sort.Search(len(gs), func(i int) bool { return !gs[i].lo.inf && bytes.Compare(gs[i].lo.key, k) >= 0 }) - 1
	if i >= 0 && gs[i].holds(k) {
		return gs[i], true
	}
	return gap{}, false
}

// find is where the gap whose lo is lo is, or would go (gaps from the bucket's start first).
func (gs gaps) find(lo bound) (int, bool) {
	if lo.inf {
		return 0, len(gs) > 0 && gs[0].lo.inf
	}
	i := sort.Search(len(gs), func(i int) bool { return !gs[i].lo.inf && bytes.Compare(gs[i].lo.key, lo.key) >= 0 })
	return i, i < len(gs) && bytes.Equal(gs[i].lo.key, lo.key)
}

// learnGap keeps g, read by a transaction at count n, if the cache is at n. The gaps have a
// budget of their own, an eighth of the cache's: past it they are all dropped, and learnt
// again.
func (c *entryCache) learnGap(n int64, bucket int64, g gap) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n != c.count {
		return
	}
	gs := c.gaps[bucket]
	i, ok := gs.find(g.lo)
	if ok {
		return // known
	}
	// Gaps between keys next to each other can't overlap; if these did, something read a
	// store unlike the one the cache holds: forget the bucket's gaps rather than trust them.
	if i > 0 && !gs[i-1].hi.inf && (g.lo.inf || bytes.Compare(gs[i-1].hi.key, g.lo.key) > 0) ||
		i < len(gs) && (g.hi.inf || bytes.Compare(gs[i].lo.key, g.hi.key) < 0) {
		c.dropGaps(bucket)
		return
	}
	switch {
	case c.gapBytes+g.size() > c.max/8:
		c.gaps, c.gapBytes = map[int64]gaps{}, 0
		gs, i = nil, 0
	case len(gs) >= maxGaps: // each one kept costs a copy of the slice's tail: bounded
		c.dropGaps(bucket)
		gs, i = nil, 0
	}
	c.gaps[bucket] = append(gs[:i], append(gaps{g}, gs[i:]...)...)
	c.gapBytes += g.size()
}

// dropGaps forgets the gaps of bucket: called with c.mu held.
func (c *entryCache) dropGaps(bucket int64) {
	for _, g := range c.gaps[bucket] {
		c.gapBytes -= g.size()
	}
	delete(c.gaps, bucket)
}

// maxSplits is the most gaps of one bucket one commit splits: past it (a commit of many new
// keys, an import), the bucket's gaps are dropped, so that a commit's cost in the cache, under
// its lock, stays that of its writes.
const maxSplits = 64

// filled splits the gap that holds k, a key this replica's commit put, and tells whether
// there was one: called with c.mu held.
func (c *entryCache) filled(bucket int64, k []byte) bool {
	gs := c.gaps[bucket]
	g, ok := gs.at(k)
	if !ok {
		return false
	}
	if len(gs) >= maxGaps || c.gapBytes+g.size()+len(k) > c.max/8 {
		c.dropGaps(bucket)
		return true
	}
	i, _ := gs.find(g.lo)
	key := bytes.Clone(k)
	below, above := gap{lo: g.lo, hi: bound{key: key}}, gap{lo: bound{key: key}, hi: g.hi}
	gs = append(gs[:i], append(gaps{below, above}, gs[i+1:]...)...)
	c.gaps[bucket] = gs
	c.gapBytes += below.size() + above.size() - g.size()
	return true
}

// emptied keeps the gaps true after this replica's commit deleted k: the gaps on either side
// of it become one (neither holds a key, nor does k now), and one alone is dropped, so that
// a gap's ends are always keys of the store and two gaps never overlap. Called with c.mu held.
func (c *entryCache) emptied(bucket int64, k []byte) {
	gs := c.gaps[bucket]
	i, starts := gs.find(bound{key: k}) // the gap from k; the one before it may end at k
	ends := i > 0 && !gs[i-1].hi.inf && bytes.Equal(gs[i-1].hi.key, k)
	switch {
	case starts && ends:
		merged := gap{lo: gs[i-1].lo, hi: gs[i].hi}
		c.gapBytes += merged.size() - gs[i-1].size() - gs[i].size()
		gs[i-1] = merged
		gs = append(gs[:i], gs[i+1:]...)
	case starts:
		c.gapBytes -= gs[i].size()
		gs = append(gs[:i], gs[i+1:]...)
	case ends:
		c.gapBytes -= gs[i-1].size()
		gs = append(gs[:i-1], gs[i:]...)
	default:
		return
	}
	c.gaps[bucket] = gs
}

// inGap tells whether k lies in a gap of bucket the transaction may use (see gapFrom).
func (t *tx) inGap(bucket int64, k []byte) bool {
	_, ok := t.gapFrom(bucket, bound{key: k, incl: true})
	return ok
}

// gapFrom is the gap of bucket in which the range starting at from begins, if the
// transaction may use the cache: the one that holds from's key, or, from's key
// excluded, the one that starts at it.
//
// When the cache has one and the transaction has not begun, it begins it, or assumes the
// cache's count, as cached does.
func (t *tx) gapFrom(bucket int64, from bound) (gap, bool) {
	if t.db.cache == nil || t.spills > 0 {
		return gap{}, false
	}
	k := from.key
	if !t.begun && !t.counted && !t.assumed {
		if !t.db.cache.hasGapFrom(bucket, from) {
			return gap{}, false
		}
		if !t.assume() {
			t.begin()
		}
	}
	c := t.db.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.snap != c.count {
		return gap{}, false
	}
	return c.gaps[bucket].from(k, from.incl)
}

// hasGapFrom tells whether the cache holds the gap gapFrom looks for, at whatever count
// (see has).
func (c *entryCache) hasGapFrom(bucket int64, from bound) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.gaps[bucket].from(from.key, from.incl)
	return ok
}

// from is the gap that holds k, or, k excluded (incl false), the one that starts at k.
func (gs gaps) from(k []byte, incl bool) (gap, bool) {
	if g, ok := gs.at(k); ok {
		return g, true
	}
	if !incl {
		if i, ok := gs.find(bound{key: k}); ok {
			return gs[i], true
		}
	}
	return gap{}, false
}

// learn keeps what the transaction read of the store around a key: the gap between two keys
// next to each other (lo, hi: nil for the bucket's end), unless it may not fill the cache (as
// keep).
func (t *tx) learn(bucket int64, lo, hi []byte) {
	if t.db.cache == nil || t.spills > 0 || !t.begun && !t.counted {
		return
	}
	g := gap{lo: bound{key: bytes.Clone(lo), inf: lo == nil}, hi: bound{key: bytes.Clone(hi), inf: hi == nil}}
	t.db.cache.learnGap(t.snap, bucket, g)
}
