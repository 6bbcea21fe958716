package docstore

import (
	"fmt"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/search"
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

// prefetchDocs reads ahead the records of documents ids (doc).
func (b *buckets) prefetchDocs(ids []string) {
	if !b.prefetches() {
		return
	}
	ks := make([][]byte, len(ids))
	for i, id := range ids {
		ks[i] = []byte(id)
	}
	kv.Prefetch(b.docs, ks)
}

// prefetchItems reads ahead the keys of the index's items nums (x.Key), then what reading
// them reads: their records (doc) when records, else where their versions are
// (versionBucket).
func (b *buckets) prefetchItems(x search.Index, nums []uint32, records bool) {
	if !b.prefetches() {
		return
	}
	x.PrefetchKeys(nums)
	ids := make([]string, len(nums))
	for i, num := range nums {
		ids[i] = x.Key(num)
	}
	if records {
		b.prefetchDocs(ids)
		return
	}
	ks := make([][]byte, len(ids))
	for i, id := range ids {
		ks[i] = []byte(id)
	}
	kv.Prefetch(b.versions, ks)
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

// listed reads the records of the documents a listing index names (in one round trip on
// PostgreSQL), in their order; a name without a record is an error.
func (b *buckets) listed(ids []string) ([]Document, error) {
	b.prefetchDocs(ids)
	docs := make([]Document, 0, len(ids))
	for _, id := range ids {
		d, ok, err := b.doc(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("listing index names document %s, which has no record", id)
		}
		docs = append(docs, d)
	}
	return docs, nil
}
