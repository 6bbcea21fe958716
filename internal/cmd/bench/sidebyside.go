package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// sideStore is one of the stores measured side by side, filled alike, through docstore.
type sideStore struct {
	name    string
	db      kv.DB
	s       *docstore.Store
	lines   []string // the big document's lines as they are now
	big     string   // the 100 KB document edited and read
	journal string   // the 100 KB document appended to
	filled  time.Duration
	closeDB func() error
}

// sideLoad is how much the side-by-side step does.
type sideLoad struct {
	docs int // notes besides the two big documents
	n    int // calls of each kind a run, on each store
}

func (o *options) sideLoad() sideLoad {
	if o.quick {
		return sideLoad{docs: 200, n: 5}
	}
	return sideLoad{docs: 10_000, n: 100}
}

// sideOp is one kind of call measured on both stores.
type sideOp struct {
	name, what string
	do         func(st *sideStore, run, i int) error
}

// measureSideBySide is the store half of "bbolt and PostgreSQL side by side": the same
// docstore calls, in this process, on a bbolt file opened as serve opens it (bolt.File:
// fsync on every commit) and on a schema of its own in the -pg database, each filled with
// the same documents; the two stores take turns, call kind by call kind, so that the
// machine's other load falls on both alike.
func measureSideBySide(ctx context.Context, o *options, _ binaries, r *report) error {
	if o.pg == "" {
		b := r.sectionNamed("bbolt and PostgreSQL side by side")
		b.WriteString("Not measured in this run: give `-pg postgres://…` (or set COMPASS_TEST_DATA) to measure both stores.\n")
		return nil
	}
	load := o.sideLoad()
	schemas := &pgSchemas{base: o.pg}
	defer schemas.drop()
	settings, err := schemas.settings(ctx)
	if err != nil {
		return fmt.Errorf("asking the database its settings: %w", err)
	}
	r.pgSettings = settings

	file, err := bolt.OpenFile(filepath.Join(o.work, "side.db"), bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		return err
	}
	u, err := schemas.fresh(ctx, "side")
	if err != nil {
		return err
	}
	pdb, err := pg.Open(ctx, u)
	if err != nil {
		file.Close()
		return err
	}
	stores := []*sideStore{
		{name: "bbolt", db: file, closeDB: file.Close},
		{name: "PostgreSQL", db: pdb, closeDB: pdb.Close},
	}
	defer func() {
		for _, st := range stores {
			st.closeDB()
		}
	}()
	vocab := vocabulary(5000, rand.New(rand.NewPCG(21, 22)))
	bolt, post := stores[0], stores[1]
	if err := fillSide(ctx, bolt, load.docs, vocab); err != nil {
		return fmt.Errorf("filling bbolt: %w", err)
	}
	// PostgreSQL gets a byte-for-byte copy (kv.Copy, what `compass-mcp copy` does): the
	// same keys, so the same answers; and filling it call by call takes minutes, since
	// every Create's reads of the search index are round trips (the "create" row says
	// what one costs).
	start := time.Now()
	counts, err := kv.Copy(ctx, file, pdb)
	if err != nil {
		return fmt.Errorf("copying bbolt to PostgreSQL: %w", err)
	}
	// Statistics for the planner, as autovacuum would gather them in a while: without them
	// the cursors' range scans of a freshly filled table are planned as for an empty one.
	if err := pdb.Analyze(ctx); err != nil {
		return err
	}
	post.filled = time.Since(start)
	post.s, post.lines, post.big, post.journal = docstore.New(pdb, "personal"), slices.Clone(bolt.lines), bolt.big, bolt.journal

	// The queries: two words each, drawn log-uniformly from the vocabulary's ranks 20 to
	// 2,000, the same on both stores, which must find as many documents for each.
	qr := rand.New(rand.NewPCG(23, 24))
	queries := make([]string, load.n*o.runs)
	for i := range queries {
		rank := func() int { return int(20 * math.Pow(100, qr.Float64())) }
		queries[i] = vocab[rank()] + " " + vocab[rank()]
	}
	found := make([]int, len(queries))
	for i := range found {
		found[i] = -1
	}
	totalFound := 0

	ops := []sideOp{
		{"read", "read one key (a `View`)", func(st *sideStore, _, _ int) error {
			return st.db.View(ctx, func(tx kv.Tx) error {
				if b := tx.Bucket([]byte("bench")); b == nil || b.Get([]byte("key")) == nil {
					return fmt.Errorf("the key written at fill is missing")
				}
				return nil
			})
		}},
		{"write", "write one key (an `Update`: a commit)", func(st *sideStore, run, i int) error {
			return st.db.Update(ctx, func(tx kv.Tx) error {
				b, err := tx.CreateBucketIfNotExists([]byte("bench"))
				if err != nil {
					return err
				}
				return b.Put([]byte("key"), fmt.Appendf(nil, "run %d call %d", run, i))
			})
		}},
		{"edit", "`Edit`: one line of the 100 KB document (what `edit_document` calls)", func(st *sideStore, run, i int) error {
			k := (run*load.n + i) * 7919 % len(st.lines)
			next := fmt.Sprintf("%-48s", fmt.Sprintf("%d. edited in run %d, call %d", k+1, run, i)) // as long as the others
			if _, err := st.s.Edit(ctx, st.big, st.lines[k], next, agent); err != nil {
				return err
			}
			st.lines[k] = next
			return nil
		}},
		{"append", "`Append`: one line at the end of a 100 KB document (`append_document`)", func(st *sideStore, run, i int) error {
			_, err := st.s.Append(ctx, st.journal, fmt.Sprintf("- appended in run %d, call %d\n", run, i), agent)
			return err
		}},
		{"create", "`Create`: a note of 20 lines, about 1 KB (`write_document` of a new document)", func(st *sideStore, run, i int) error {
			title, text := note(load.docs+run*load.n+i, vocab)
			_, err := st.s.Create(ctx, title, text, docstore.KindWrite, agent)
			return err
		}},
		{"read100", "`Read`: the latest version of the 100 KB document (`read_document`)", func(st *sideStore, _, _ int) error {
			return st.s.View(ctx, func(r *docstore.Reader) error {
				_, v, err := r.Read(st.big, 0)
				if err == nil && len(v.Text) < 90_000 {
					err = fmt.Errorf("read %d bytes of the 100 KB document", len(v.Text))
				}
				return err
			})
		}},
		{"list", fmt.Sprintf("`List(50)`: the 50 latest of %d documents (`list_documents`)", load.docs+2), func(st *sideStore, _, _ int) error {
			return st.s.View(ctx, func(r *docstore.Reader) error {
				docs, total, err := r.List(50)
				if err == nil && (len(docs) != 50 || total < load.docs+2) {
					err = fmt.Errorf("listed %d of %d documents, want 50 of at least %d", len(docs), total, load.docs+2)
				}
				return err
			})
		}},
		{"search", fmt.Sprintf("`Search`: two words over %d documents, 50 results (`search_documents`)", load.docs+2), func(st *sideStore, run, i int) error {
			q := (run*load.n + i) % len(queries)
			var res docstore.Results
			err := st.s.View(ctx, func(r *docstore.Reader) error {
				var err error
				res, err = r.Search(queries[q], 50)
				return err
			})
			if err != nil {
				return err
			}
			switch {
			case run >= o.runs: // counting round trips, after the stores have changed
			case found[q] < 0:
				found[q] = res.Total
				totalFound += res.Total
			case found[q] != res.Total:
				return fmt.Errorf("search %q found %d documents on %s, %d on the other store", queries[q], res.Total, st.name, found[q])
			}
			return nil
		}},
	}
	lat := map[string]*series{}
	for _, op := range ops {
		for _, st := range stores {
			lat[op.name+st.name] = newSeries(o.runs)
		}
	}
	for run := range o.runs {
		for _, op := range ops {
			for _, st := range stores {
				s := lat[op.name+st.name]
				for i := range load.n {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					start := time.Now()
					if err := op.do(st, run, i); err != nil {
						return fmt.Errorf("%s on %s: %w", op.name, st.name, err)
					}
					s.add(run, time.Since(start))
				}
			}
		}
	}

	turns, err := countRoundTrips(ctx, u, post, ops, o.runs)
	if err != nil {
		return err
	}

	b := r.sectionNamed("bbolt and PostgreSQL side by side")
	sideIntro(b)
	b.WriteString("### The stores, in-process\n\n")
	fmt.Fprintf(b, "The same calls, through `docstore` (what the tools call) in the bench process, on both stores: %d of each kind a run,\n", load.n)
	fmt.Fprintf(b, "%d runs; the stores take turns kind by kind. bbolt: the data file opened as `serve` opens it (`bolt.OpenFile`:\n", o.runs)
	b.WriteString("every commit fsynced). PostgreSQL: a schema of its own, opened as `serve --data postgres://…` opens it (`pg.Open`:\n")
	fmt.Fprintf(b, "the advisory lock, READ COMMITTED). %s.\n", r.pgSettings)
	fmt.Fprintf(b, "Each store holds the same %d notes of 20 lines (words drawn from a Zipf distribution over a vocabulary of 5,000) and\n", load.docs)
	fmt.Fprintf(b, "two documents of 2,000 lines (100 KB), with the search index kept as the server keeps it: bbolt filled through `docstore`\n")
	fmt.Fprintf(b, "(8 writers at once, grouped by `Batch`) in %s, then copied to PostgreSQL with `kv.Copy` (as `compass-mcp copy` does:\n", bolt.filled.Round(100*time.Millisecond))
	fmt.Fprintf(b, "%d buckets, %d keys, %s) and its table analyzed, in %s.\n", counts.Buckets, counts.Keys, size(counts.Bytes), post.filled.Round(100*time.Millisecond))
	fmt.Fprintf(b, "Every search found as many documents on both stores (%.1f on average).\n\n", float64(totalFound)/float64(max(1, len(queries))))
	b.WriteString("| call | bbolt median | PostgreSQL median | PostgreSQL ÷ bbolt | round trips to PostgreSQL | bbolt p99 | PostgreSQL p99 | runs' medians (ms), bbolt / PostgreSQL |\n|---|---|---|---|---|---|---|---|\n")
	for _, op := range ops {
		bs, ps := lat[op.name+"bbolt"].summary(), lat[op.name+"PostgreSQL"].summary()
		r.noted(op.name+" bbolt", bs)
		r.noted(op.name+" PostgreSQL", ps)
		fmt.Fprintf(b, "| %s | %s | %s | %.1f× | %.1f | %s | %s | %s / %s |\n", op.what, ms(bs.median), ms(ps.median),
			float64(ps.median)/float64(max(1, bs.median)), turns[op.name], ms(bs.p99), ms(ps.p99), runMedians(lat[op.name+"bbolt"]), runMedians(lat[op.name+"PostgreSQL"]))
	}
	b.WriteString("\n")
	b.WriteString("Round trips to PostgreSQL are counted, after the timed runs, over 10 more calls of each kind made through a proxy\n")
	b.WriteString("that counts the times a connection sends after the database answered (the mean a call; statements sent together are one).\n\n")
	med := func(op, store string) time.Duration { return lat[op+store].summary().median }
	b.WriteString("### What a write costs on PostgreSQL against bbolt\n\n")
	fmt.Fprintf(b, "A write of one key commits in %s on bbolt and %s on PostgreSQL: on both, the commit waits for the disk.\n", ms(med("write", "bbolt")), ms(med("write", "PostgreSQL")))
	b.WriteString("bbolt writes its pages and syncs the file twice (pages, then meta page)")
	if r.fsync.n > 0 {
		fmt.Fprintf(b, "; an fsync takes %s here", ms(r.fsync.median))
	}
	b.WriteString(".\nPostgreSQL gets BEGIN, the advisory lock, the writes, the NOTIFY and ")
	fmt.Fprintf(b, "COMMIT in %.0f round trip, and its COMMIT waits for the WAL's flush\n(synchronous_commit=on). What makes a write dearer is what ", turns["write"])
	fmt.Fprintf(b, "it reads first: on bbolt a read is a look into the mapped file (%s for a `View` of one key), on PostgreSQL a round trip\n", ms(med("read", "bbolt")))
	fmt.Fprintf(b, "(%s for that `View`: %.0f round trips, the first read and the end of the transaction). A one-line `Edit` of the\n", ms(med("read", "PostgreSQL")), turns["read"])
	fmt.Fprintf(b, "100 KB document makes %.0f round trips (the document's record and latest text, the keys of the indexes it keeps up\n", turns["edit"])
	fmt.Fprintf(b, "to date, then the commit): %s against %s. A new note of 1 KB makes %.0f, most of them a cursor's seek into\n", ms(med("edit", "PostgreSQL")), ms(med("edit", "bbolt")), turns["create"])
	fmt.Fprintf(b, "the search index for each of its words, one after the other: %s against %s. All that time the write holds the advisory lock, so no other write of\n", ms(med("create", "PostgreSQL")), ms(med("create", "bbolt")))
	b.WriteString("any replica runs meanwhile: a store's writes are serial on both backends, and on PostgreSQL each lasts as long as its\n")
	b.WriteString("round trips; writes that arrive together share one transaction (`Batch`: one lock, one commit), so that many clients'\n")
	b.WriteString("writes share the lock's time. Reads take no lock and run side by side, and pay a round trip for each key or page of\n")
	b.WriteString("keys they read, except that the keys a loop knows in advance are read together in one (`kv.GetAll`): `List(50)`\n")
	b.WriteString("reads its 50 document records in one round trip; a search of two words reads its words' postings, then the number's\n")
	b.WriteString("key, record and latest text of the up to 50 documents it shows in three round trips; those that tie on the postings\n")
	b.WriteString("with the 50th have their latest text read by a cursor, a round trip or two each.\n\n")
	return nil
}

