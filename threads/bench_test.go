package threads

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"go.etcd.io/bbolt"
)

// The benchmarks' stores are built once per process, in a folder TestMain removes.
var bench struct {
	sync.Mutex
	dir    string
	stores map[int]*benchStore
}

type benchStore struct {
	db     *bbolt.DB
	middle string // a message id halfway through the big conversation
}

func TestMain(m *testing.M) {
	code := m.Run()
	bench.Lock()
	for _, bs := range bench.stores {
		bs.db.Close()
	}
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
	bench.Unlock()
	os.Exit(code)
}

// benchSizes are the numbers of messages in the benchmarks' space; -short leaves out the big one.
func benchSizes() []int {
	if testing.Short() {
		return []int{100}
	}
	return []int{100, 1_000_000}
}

// storeOf returns a space of n messages: half of them in conversation "big", where every
// other one is a private step, and the rest in conversations of 100 messages each (2 in
// spaces of at most 1,000 messages).
func storeOf(b *testing.B, n int) *benchStore {
	bench.Lock()
	defer bench.Unlock()
	if bs := bench.stores[n]; bs != nil {
		return bs
	}
	if bench.dir == "" {
		dir, err := os.MkdirTemp("", "threads-bench-")
		if err != nil {
			b.Fatal(err)
		}
		bench.dir, bench.stores = dir, map[int]*benchStore{}
	}
	db, err := bolt.Open(filepath.Join(bench.dir, fmt.Sprintf("%d.db", n)), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	db.NoSync = true // built once and thrown away: no need to wait for the disk
	start := time.Now()
	bs := &benchStore{db: db}

	type plan struct {
		conv string
		n    int
	}
	// Small spaces get small conversations, so that Recent(20) lists 20 at every size and
	// the sizes compare the same work.
	size := 100
	if n <= 1000 {
		size = 2
	}
	plans := []plan{{"big", n / 2}}
	for i, rest := 0, n-n/2; rest > 0; i++ {
		plans = append(plans, plan{fmt.Sprintf("c%06d", i), min(size, rest)})
		rest -= size
	}
	const perTx = 100_000
	at := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	added := 0
	for len(plans) > 0 {
		err := bolt.Wrap(db).Update(b.Context(), func(tx kv.Tx) error {
			w, err := newWriter(tx, "bench")
			if err != nil {
				return err
			}
			for inTx := 0; len(plans) > 0 && inTx < perTx; {
				p := &plans[0]
				t, err := w.thread(p.conv)
				if err != nil {
					return err
				}
				t.setTitle("Conversation " + p.conv)
				for ; p.n > 0 && inTx < perTx; p.n, inTx, added = p.n-1, inTx+1, added+1 {
					at = at.Add(time.Second)
					private := p.conv == "big" && added%2 == 1
					m, _, err := w.add(t, Message{At: at, From: "agent:north", Text: fmt.Sprintf("Message %d of the benchmark, long enough to look like something said.", added), Private: private})
					if err != nil {
						return err
					}
					if !private && p.conv == "big" && added >= n/4 && bs.middle == "" {
						bs.middle = m.ID
					}
				}
				if p.n == 0 {
					plans = plans[1:]
				}
			}
			_, err = w.flush()
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Sync(); err != nil {
		b.Fatal(err)
	}
	if n > 1000 {
		b.Logf("built a space of %d messages in %s", n, time.Since(start).Round(time.Millisecond))
	}
	bench.stores[n] = bs
	return bs
}

func BenchmarkRecent(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			s := New(bolt.Wrap(storeOf(b, n).db), "bench")
			for b.Loop() {
				got, err := readRecent(b, s, 20, "big")
				if err != nil || len(got) != 20 {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}

func BenchmarkPage(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			bs := storeOf(b, n)
			s := New(bolt.Wrap(bs.db), "bench")
			for _, from := range []struct{ name, before string }{{"end", ""}, {"middle", bs.middle}} {
				b.Run(from.name, func(b *testing.B) {
					for b.Loop() {
						got, _, err := readPage(b, s, "big", 30, from.before)
						if err != nil || len(got) == 0 {
							b.Fatal(len(got), err)
						}
					}
				})
			}
		})
	}
}

// BenchmarkImport100k imports JSON Lines of 100,000 messages (1,000 conversations of 100, a
// quarter of them private steps) into a new data file, in one transaction.
func BenchmarkImport100k(b *testing.B) {
	ctx := b.Context()
	if testing.Short() {
		b.Skip("imports 100,000 messages")
	}
	var in bytes.Buffer
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 100_000 {
		fmt.Fprintf(&in, `{"conversation":"c%04d","at":%q,"from":"person:ana","to":"agent:north","text":"Message %d of the import, long enough to look like something said.","private":%v}`+"\n",
			i%1000, at.Add(time.Duration(i)*time.Second).Format(time.RFC3339), i, i%4 == 3)
	}
	b.SetBytes(int64(in.Len()))
	for range b.N {
		b.StopTimer()
		s := New(openDB(b), "bench")
		b.StartTimer()
		sum, err := s.Import(ctx, bytes.NewReader(in.Bytes()), "ana", nil)
		if err != nil || sum.Messages != 100_000 {
			b.Fatal(sum, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/message")
}
