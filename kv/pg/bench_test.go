package pg_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// The same benchmarks on bbolt (a file in a temp dir, fsync on) and on PostgreSQL (a schema
// of its own in $COMPASS_TEST_DATA), side by side:
//
//	COMPASS_TEST_DATA=postgres://compass:compass@127.0.0.1:5432/compass \
//	  go test -run '^$' -bench 'Get|Put|Scan' -benchmem ./kv/pg
//
// On PostgreSQL, fill runs ANALYZE, as autovacuum soon would on a live database: without
// statistics the planner sorts a bitmap scan of the whole bucket for every page of a
// cursor (the 10,000-key scan then takes 33 ms instead of about 10).
func backends(b *testing.B, fn func(b *testing.B, db kv.DB)) {
	b.Run("bolt", func(b *testing.B) { fn(b, kvtest.OpenBolt(b)) })
	b.Run("pg", func(b *testing.B) { fn(b, open(b, kvtest.URL(b))) })
}

func fill(b *testing.B, db kv.DB, n, size int) {
	err := db.Update(context.Background(), func(tx kv.Tx) error {
		bk, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		for i := range n {
			if err := bk.Put(fmt.Appendf(nil, "%08d", i), bytes.Repeat([]byte{'v'}, size)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if p, ok := db.(*pg.DB); ok {
		if err := p.Analyze(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet is one read transaction reading one key of a nested bucket.
func BenchmarkGet(b *testing.B) {
	backends(b, func(b *testing.B, db kv.DB) {
		fill(b, db, 1000, 100)
		i := 0
		for b.Loop() {
			err := db.View(context.Background(), func(tx kv.Tx) error {
				if tx.Bucket([]byte("b")).Get(fmt.Appendf(nil, "%08d", i%1000)) == nil {
					b.Fatal("missing")
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkPut100K is one write transaction putting a new 100 KB value, committed.
func BenchmarkPut100K(b *testing.B) {
	backends(b, func(b *testing.B, db kv.DB) {
		fill(b, db, 1, 1)
		v := bytes.Repeat([]byte("0123456789"), 10<<10)
		i := 0
		for b.Loop() {
			err := db.Update(context.Background(), func(tx kv.Tx) error {
				return tx.Bucket([]byte("b")).Put(fmt.Appendf(nil, "new %08d", i), v)
			})
			if err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkScan10K walks 10,000 keys (100-byte values) with a cursor, in one read
// transaction.
func BenchmarkScan10K(b *testing.B) {
	backends(b, func(b *testing.B, db kv.DB) {
		fill(b, db, 10000, 100)
		for b.Loop() {
			n := 0
			err := db.View(context.Background(), func(tx kv.Tx) error {
				c := tx.Bucket([]byte("b")).Cursor()
				for k, _ := c.First(); k != nil; k, _ = c.Next() {
					n++
				}
				return nil
			})
			if err != nil || n != 10000 {
				b.Fatal(n, err)
			}
		}
	})
}

// BenchmarkWriters is W writers each reading a value and writing it back longer (an
// append), all to one key or each to its own, under the advisory lock. One op is one
// committed Update. (The package doc keeps what SERIALIZABLE with retries measured when it
// was a mode.)
//
//	COMPASS_TEST_DATA=… go test -run '^$' -bench Writers -benchtime 400x ./kv/pg
func BenchmarkWriters(b *testing.B) {
	for _, mode := range []string{"lock"} {
		for _, keys := range []string{"same", "different"} {
			for _, w := range []int{2, 4, 8, 16} {
				b.Run(fmt.Sprintf("%s/%s/%d", mode, keys, w), func(b *testing.B) {
					db := open(b, kvtest.URL(b)+"&pool_max_conns=16")
					fill(b, db, 1, 1)
					var runs atomic.Int64
					var left atomic.Int64
					left.Store(int64(b.N))
					b.ResetTimer()
					var wg sync.WaitGroup
					for g := range w {
						key := []byte("same")
						if keys == "different" {
							key = []byte("key " + strconv.Itoa(g))
						}
						wg.Go(func() {
							for left.Add(-1) >= 0 {
								err := db.Update(context.Background(), func(tx kv.Tx) error {
									runs.Add(1)
									bk := tx.Bucket([]byte("b"))
									v := append(bytes.Clone(bk.Get(key)), "appended "...)
									return bk.Put(key, v[max(0, len(v)-1000):])
								})
								if err != nil {
									b.Error(err)
									return
								}
							}
						})
					}
					wg.Wait()
					b.ReportMetric(float64(runs.Load())/float64(b.N), "runs/op")
				})
			}
		}
	}
}

// BenchmarkBigUpdate is one write transaction putting 100,000 new 100-byte values in
// order (an import, a copy), committed.
func BenchmarkBigUpdate(b *testing.B) {
	backends(b, func(b *testing.B, db kv.DB) {
		v := bytes.Repeat([]byte("v"), 100)
		round := 0
		for b.Loop() {
			err := db.Update(context.Background(), func(tx kv.Tx) error {
				bk, err := tx.CreateBucketIfNotExists(fmt.Appendf(nil, "round %d", round))
				if err != nil {
					return err
				}
				for i := range 100000 {
					if err := bk.Put(fmt.Appendf(nil, "%08d", i), v); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			round++
		}
	})
}