// roundTripCalls is how many calls of each kind countRoundTrips counts over.
const roundTripCalls = 10

// countRoundTrips makes, after the timed runs, roundTripCalls more calls of each kind on
// PostgreSQL through a proxy that counts round trips (turnCounter), on a second pool of the
// same schema, and returns each kind's round trips a call. A call of each kind first
// warms the pool and the bucket cache.
func countRoundTrips(ctx context.Context, schemaURL string, post *sideStore, ops []sideOp, run int) (map[string]float64, error) {
	counter, proxied, err := countTurns(schemaURL)
	if err != nil {
		return nil, err
	}
	defer counter.close()
	db, err := pg.Open(ctx, proxied)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	st := *post
	st.db, st.s = db, docstore.New(db, "personal")
	turns := map[string]float64{}
	for _, op := range ops {
		if err := op.do(&st, run, 0); err != nil {
			return nil, fmt.Errorf("%s through the counting proxy: %w", op.name, err)
		}
		before := counter.turns.Load()
		for i := 1; i <= roundTripCalls; i++ {
			if err := op.do(&st, run, i); err != nil {
				return nil, fmt.Errorf("%s through the counting proxy: %w", op.name, err)
			}
		}
		turns[op.name] = float64(counter.turns.Load()-before) / roundTripCalls
	}
	return turns, nil
}

