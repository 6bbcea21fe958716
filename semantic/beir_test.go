package semantic_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/semantic"
)

// beir is a BEIR dataset laid out as ../shared/beir/ lays SciFact, written into a store.
type beir struct {
	s       *docstore.Store
	ix      *semantic.Index
	idOf    map[string]string // document id → dataset id
	qrels   map[string]map[string]bool
	queries []beirQuery
}

type beirQuery struct{ ID, Text string }

// loadBEIR writes the first maxDocs documents of dir (0: all) as eval.py writes them, and
// keeps the queries whose judged answers are all among them.
func loadBEIR(t *testing.T, dir string, maxDocs int, c *semantic.Client) *beir {
	t.Helper()
	lines := func(pattern string, fn func(line string)) {
		names, _ := filepath.Glob(filepath.Join(dir, pattern))
		if len(names) == 0 {
			t.Fatalf("no %s in %s", pattern, dir)
		}
		f, err := os.Open(names[0])
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			fn(sc.Text())
		}
	}
	db, err := bolt.Open(filepath.Join(t.TempDir(), "beir.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.NoSync = true
	kdb := bolt.Wrap(db)
	b := &beir{s: docstore.New(kdb, "personal"), idOf: map[string]string{}, qrels: map[string]map[string]bool{}}
	b.ix = semantic.NewIndex(kdb, "personal", c, semantic.Options{Interval: time.Millisecond})
	seen := map[string]bool{}
	kept := map[string]bool{}
	n := 0
	lines("corpus.jsonl", func(line string) {
		if maxDocs > 0 && n >= maxDocs {
			return
		}
		n++
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		title := strings.TrimSpace(d.Title)
		if title == "" {
			title = d.ID
		}
		if r := []rune(title); len(r) > 200 {
			title = strings.TrimRight(string(r[:199]), " ") + "…"
		}
		if seen[strings.ToLower(title)] {
			r := []rune(title)
			title = fmt.Sprintf("%s [%s]", string(r[:min(len(r), 190)]), d.ID)
		}
		seen[strings.ToLower(title)] = true
		saved, err := b.s.Create(t.Context(), title, d.Title+"\n\n"+d.Text, docstore.KindWrite, docstore.Author{By: "agent:eval", For: "person:eval"})
		if err != nil {
			t.Fatalf("%s: %v", d.ID, err)
		}
		b.idOf[saved.Document.ID] = d.ID
		kept[d.ID] = true
	})
	all := map[string]bool{}
	first := true
	lines("qrels-*.tsv", func(line string) {
		if first {
			first = false
			return
		}
		f := strings.Split(line, "\t")
		if n, _ := strconv.Atoi(f[2]); n > 0 {
			if b.qrels[f[0]] == nil {
				b.qrels[f[0]] = map[string]bool{}
				all[f[0]] = true
			}
			b.qrels[f[0]][f[1]] = true
			if !kept[f[1]] {
				all[f[0]] = false
			}
		}
	})
	lines("queries-*.jsonl", func(line string) {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatal(err)
		}
		if all[q.ID] {
			b.queries = append(b.queries, beirQuery{q.ID, q.Text})
		}
	})
	return b
}

// ndcg is nDCG@10 of ranked (document ids) for query q, and its Recall@10.
func (b *beir) ndcg(q string, ranked []string) (float64, float64) {
	rel := b.qrels[q]
	var dcg, ideal float64
	hits := 0
	for i, id := range ranked[:min(10, len(ranked))] {
		if rel[b.idOf[id]] {
			dcg += 1 / math.Log2(float64(i+2))
			hits++
		}
	}
	for i := range min(len(rel), 10) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	return dcg / ideal, float64(hits) / float64(len(rel))
}

// tuning says whether a query is in the half of the claims the fusion was chosen on
// (by its id's hash); the others are held out.
func tuning(id string) bool {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()%2 == 0
}

// scores is nDCG@10 of each fusion (the first: none) on the tuning half, the held-out
// half and all the queries, and Recall@10 on all.
type scores struct {
	tune, held, all, recall float64
	nTune, nHeld            int
}

