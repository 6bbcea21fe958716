// Package beir writes a BEIR dataset (laid out as ../shared/beir/ lays SciFact:
// corpus.jsonl, queries-*.jsonl, qrels-*.tsv) into a docstore on a temporary bbolt file,
// as eval.py writes it through the tools, and scores a ranking of it: for the in-process
// measures of search (docstore's TestBEIR, semantic's TestBEIRFusion).
package beir

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
)

// Space is the space the documents are written in.
const Space = "personal"

// Set is a dataset written into a store.
type Set struct {
	DB      kv.DB
	Store   *docstore.Store   // the documents, in Space
	IDOf    map[string]string // document id → dataset id
	Qrels   map[string]map[string]bool
	Queries []Query // those whose judged answers are all among the documents written
}

// Query is one of the dataset's queries.
type Query struct{ ID, Text string }

// Load writes the first maxDocs documents of dir (0: all) by author as eval.py writes
// them (title: the dataset's, else its id, cut at 200 characters, a repeated one followed
// by its id; text: the title, a blank line, the text), and keeps the queries whose
// judged answers are all among them. The store's file is in t's temporary folder.
func Load(t testing.TB, dir string, maxDocs int, author docstore.Author) *Set {
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
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", names[0], err)
		}
	}
	db, err := bolt.Open(filepath.Join(t.TempDir(), "beir.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.NoSync = true
	b := &Set{DB: bolt.Wrap(db), IDOf: map[string]string{}, Qrels: map[string]map[string]bool{}}
	b.Store = docstore.New(b.DB, Space)
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
		saved, err := b.Store.Create(t.Context(), title, d.Title+"\n\n"+d.Text, docstore.KindWrite, author)
		if err != nil {
			t.Fatalf("%s: %v", d.ID, err)
		}
		b.IDOf[saved.Document.ID] = d.ID
		kept[d.ID] = true
	})
	all := map[string]bool{}
	first := true
	lines("qrels-*.tsv", func(line string) {
		if first {
			first = false // the header
			return
		}
		f := strings.Split(line, "\t")
		if len(f) < 3 {
			t.Fatalf("qrels line %q: want query, document, score", line)
		}
		if n, _ := strconv.Atoi(f[2]); n > 0 {
			if b.Qrels[f[0]] == nil {
				b.Qrels[f[0]] = map[string]bool{}
				all[f[0]] = true
			}
			b.Qrels[f[0]][f[1]] = true
			if !kept[f[1]] {
				all[f[0]] = false
			}
		}
	})
	lines("queries-*.jsonl", func(line string) {
		var q Query
		if err := json.Unmarshal([]byte(line), &struct {
			ID   *string `json:"_id"`
			Text *string `json:"text"`
		}{&q.ID, &q.Text}); err != nil {
			t.Fatal(err)
		}
		if all[q.ID] {
			b.Queries = append(b.Queries, q)
		}
	})
	return b
}

// NDCG is nDCG@10 of ranked (document ids, best first) for query q, and its Recall@10.
func (b *Set) NDCG(q string, ranked []string) (ndcg, recall float64) {
	rel := b.Qrels[q]
	var dcg, ideal float64
	hits := 0
	for i, id := range ranked[:min(10, len(ranked))] {
		if rel[b.IDOf[id]] {
			dcg += 1 / math.Log2(float64(i+2))
			hits++
		}
	}
	for i := range min(len(rel), 10) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	return dcg / ideal, float64(hits) / float64(len(rel))
}
