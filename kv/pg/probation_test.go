package pg

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// TestCacheWritesOnProbation: entries commits write go into the cache on probation, in a
// budget of their own, so that a stream of writes no call reads again pushes out neither
// what calls read nor the cache's budget's worth of heap; a written entry read after its
// commit is kept as read. No database: the cache alone, as commits and reads use it.
func TestCacheWritesOnProbation(t *testing.T) {
	const max = 1 << 20
	c := newEntryCache(max)
	c.count = 0
	value := bytes.Repeat([]byte("v"), 100)
	read := func(n int64, key string) (*cacheItem, bool) {
		return c.get(n, cacheKey{bucket: 1, key: key})
	}
	for i := range 100 {
		c.put(0, &cacheItem{k: cacheKey{bucket: 1, key: fmt.Sprintf("read %d", i)}, e: entry{found: true, value: value}})
	}
	n := int64(0)
	commit := func(key string, v []byte) {
		n++
		c.committed(n, func(put func(bucket int64, key string, e entry)) {
			put(1, key, entry{found: true, value: v})
		})
		if c.count != n {
			t.Fatalf("the cache is at %d after commit %d", c.count, n)
		}
	}
	// 10,000 writes of keys no one reads: 4 MiB at the items' size, four times the budget.
	for i := range 10_000 {
		commit(fmt.Sprintf("written %d", i), value)
		if c.freshSize > max/freshShare || c.size > max {
			t.Fatalf("after %d writes: %d bytes on probation (at most %d), %d in all (at most %d)", i+1, c.freshSize, max/freshShare, c.size, max)
		}
	}
	for i := range 100 {
		if _, ok := read(n, fmt.Sprintf("read %d", i)); !ok {
			t.Fatalf("entry %d read before the writes was pushed out by them", i)
		}
	}
	if _, ok := read(n, "written 9999"); !ok {
		t.Fatal("the last write is not in the cache: a call reading what the one before wrote would ask the database")
	}
	if _, ok := read(n, "written 0"); ok {
		t.Fatal("the first of 10,000 writes is still in the cache: probation keeps every write")
	}
	// Read once after its commit, a written entry stays on probation (a version's record is
	// read by the call after its commit, then superseded); read twice, it is off it, and
	// more writes keep it.
	commit("once", value)
	if it, ok := read(n, "once"); !ok || !it.fresh {
		t.Fatalf("a write read once after its commit: held %v, on probation %v", ok, ok && it.fresh)
	}
	commit("kept", value)
	read(n, "kept")
	if it, ok := read(n, "kept"); !ok || it.fresh {
		t.Fatalf("a write read twice after its commit: held %v, still on probation %v", ok, ok && it.fresh)
	}
	// A write of an entry held as read replaces it where it is.
	commit("read 7", []byte("new"))
	for i := range 10_000 {
		commit(fmt.Sprintf("more %d", i), value)
	}
	if it, ok := read(n, "kept"); !ok || it.fresh {
		t.Fatalf("an entry read twice after its write was pushed out by 10,000 writes (held %v)", ok)
	}
	if _, ok := read(n, "once"); ok {
		t.Fatal("an entry read once after its write outlived 10,000 writes on probation")
	}
	if it, ok := read(n, "read 7"); !ok || string(it.e.value) != "new" || it.fresh {
		t.Fatalf("a read entry written since: held %v, value %q", ok, it.e.value)
	}
	// An entry written larger than a quarter of the probation's budget isn't kept.
	commit("big", bytes.Repeat([]byte("b"), max/freshShare/2))
	if _, ok := read(n, "big"); ok {
		t.Fatal("a write of half the probation's budget was kept, pushing out the others")
	}
	if _, ok := read(n, "more 9999"); !ok {
		t.Fatal("a big write pushed out the writes on probation")
	}
	// Emptied, the cache holds nothing on probation either.
	c.clear()
	if c.freshSize != 0 || c.fresh.Len() != 0 || c.size != 0 {
		t.Fatalf("cleared: %d bytes, %d items on probation, %d in all", c.freshSize, c.fresh.Len(), c.size)
	}
}

// TestCacheIdleEntriesGo: an entry the cache holds as read goes once unread for cacheIdle,
// as more items are kept, even when commits write it meanwhile; one read since stays.
func TestCacheIdleEntriesGo(t *testing.T) {
	c := newEntryCache(1 << 20)
	c.count = 0
	clock := int64(0)
	c.now = func() int64 { return clock }
	key := func(s string) cacheKey { return cacheKey{bucket: 1, key: s} }
	for i := range 100 {
		c.put(0, &cacheItem{k: key(fmt.Sprintf("old %d", i)), e: entry{found: true, value: []byte("v")}})
	}
	clock += (cacheIdle / 2).Nanoseconds()
	if _, ok := c.get(0, key("old 7")); !ok {
		t.Fatal("an entry read half its idle time ago is gone")
	}
	// Written (a commit) but not read: it keeps its place and its time of last read.
	c.committed(1, func(put func(bucket int64, key string, e entry)) {
		put(1, "old 8", entry{found: true, value: []byte("written")})
	})
	if it, ok := c.items[key("old 8")]; !ok || it.Value.(*cacheItem).fresh {
		t.Fatal("a write of an entry held as read did not replace it where it was")
	}
	clock += (cacheIdle/2 + time.Second).Nanoseconds()
	for i := range 100 {
		c.put(1, &cacheItem{k: key(fmt.Sprintf("new %d", i)), e: entry{found: true, value: []byte("v")}})
	}
	for i := range 100 {
		_, held := c.items[key(fmt.Sprintf("old %d", i))]
		if want := i == 7; held != want {
			t.Errorf("entry %d, last read %v ago: held %v, want %v", i, time.Duration(clock), held, want)
		}
	}
	if _, ok := c.get(1, key("new 99")); !ok {
		t.Fatal("an entry just read is gone")
	}
}