// sideIntro says how to reproduce the section's figures.
func sideIntro(b *strings.Builder) {
	b.WriteString("```sh\n")
	b.WriteString("COMPASS_TEST_DATA=postgres://user:pass@host/db internal/cmd/bench/run.sh   # the whole report, this section included\n")
	b.WriteString("go run ./internal/cmd/bench -pg postgres://user:pass@host/db -only sidebyside,replicas   # this section alone, to stdout\n")
	b.WriteString("```\n\n")
	b.WriteString("The benchmark makes schemas of its own (`bench_…`) in that database and drops them at the end.\n\n")
}

// runMedians lists each run's median, in ms.
func runMedians(s *series) string {
	var out []string
	for _, r := range s.runs {
		if len(r) > 0 {
			out = append(out, strings.TrimSuffix(ms(percentile(r, 50)), " ms"))
		}
	}
	return strings.Join(out, ", ")
}

// fillSide creates the store's documents: the two big ones, then docs notes, 8 at a time.
func fillSide(ctx context.Context, st *sideStore, docs int, vocab []string) error {
	start := time.Now()
	st.s = docstore.New(st.db, "personal")
	if err := st.s.EnsureIndex(ctx, nil); err != nil {
		return err
	}
	err := st.db.Update(ctx, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("bench"))
		if err != nil {
			return err
		}
		return b.Put([]byte("key"), []byte("filled"))
	})
	if err != nil {
		return err
	}
	st.lines = lines(2000, 1)
	big, err := st.s.Create(ctx, "Big plan", join(st.lines), docstore.KindWrite, agent)
	if err != nil {
		return err
	}
	journal, err := st.s.Create(ctx, "Journal", join(lines(2000, 2)), docstore.KindWrite, agent)
	if err != nil {
		return err
	}
	st.big, st.journal = big.Document.ID, journal.Document.ID
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				title, text := note(i, vocab)
				if _, err := st.s.Create(ctx, title, text, docstore.KindWrite, agent); err != nil {
					mu.Lock()
					first = cmpOr(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range docs {
		next <- i
	}
	close(next)
	wg.Wait()
	st.filled = time.Since(start)
	return first
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// note is the i-th note: a title and 20 lines of words drawn from a Zipf distribution over
// vocab, the same for the same i.
func note(i int, vocab []string) (string, string) {
	r := rand.New(rand.NewPCG(uint64(i), 31))
	z := rand.NewZipf(r, 1.07, 1, uint64(len(vocab)-1))
	title := fmt.Sprintf("Note %05d: %s %s", i, vocab[z.Uint64()], vocab[z.Uint64()])
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	for l := range 20 {
		fmt.Fprintf(&b, "%d.", l+1)
		for range 7 {
			b.WriteByte(' ')
			b.WriteString(vocab[z.Uint64()])
		}
		b.WriteString("\n")
	}
	return title, b.String()
}

// vocabulary is n distinct made-up words of two to four syllables, most common first.
func vocabulary(n int, r *rand.Rand) []string {
	const (
		onsets = "bdfgklmnprstvz"
		nuclei = "aeiou"
	)
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var w strings.Builder
		for range 2 + r.IntN(3) {
			w.WriteByte(onsets[r.IntN(len(onsets))])
			w.WriteByte(nuclei[r.IntN(len(nuclei))])
		}
		if s := w.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