// measure runs every query lexically and with each fusion.
func (b *beir) measure(t *testing.T, fusions []semantic.Fusion) []scores {
	t.Helper()
	out := make([]scores, len(fusions)+1)
	for _, q := range b.queries {
		sim, err := b.ix.Similar(t.Context(), q.Text)
		if err != nil {
			t.Fatalf("query %s: %v", q.ID, err)
		}
		for i := range out {
			var res docstore.Results
			err := b.s.View(t.Context(), func(r *docstore.Reader) (err error) {
				if i == 0 {
					res, err = r.Search(q.Text, 10)
				} else {
					res, _, err = fusions[i-1].Search(r, q.Text, 10, sim)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, f := range res.Found {
				ids = append(ids, f.Document.ID)
			}
			n, r := b.ndcg(q.ID, ids)
			s := &out[i]
			s.all += n
			s.recall += r
			if tuning(q.ID) {
				s.tune += n
				s.nTune++
			} else {
				s.held += n
				s.nHeld++
			}
		}
	}
	for i := range out {
		s := &out[i]
		s.all /= float64(len(b.queries))
		s.recall /= float64(len(b.queries))
		s.tune /= float64(max(s.nTune, 1))
		s.held /= float64(max(s.nHeld, 1))
	}
	return out
}

// TestBEIRFusion measures the fusion with a real model on a BEIR dataset, in-process
// (eval.py can't wait for the embedding): COMPASS_BEIR (a folder laid out as
// ../shared/beir/scifact), COMPASS_TEST_EMBEDDINGS (the endpoint, such as the shim of
// ../shared/embed), COMPASS_BEIR_DOCS (the first N documents; 0: all) and
// COMPASS_BEIR_FUSIONS ("meaning depth alone alonemax;…": the fusions to try, beside
// semantic.Fused). Skipped without the first two.
func TestBEIRFusion(t *testing.T) {
	dir, url := os.Getenv("COMPASS_BEIR"), os.Getenv("COMPASS_TEST_EMBEDDINGS")
	if dir == "" || url == "" {
		t.Skip("COMPASS_BEIR and COMPASS_TEST_EMBEDDINGS name no dataset and endpoint")
	}
	docs, _ := strconv.Atoi(os.Getenv("COMPASS_BEIR_DOCS"))
	start := time.Now()
	b := loadBEIR(t, dir, docs, &semantic.Client{URL: url, Model: "use-lite"})
	t.Logf("%d documents written in %s, %d queries", len(b.idOf), time.Since(start).Round(time.Second), len(b.queries))
	start = time.Now()
	if err := b.ix.Update(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	st, err := b.ix.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("embedded in %s: %+v", time.Since(start).Round(time.Second), st)
	fusions := []semantic.Fusion{semantic.Fused}
	if env := os.Getenv("COMPASS_BEIR_FUSIONS"); env != "" {
		for _, f := range strings.Split(env, ";") {
			var x semantic.Fusion
			if _, err := fmt.Sscan(f, &x.Meaning, &x.Depth, &x.Alone, &x.AloneMax); err != nil {
				t.Fatalf("fusion %q: %v", f, err)
			}
			fusions = append(fusions, x)
		}
	}
	start = time.Now()
	res := b.measure(t, fusions)
	t.Logf("measured in %s", time.Since(start).Round(time.Second))
	for i, s := range res {
		name := "lexical"
		if i > 0 {
			name = fmt.Sprintf("%+v", fusions[i-1])
		}
		t.Logf("%-52s nDCG@10 tune %.4f (%d)  held out %.4f (%d)  all %.4f  Recall@10 %.4f", name, s.tune, s.nTune, s.held, s.nHeld, s.all, s.recall)
	}
	if os.Getenv("COMPASS_BEIR_CHECK") != "" {
		if lost := res[0].all - res[1].all; lost > 0.005 {
			t.Errorf("the fusion (%+v) lost %.4f nDCG@10 to the lexical ranking (%.4f against %.4f)", fusions[0], lost, res[1].all, res[0].all)
		}
	}
}
