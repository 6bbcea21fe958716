package docstore_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/spaces"
	"go.etcd.io/bbolt"
)

// The search figures of docs/PERFORMANCE.md, on a corpus of 10,000 Markdown documents of
// 50 MB in all (1,000 of 5 MB with -short), words drawn from a Zipf distribution over a
// vocabulary of 30,000 (so a few are everywhere and most are rare, as in prose):
//
//	go test -run '^$' -bench 'Search|Edit100KB' -benchtime 200x ./docstore
//
// The corpus is built once per process (about a minute for the full one).

var corpus struct {
	once  sync.Once
	db    *bbolt.DB
	words []string // the vocabulary, most frequent first
	text  int      // bytes of text in all
	err   error
}

// vocabulary makes n distinct pseudo-words from syllables, a few with accents.
func vocabulary(n int, r *rand.Rand) []string {
	syll := []string{"ka", "lo", "mi", "ne", "ru", "ta", "pe", "so", "di", "va", "ber", "con", "ist", "tra", "mon", "el", "an", "or", "é", "ü"}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for range 1 + r.IntN(4) {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// markdown makes a document of about size bytes: a heading, sections, paragraphs, lists,
// emphasis, code and links, with words from z.
func markdown(title string, size int, words []string, r *rand.Rand, z *rand.Zipf) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	word := func() string { return words[z.Uint64()] }
	for b.Len() < size {
		switch r.IntN(6) {
		case 0:
			fmt.Fprintf(&b, "## %s %s\n\n", word(), word())
		case 1:
			for range 1 + r.IntN(4) {
				fmt.Fprintf(&b, "- %s %s **%s** %s\n", word(), word(), word(), word())
			}
			b.WriteString("\n")
		default:
			for range 1 + r.IntN(5) {
				for i := range 12 {
					if i > 0 {
						b.WriteByte(' ')
					}
					switch r.IntN(40) {
					case 0:
						fmt.Fprintf(&b, "`%s`", word())
					case 1:
						fmt.Fprintf(&b, "[%s](https://example.com/%s)", word(), word())
					default:
						b.WriteString(word())
					}
				}
				b.WriteString(".\n")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func corpusSize() (docs, size int) {
	if testing.Short() {
		return 1000, 5000
	}
	return 10_000, 5000
}

// searchCorpus returns the corpus's data file, built and indexed on first use.
func searchCorpus(b *testing.B) kv.DB {
	ctx := b.Context()
	corpus.once.Do(func() {
		start := time.Now()
		n, size := corpusSize()
		db, err := bolt.Open(filepath.Join(tmp, "search-corpus.db"), time.Second)
		if err != nil {
			corpus.err = err
			return
		}
		db.NoSync, db.MaxBatchSize = true, 1 // built once and thrown away; synced below
		r := rand.New(rand.NewPCG(1, 2))
		corpus.words = vocabulary(30_000, r)
		z := rand.NewZipf(r, 1.07, 1, uint64(len(corpus.words)-1))
		s := docstore.New(bolt.Wrap(db), "personal")
		for i := range n {
			title := fmt.Sprintf("%s %s %d", corpus.words[z.Uint64()], corpus.words[z.Uint64()], i)
			text := markdown(title, size/2+r.IntN(size), corpus.words, r, z)
			corpus.text += len(text)
			if _, err := s.Create(ctx, title, text, docstore.KindWrite, north); err != nil {
				corpus.err = err
				return
			}
		}
		built := time.Now()
		if err := s.EnsureIndex(ctx, nil); err != nil {
			corpus.err = err
			return
		}
		indexed := time.Since(built)
		db.NoSync = false
		corpus.err = db.Sync()
		corpus.db = db
		fmt.Fprintf(os.Stderr, "search corpus: %d documents, %.1f MB of Markdown, written in %s, indexed in %s\n",
			n, float64(corpus.text)/1e6, built.Sub(start).Round(time.Millisecond), indexed.Round(time.Millisecond))
	})
	if corpus.err != nil {
		b.Fatal(corpus.err)
	}
	return bolt.Wrap(corpus.db)
}

// timed runs fn, adding its wall time to wall and the CPU time of its thread to cpu.
func timed(wall, cpu *[]time.Duration, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, c0 := time.Now(), threadCPU()
	fn()
	*cpu = append(*cpu, threadCPU()-c0)
	*wall = append(*wall, time.Since(start))
}

// percentiles reports the p50 and p99 of the wall times and of the CPU times, in ms.
func percentiles(b *testing.B, wall, cpu []time.Duration) {
	at := func(ds []time.Duration, p float64) float64 {
		slices.Sort(ds)
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(wall, 0.50), "p50-ms")
	b.ReportMetric(at(wall, 0.99), "p99-ms")
	b.ReportMetric(at(cpu, 0.50), "p50-cpu-ms")
	b.ReportMetric(at(cpu, 0.99), "p99-cpu-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkSearchTwoWords is a query of two words, each drawn log-uniformly from the
// vocabulary's ranks 20 to 20,000: from words in most documents to words in a few.
func BenchmarkSearchTwoWords(b *testing.B) { searchTwoWords(b, searchCorpus(b)) }

// BenchmarkSearchTwoWordsPostgres is BenchmarkSearchTwoWords on the corpus copied into a
// PostgreSQL schema of its own ($COMPASS_TEST_DATA; skipped without it), where every round
// trip counts:
//
//	COMPASS_TEST_DATA=postgres://… go test -run '^$' -bench SearchTwoWordsPostgres -benchtime 200x ./docstore
func BenchmarkSearchTwoWordsPostgres(b *testing.B) {
	kvtest.Postgres(b) // skipped without PostgreSQL, before building the corpus
	searchTwoWords(b, kvtest.CopyToPostgres(b, searchCorpus(b)))
}

// BenchmarkSearchTwelveWords is a question of 12 words drawn as BenchmarkSearchTwoWords
// draws two, from ranks 1 to 20,000: most are common, as in a question asked in words.
func BenchmarkSearchTwelveWords(b *testing.B) { searchWords(b, searchCorpus(b), 12, 1) }

func searchTwoWords(b *testing.B, db kv.DB) { searchWords(b, db, 2, 20) }

// searchWords searches for n words, each of a rank drawn log-uniformly from low to 20,000.
func searchWords(b *testing.B, db kv.DB, n int, low float64) {
	s := docstore.New(db, "personal")
	r := rand.New(rand.NewPCG(3, 4))
	rank := func() int { return int(low * math.Pow(20_000/low, r.Float64())) }
	var wall, cpu []time.Duration
	found := 0
	for b.Loop() {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = corpus.words[rank()]
		}
		q := strings.Join(ws, " ")
		var res docstore.Results
		var err error
		timed(&wall, &cpu, func() {
			res, err = view(b, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(q, 50) })
		})
		if err != nil {
			b.Fatal(err)
		}
		found += res.Total
	}
	b.ReportMetric(float64(found)/float64(len(wall)), "found/op")
	percentiles(b, wall, cpu)
}

// BenchmarkSearchPhrase is a quoted phrase of two words that follow each other somewhere
// in a document picked at random.
func BenchmarkSearchPhrase(b *testing.B) {
	db := searchCorpus(b)
	s := docstore.New(db, "personal")
	docs, _, err := view2(b, s, func(r *docstore.Reader) ([]docstore.Document, int, error) { return r.List(1 << 20) })
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	var wall, cpu []time.Duration
	found := 0
	for b.Loop() {
		_, v, err := read(b, s, docs[r.IntN(len(docs))].ID, 0)
		if err != nil {
			b.Fatal(err)
		}
		lines := strings.Split(v.Text, "\n")
		var ws []string
		for len(ws) < 2 {
			ws = strings.Fields(strings.Trim(lines[r.IntN(len(lines))], "#-*`[]() ."))
		}
		i := r.IntN(len(ws) - 1)
		q := `"` + ws[i] + " " + ws[i+1] + `"`
		var res docstore.Results
		timed(&wall, &cpu, func() {
			res, err = view(b, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(q, 50) })
		})
		if err != nil {
			b.Fatal(err)
		}
		found += res.Total
	}
	b.ReportMetric(float64(found)/float64(len(wall)), "found/op")
	percentiles(b, wall, cpu)
}

// BenchmarkSearchIndexSize reports the index's size beside the text's: the pages its
// buckets take in the file, and the bytes of them in use.
func BenchmarkSearchIndexSize(b *testing.B) {
	db := searchCorpus(b)
	for b.Loop() {
		err := db.View(b.Context(), func(tx kv.Tx) error {
			index, _ := bolt.BucketOf(spaces.Sub(tx, "personal", "doc_search"))
			st := index.Stats()
			b.ReportMetric(float64(st.BranchAlloc+st.LeafAlloc)/float64(corpus.text)*100, "alloc-%-of-text")
			b.ReportMetric(float64(st.BranchInuse+st.LeafInuse)/float64(corpus.text)*100, "inuse-%-of-text")
			b.ReportMetric(float64(st.BranchAlloc+st.LeafAlloc)/1e6, "index-MB")
			b.ReportMetric(float64(corpus.text)/1e6, "text-MB")
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEdit100KBIndex is BenchmarkEdit100KB in a store without the search index and
// in one with it, taking turns (so that the machine's other load falls on both alike): what
// keeping the index costs a one-line edit. It reports each one's mean and their ratio, and
// the ratio of the CPU time of the calling thread (the fsync's wait left out).
func BenchmarkEdit100KBIndex(b *testing.B) {
	ctx := b.Context()
	type side struct {
		s     *docstore.Store
		id    string
		lines []string
		took  time.Duration
		cpu   time.Duration
	}
	var sides [2]*side
	for i, indexed := range []bool{false, true} {
		s := open(b, "personal")
		lines := text(2000, 1)
		d := mustCreate(b, s, "Big", strings.Join(lines, ""))
		if indexed {
			if err := s.EnsureIndex(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
		sides[i] = &side{s: s, id: d.ID, lines: lines}
	}
	n := 0
	for i := 0; b.Loop(); i++ {
		for _, sd := range sides {
			old := sd.lines[1000]
			sd.lines[1000] = fmt.Sprintf("line 1000 edited %d\n", i)
			runtime.LockOSThread()
			start, c0 := time.Now(), threadCPU()
			if _, err := sd.s.Edit(ctx, sd.id, old, sd.lines[1000], north); err != nil {
				b.Fatal(err)
			}
			sd.took += time.Since(start)
			sd.cpu += threadCPU() - c0
			runtime.UnlockOSThread()
		}
		n++
	}
	without, with := float64(sides[0].took.Microseconds())/float64(n), float64(sides[1].took.Microseconds())/float64(n)
	b.ReportMetric(without/1000, "without-ms")
	b.ReportMetric(with/1000, "with-ms")
	b.ReportMetric(with/without, "ratio")
	if sides[0].cpu > 0 {
		b.ReportMetric(float64(sides[1].cpu)/float64(sides[0].cpu), "cpu-ratio")
	}
	b.ReportMetric(0, "ns/op")
}
