package roundtrips

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/pgproxy"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// BenchmarkLatency makes each call of the round-trip test on a bbolt file (as serve opens
// it) and on PostgreSQL through a proxy that holds every round trip 1 ms, and reports each
// call's median (the table in docs/PERFORMANCE.md):
//
//	COMPASS_TEST_POSTGRES=postgres://… go test -run '^$' -bench Latency -benchtime 30x ./e2e/roundtrips
func BenchmarkLatency(b *testing.B) {
	file, err := bolt.OpenFile(filepath.Join(b.TempDir(), "bench.db"), bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { file.Close() })
	proxy, via := pgproxy.In(b, kvtest.URL(b), time.Millisecond)
	pdb, err := pg.Open(context.Background(), via)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pdb.Close() })
	stores := []struct {
		name string
		db   kv.DB
	}{{"bbolt", file}, {"pg-1ms", pdb}}
	var all [][]call
	for _, s := range stores {
		calls, _ := setup(b, s.db)
		all = append(all, calls)
	}
	var table strings.Builder
	table.WriteString("\n| call | bbolt | PostgreSQL 1 ms away |\n|---|---|---|\n")
	for i, c := range all[0] {
		var med [2]time.Duration
		for si, s := range stores {
			b.Run(strings.NewReplacer(" ", "_", ":", "").Replace(c.name)+"/"+s.name, func(b *testing.B) {
				call := all[si][i]
				for w := range 3 {
					call.do(b, w)
				}
				var times []time.Duration
				n := 3
				trips := proxy.RoundTrips()
				for b.Loop() {
					start := time.Now()
					call.do(b, n)
					times = append(times, time.Since(start))
					n++
				}
				slices.Sort(times)
				med[si] = times[len(times)/2]
				b.ReportMetric(float64(med[si].Microseconds())/1000, "median-ms")
				if s.db == kv.DB(pdb) {
					// As many as TestRoundTrips counts, or the time is not only theirs.
					b.ReportMetric(float64(proxy.RoundTrips()-trips)/float64(n-3), "round-trips/op")
				}
			})
		}
		fmt.Fprintf(&table, "| %s | %.1f ms | %.1f ms |\n", c.name, float64(med[0].Microseconds())/1000, float64(med[1].Microseconds())/1000)
	}
	b.Log(table.String())
}
