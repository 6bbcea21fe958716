package pg

import (
	"math"

	"github.com/compass-mcp/compass-mcp/kv"
)

// GetAll reads keys as Get does, those the transaction doesn't know yet in one query
// (prefetch).
func (b *bucket) GetAll(keys [][]byte) [][]byte {
	b.prefetch(keys)
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = b.Get(k)
	}
	return out
}

// prefetch reads, in one query, those of keys the transaction doesn't know yet, and keeps
// what it finds (and what it doesn't: not found) with what it has read, as lookup would
// have one key at a time: the Gets of those keys that follow ask the database nothing.
func (b *bucket) prefetch(keys [][]byte) {
	t := b.t
	s := b.state()
	if s.fresh {
		return // nothing of it in the database: lookup knows without asking
	}
	upTo := t.beginGen
	if !t.begun && !t.counted {
		upTo = math.MaxInt64 // as lookup: the snapshot, taken later, holds every bucket known now
	}
	var ask [][]byte
	asked := map[string]bool{}
	for _, k := range keys {
		if _, ok := s.over[string(k)]; ok {
			continue
		}
		if _, ok := s.read[string(k)]; ok || asked[string(k)] {
			continue
		}
		if id, ok := t.db.buckets.get(b.id, k, upTo); ok {
			s.read[string(k)] = entry{found: true, child: id}
			continue
		}
		if it, ok := t.cached(cacheKey{bucket: b.id, key: string(k)}); ok {
			s.read[string(k)] = it.e
			continue
		}
		if t.inGap(b.id, k) {
			s.read[string(k)] = entry{} // in a gap: none there
			continue
		}
		asked[string(k)] = true
		ask = append(ask, k)
	}
	if len(ask) == 0 {
		return
	}
	rows, done := t.query("SELECT key, value, child FROM kv_entries WHERE bucket = $1 AND key = ANY($2::bytea[])", b.id, ask)
	defer done()
	for rows.Next() {
		var k, value []byte
		var child *int64
		if err := rows.Scan(&k, &value, &child); err != nil {
			kv.Fail(t.db.wrap(err))
		}
		s.read[string(k)] = t.found(b.id, k, value, child)
		delete(asked, string(k))
	}
	if err := rows.Err(); err != nil {
		kv.Fail(t.db.wrap(err))
	}
	for k := range asked {
		s.read[k] = entry{} // not found
	}
	for _, k := range ask {
		t.keep(&cacheItem{k: cacheKey{bucket: b.id, key: string(k)}, e: s.read[string(k)]})
	}
}
