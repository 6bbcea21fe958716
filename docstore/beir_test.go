package docstore_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/beir"
	"github.com/compass-mcp/compass-mcp/search"
)

// TestBEIR measures search quality in-process on a BEIR dataset laid out as
// ../shared/beir/ lays SciFact (corpus.jsonl, queries-*.jsonl, qrels-*.tsv): each document
// written as eval.py writes it, each query searched for as it is with limit 10, nDCG@10 and
// Recall@10 printed. For tuning the model quickly (eval.py, through the tools, is the
// measure); skipped without COMPASS_BEIR:
//
//	COMPASS_BEIR=../../shared/beir/scifact go test -run TestBEIR -v ./docstore
//
// COMPASS_BEIR_MODELS, if set, is models to try, separated by ";", each as
// "k1 btext btitle wtitle near rerank k3" (search.Model's fields in order; k3 may be left
// out, for 0).
func TestBEIR(t *testing.T) {
	dir := os.Getenv("COMPASS_BEIR")
	if dir == "" {
		t.Skip("COMPASS_BEIR names no dataset")
	}
	start := time.Now()
	set := beir.Load(t, dir, 0, north)
	t.Logf("%d documents written in %s, %d queries", len(set.IDOf), time.Since(start).Round(time.Second), len(set.Queries))
	models := []search.Model{search.Ranking}
	if env := os.Getenv("COMPASS_BEIR_MODELS"); env != "" {
		models = nil
		for _, m := range strings.Split(env, ";") {
			var x search.Model
			n, err := fmt.Sscan(m, &x.K1, &x.BText, &x.BTitle, &x.WTitle, &x.Near, &x.Rerank, &x.K3)
			if short := errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF); n < 6 || err != nil && !(n == 6 && short) {
				t.Fatalf("model %q: %v", m, err)
			}
			models = append(models, x)
		}
	}
	saved := search.Ranking
	defer func() { search.Ranking = saved }()
	for _, m := range models {
		search.Ranking = m
		var ndcg, recall float64
		empty := 0
		start := time.Now()
		for _, q := range set.Queries {
			res, err := view(t, set.Store, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(q.Text, 10) })
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, f := range res.Found {
				ids = append(ids, f.Document.ID)
			}
			n, r := set.NDCG(q.ID, ids)
			ndcg += n
			recall += r
			if len(res.Found) == 0 {
				empty++
				t.Logf("no result: %s %q", q.ID, q.Text)
			}
		}
		n := float64(len(set.Queries))
		t.Logf("%+v: nDCG@10 %.4f  Recall@10 %.4f  no result %d  (%d queries, %.1f ms each)", m, ndcg/n, recall/n, empty, len(set.Queries),
			float64(time.Since(start).Microseconds())/1000/n)
	}
}
