package docstore

import (
	"github.com/compass-mcp/compass-mcp/kv"
)

// Reading ahead: on a store where every key read is a round trip (PostgreSQL), a loop that
// reads many keys it knows in advance first tells the store all of them (kv.Prefetch), so
// that they cost one round trip, not one each. On bbolt these do nothing, not even build
// the keys: the answers are the same either way.

// prefetches tells whether the store reads ahead at all.
func (b *buckets) prefetches() bool {
	_, ok := b.docs.(kv.Prefetcher)
	return ok
}

// prefetchLatest reads ahead the latest versions of docs (version(d.ID, d.Version): where
// the versions are, and the latest, which is kept whole).
func (b *buckets) prefetchLatest(docs []Document) {
	if !b.prefetches() {
		return
	}
	ks := make([][]byte, 0, 2*len(docs))
	for _, d := range docs {
		vk := versionKeys{prefix: []byte(d.ID)}
		ks = append(ks, vk.prefix, vk.key(d.Version))
	}
	kv.Prefetch(b.versions, ks)
}

// prefetchVersion reads ahead where document id's versions are and its version n
// (versionBucket, then record).
func (b *buckets) prefetchVersion(id string, n int) {
	if !b.prefetches() {
		return
	}
	vk := versionKeys{prefix: []byte(id)}
	kv.Prefetch(b.versions, [][]byte{vk.prefix, vk.key(n)})
}

// prefetchRecords reads ahead versions lo to hi of vb (record).
func (b *buckets) prefetchRecords(vb versionKeys, lo, hi int) {
	if !b.prefetches() || lo > hi {
		return
	}
	ks := make([][]byte, 0, hi-lo+1)
	for n := lo; n <= hi; n++ {
		ks = append(ks, vb.key(n))
	}
	kv.Prefetch(vb.b, ks)
}

// prefetchChain reads ahead the rest of a chain of deltas from version n on: up to the
// next version kept whole (putVersion); keys past the latest are simply not found.
func (b *buckets) prefetchChain(vb versionKeys, n int) {
	b.prefetchRecords(vb, n, (n+snapshotEvery-1)/snapshotEvery*snapshotEvery)
}
