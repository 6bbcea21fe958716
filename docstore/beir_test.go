package docstore_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
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
	ctx := t.Context()
	dir := os.Getenv("COMPASS_BEIR")
	if dir == "" {
		t.Skip("COMPASS_BEIR names no dataset")
	}
	type doc struct {
		ID    string `json:"_id"`
		Title string `json:"title"`
		Text  string `json:"text"`
	}
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
	defer db.Close()
	db.NoSync = true
	s := docstore.New(bolt.Wrap(db), "personal")
	idOf := map[string]string{} // document id → dataset id
	seen := map[string]bool{}
	start := time.Now()
	lines("corpus.jsonl", func(line string) {
		var d doc
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
		saved, err := s.Create(ctx, title, d.Title+"\n\n"+d.Text, docstore.KindWrite, north)
		if err != nil {
			t.Fatalf("%s: %v", d.ID, err)
		}
		idOf[saved.Document.ID] = d.ID
	})
	t.Logf("%d documents written in %s", len(idOf), time.Since(start).Round(time.Second))
	qrels := map[string]map[string]bool{}
	first := true
	lines("qrels-*.tsv", func(line string) {
		if first {
			first = false
			return
		}
		f := strings.Split(line, "\t")
		if n, _ := strconv.Atoi(f[2]); n > 0 {
			if qrels[f[0]] == nil {
				qrels[f[0]] = map[string]bool{}
			}
			qrels[f[0]][f[1]] = true
		}
	})
	type query struct {
		ID   string `json:"_id"`
		Text string `json:"text"`
	}
	var queries []query
	lines("queries-*.jsonl", func(line string) {
		var q query
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatal(err)
		}
		if qrels[q.ID] != nil {
			queries = append(queries, q)
		}
	})
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
		for _, q := range queries {
			res, err := view(t, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(q.Text, 10) })
			if err != nil {
				t.Fatal(err)
			}
			rel := qrels[q.ID]
			var dcg, ideal float64
			hits := 0
			for i, f := range res.Found {
				if rel[idOf[f.Document.ID]] {
					dcg += 1 / math.Log2(float64(i+2))
					hits++
				}
			}
			for i := range min(len(rel), 10) {
				ideal += 1 / math.Log2(float64(i+2))
			}
			ndcg += dcg / ideal
			recall += float64(hits) / float64(len(rel))
			if len(res.Found) == 0 {
				empty++
				t.Logf("no result: %s %q", q.ID, q.Text)
			}
		}
		n := float64(len(queries))
		t.Logf("%+v: nDCG@10 %.4f  Recall@10 %.4f  no result %d  (%d queries, %.1f ms each)", m, ndcg/n, recall/n, empty, len(queries),
			float64(time.Since(start).Microseconds())/1000/n)
	}
}
