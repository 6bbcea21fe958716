package semantic_test

import (
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	beirset "github.com/compass-mcp/compass-mcp/internal/testkit/beir"
	"github.com/compass-mcp/compass-mcp/semantic"
)

// beir is a BEIR dataset written into a store, with the semantic tier's index of it.
type beir struct {
	*beirset.Set
	ix *semantic.Index
}

// loadBEIR writes the first maxDocs documents of dir (0: all), as beirset.Load does.
func loadBEIR(t *testing.T, dir string, maxDocs int, c *semantic.Client) *beir {
	t.Helper()
	set := beirset.Load(t, dir, maxDocs, docstore.Author{By: "agent:eval", For: "person:eval"})
	return &beir{Set: set, ix: semantic.NewIndex(set.DB, beirset.Space, c, semantic.Options{Interval: time.Millisecond})}
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
	for _, q := range b.Queries {
		sim, err := b.ix.Similar(t.Context(), q.Text)
		if err != nil {
			t.Fatalf("query %s: %v", q.ID, err)
		}
		for i := range out {
			var res docstore.Results
			err := b.Store.View(t.Context(), func(r *docstore.Reader) (err error) {
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
			n, r := b.NDCG(q.ID, ids)
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
		s.all /= float64(len(b.Queries))
		s.recall /= float64(len(b.Queries))
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
	t.Logf("%d documents written in %s, %d queries", len(b.IDOf), time.Since(start).Round(time.Second), len(b.Queries))
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
