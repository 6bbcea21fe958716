package search

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// index is an Index of items in a fresh store (kvtest.Open: bbolt, or PostgreSQL when the
// tests run on it), built as the stores build theirs (Rebuild).
type index struct {
	t     *testing.T
	db    kv.DB
	items map[string]Item
}

var indexName = []byte("index")

func newIndex(t *testing.T, items ...Item) index {
	t.Helper()
	x := index{t: t, db: kvtest.Open(t), items: map[string]Item{}}
	for _, it := range items {
		x.items[it.Key] = it
	}
	if err := x.db.Update(t.Context(), func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(indexName)
		if err != nil {
			return err
		}
		w, err := WriteIndex(b)
		if err != nil {
			return err
		}
		return w.Rebuild(func(add func(Item) error) error {
			for _, it := range items {
				if err := add(it); err != nil {
					return err
				}
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return x
}

// view runs fn with the index in a read transaction.
func (x index) view(fn func(Index) error) error {
	return x.db.View(x.t.Context(), func(tx kv.Tx) error { return fn(ReadIndex(tx.Bucket(indexName))) })
}

// keys are the keys of the items numbered nums.
func (x index) keys(nums []uint32) []string {
	var keys []string
	if err := x.view(func(ix Index) error {
		keys = ix.Keys(nums)
		return nil
	}); err != nil {
		x.t.Fatal(err)
	}
	return keys
}

// plan is Index.Plan of query, with the model m, and the key of each candidate.
func (x index) plan(query string, m Model) (*Plan, []string) {
	x.t.Helper()
	q, err := Parse(query)
	if err != nil {
		x.t.Fatal(err)
	}
	var p *Plan
	if err := x.view(func(ix Index) (err error) {
		p, err = ix.Plan(q, m)
		return err
	}); err != nil {
		x.t.Fatal(err)
	}
	nums := make([]uint32, len(p.Candidates))
	for i, c := range p.Candidates {
		nums[i] = c.Num
	}
	return p, x.keys(nums)
}

// fetch is a Fetch as a store's: it reads the items numbered nums, in order, as many as
// fit in budget (a title and text cost their bytes) and, but for the first, in MaxBatch.
// asked, when not nil, gets the keys of every fetch's items.
func (x index) fetch(asked *[][]string) Fetch {
	return func(nums []uint32, budget int) ([]Fetched, int, error) {
		keys := x.keys(nums)
		if asked != nil {
			*asked = append(*asked, keys)
		}
		var out []Fetched
		used := 0
		for _, k := range keys {
			it, ok := x.items[k]
			if !ok {
				out = append(out, Fetched{Gone: true})
				continue
			}
			size := len(it.Title) + len(it.Text)
			if used+size > budget || len(out) > 0 && used+size > MaxBatch {
				break
			}
			used += size
			out = append(out, Fetched{Doc: Doc{Title: it.Title, Parts: []string{it.Text}}})
		}
		return out, used, nil
	}
}

// rank is query planned with m and ranked (all of them, with up to 3 lines each, within
// MaxRead), with the key of each item ranked.
func (x index) rank(query string, m Model) (Result, []string) {
	x.t.Helper()
	p, _ := x.plan(query, m)
	res, err := p.Rank(0, 3, MaxRead, x.fetch(nil))
	if err != nil {
		x.t.Fatal(err)
	}
	nums := make([]uint32, len(res.Ranked))
	for i, r := range res.Ranked {
		nums[i] = r.Num
	}
	return res, x.keys(nums)
}

// everySome ranks query with Ranking, and gives the keys of the items found with every word
// and of those found with some, each sorted.
func (x index) everySome(query string) (res Result, every, some []string) {
	x.t.Helper()
	res, keys := x.rank(query, Ranking)
	for i, r := range res.Ranked {
		if r.Every {
			every = append(every, keys[i])
		} else {
			some = append(some, keys[i])
		}
	}
	slices.Sort(every)
	slices.Sort(some)
	return res, every, some
}

// harbor is a corpus of four items worked by hand below: their lengths make BM25F's
// normalisation short to work out. Texts of 4, 2, 6 and 4 tokens (16: 4 on average),
// titles of 2, 1, 2 and 3 (8: 2 on average).
var harbor = []Item{
	{Key: "1", Title: "Lantern keeper", Text: "lantern lantern harbor road"},
	{Key: "2", Title: "Harbor", Text: "harbor keeper"},
	{Key: "3", Title: "Night road", Text: "road road road night harbor keeper"},
	{Key: "4", Title: "Quiet night watch", Text: "watch the quiet sea"},
}

// worked is the model the figures of these tests are worked out by hand with: Ranking's
// when they were written, pinned so that a new tuning leaves them as they are.
var worked = Model{K1: 1.2, BText: 0.75, BTitle: 0.5, WTitle: 2, Near: 0.05, Rerank: 50, K3: 1.2}

// The words' scores of the harbor corpus, worked by hand: K1 = 1.2, BText = 0.75,
// BTitle = 0.5, WTitle = 2, K3 = 1.2 (worked); N = 4 items. For a key in df items
//
//	idf = ln(1 + (N − df + 0.5)/(df + 0.5)):  df 1: ln(10/3), df 2: ln 2, df 3: ln(10/7)
//
// and for an item with it c times in the text and c' in the title
//
//	tf = c/(1 − BText + BText·len/4) + WTitle·c'/(1 − BTitle + BTitle·len'/2)
//	score = Σ over the query's keys of weight · tf·(K1+1)/(K1+tf)
//
// with weight = idf·(K3+1)·n/(K3+n), n the times the query gives the key: 1 (weight idf),
// or 2 (weight idf·4.4/3.2 = idf·11/8). The text norms are 1, 0.625, 1.375 and 1; the
// title norms 1, 0.75, 1 and 1.25. So tf·2.2/(1.2+tf) is 1 for tf = 1, 11/8 for tf = 2,
// 22/13 for tf = 4.
func TestBM25(t *testing.T) {
	x := newIndex(t, harbor...)
	ln := math.Log
	for _, tc := range []struct {
		query string
		want  map[string]float64 // by key
		every []string           // the items with every word
	}{
		// harbor, df 3. 1: tf 1/1 = 1. 2: tf 1/0.625 + 2·1/0.75 = 64/15, saturated
		// (64/15·2.2)/(1.2 + 64/15) = 352/205. 3: tf 1/1.375 = 8/11, saturated 44/53.
		{"harbor", map[string]float64{"1": ln(10.0 / 7), "2": ln(10.0/7) * 352 / 205, "3": ln(10.0/7) * 44 / 53}, []string{"1", "2", "3"}},
		// road, df 2. 1: tf 1. 3: tf 3/1.375 + 2·1/1 = 46/11, saturated 253/148.
		{"road", map[string]float64{"1": ln(2), "3": ln(2) * 253 / 148}, []string{"1", "3"}},
		// lantern, df 1, in 1: tf 2/1 + 2·1/1 = 4 (22/13). keeper, df 3: in 1's title only,
		// tf 2·1/1 = 2 (11/8); 2: tf 1/0.625 = 1.6, saturated 3.52/2.8 = 44/35; 3: 44/53.
		{"lantern keeper", map[string]float64{
			"1": ln(10.0/3)*22/13 + ln(10.0/7)*11/8,
			"2": ln(10.0/7) * 44 / 35,
			"3": ln(10.0/7) * 44 / 53,
		}, []string{"1"}},
		// Given twice: weight 11/8 of once.
		{"harbor Harbor", map[string]float64{"1": ln(10.0/7) * 11 / 8, "2": ln(10.0/7) * 11 / 8 * 352 / 205, "3": ln(10.0/7) * 11 / 8 * 44 / 53}, []string{"1", "2", "3"}},
		// Two words of one stem are that key given twice.
		{"harbors harbor", map[string]float64{"1": ln(10.0/7) * 11 / 8, "2": ln(10.0/7) * 11 / 8 * 352 / 205, "3": ln(10.0/7) * 11 / 8 * 44 / 53}, []string{"1", "2", "3"}},
		// A stop word given twice weighs as once: the, df 1, and sea, df 1, in 4: tf 1 each.
		{"the the sea", map[string]float64{"4": 2 * ln(10.0/3)}, []string{"4"}},
		// A stop word is scored as any word (the, in 4: tf 1), though not needed: night, df 2, in
		// 3 (tf 1/1.375 + 2·1/1 = 30/11, saturated 6/(43.2/11) = 55/36) and in 4's title
		// (tf 2/1.25 = 1.6, 44/35); watch, df 1, in 4: tf 1/1 + 2·1/1.25 = 2.6, saturated
		// 5.72/3.8 = 143/95.
		{"the night watch", map[string]float64{
			"3": ln(2) * 55 / 36,
			"4": ln(10.0/3) + ln(2)*44/35 + ln(10.0/3)*143/95,
		}, []string{"4"}},
	} {
		p, keys := x.plan(tc.query, worked)
		got := map[string]float64{}
		var every []string
		for i, c := range p.Candidates {
			got[keys[i]] = c.Score
			if c.Maybe&p.Query.Required() == p.Query.Required() {
				every = append(every, keys[i])
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: candidates (-want +got):\n-%v\n+%v", tc.query, tc.want, got)
			continue
		}
		for k, want := range tc.want {
			if g, ok := got[k]; !ok || math.Abs(g-want) > 1e-9 {
				t.Errorf("%q: the score of %s: got %.12f, want %.12f", tc.query, k, g, want)
			}
		}
		slices.Sort(every)
		if !slices.Equal(every, tc.every) {
			t.Errorf("%q: with every word (-want +got):\n-%v\n+%v", tc.query, tc.every, every)
		}
	}
}

// Plan.Weights, the weight of a term for nearness and lines, is the sum of its keys' idf
// (each key once): harbor ln(10/7); a phrase of harbor and road ln(10/7) + ln 2; a word
// no item has, df 0, ln(1 + 4.5/0.5) = ln 10.
func TestPlanWeights(t *testing.T) {
	x := newIndex(t, harbor...)
	p, _ := x.plan(`harbor "harbor road" "road road" unknown`, worked)
	want := []float64{math.Log(10.0 / 7), math.Log(10.0/7) + math.Log(2), math.Log(2), math.Log(10)}
	if len(p.Weights) != len(want) {
		t.Fatalf("weights (-want +got):\n-%v\n+%v", want, p.Weights)
	}
	for i := range want {
		if math.Abs(p.Weights[i]-want[i]) > 1e-9 {
			t.Errorf("weights (-want +got):\n-%v\n+%v", want, p.Weights)
			break
		}
	}
}

// Rank adds Model.Near times the words' nearness (Hit.Near) to the scores of the items it
// reads, and orders every word first, then by that score. For "harbor keeper" every item
// has both words; in 2's and 3's texts they are next to each other (d = 1: a = 1), and
// each weighs ln(10/7) (Plan.Weights), so Near = ln(10/7)·1/(1+1); in 1's text there is no
// keeper (its title's is not counted).
func TestRankNearness(t *testing.T) {
	x := newIndex(t, harbor...)
	l := math.Log(10.0 / 7)
	near := worked.Near * l / 2
	// Words: harbor as in TestBM25; keeper in 1's title (11/8), 2 (44/35), 3 (44/53).
	want := []struct {
		key   string
		score float64
	}{
		{"2", l*352/205 + l*44/35 + near}, // 2.974·l
		{"1", l + l*11/8},                 // 2.375·l
		{"3", l*44/53 + l*44/53 + near},   // 1.660·l
	}
	res, keys := x.rank("harbor keeper", worked)
	if res.Every != 3 || res.Some != 0 || res.Unread != 0 || len(keys) != 3 {
		t.Fatalf("every %d, some %d, unread %d, ranked %v", res.Every, res.Some, res.Unread, keys)
	}
	for i, w := range want {
		if keys[i] != w.key || math.Abs(res.Ranked[i].Score-w.score) > 1e-9 {
			t.Errorf("ranked %d: got %s %.12f, want %s %.12f", i+1, keys[i], res.Ranked[i].Score, w.key, w.score)
		}
	}
	// Without the boost, 3 and 2 lose it: 2 is still first (its words alone outscore 1).
	m := worked
	m.Near = 0
	res, keys = x.rank("harbor keeper", m)
	if !slices.Equal(keys, []string{"2", "1", "3"}) || math.Abs(res.Ranked[0].Score-(l*352/205+l*44/35)) > 1e-9 {
		t.Errorf("Near 0: ranked %v, first scored %v", keys, res.Ranked[0].Score)
	}
}

// A phrase is found only where its tokens come one after another: the postings give every
// item with all its keys, Rank reads them and keeps those with the phrase, scored by its
// keys' sum (a phrase alone has no nearness: it is one term).
func TestRankPhrase(t *testing.T) {
	x := newIndex(t, harbor...)
	l := math.Log(10.0 / 7)
	p, keys := x.plan(`"harbor keeper"`, worked)
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"1", "2", "3"}) || slices.ContainsFunc(p.Candidates, func(c Candidate) bool { return c.Sure }) {
		t.Errorf("candidates %v %+v, want 1, 2 and 3, none sure", keys, p.Candidates)
	}
	res, keys := x.rank(`"harbor keeper"`, worked)
	want := []float64{l*352/205 + l*44/35, l*44/53 + l*44/53}
	if res.Every != 2 || !slices.Equal(keys, []string{"2", "3"}) {
		t.Fatalf("every %d, ranked %v, want 2 and 3", res.Every, keys)
	}
	for i, w := range want {
		if math.Abs(res.Ranked[i].Score-w) > 1e-9 {
			t.Errorf("ranked %s: score %.12f, want %.12f", keys[i], res.Ranked[i].Score, w)
		}
	}
	// Unquoted, "harbor-keeper" is that phrase too, but stemmed: "harbors keepers" is it.
	y := newIndex(t, Item{Key: "s", Text: "the harbors keepers"}, Item{Key: "t", Text: "keepers of harbors"})
	if _, keys := y.rank("harbor-keeper", Ranking); !slices.Equal(keys, []string{"s"}) {
		t.Errorf("harbor-keeper: ranked %v, want s", keys)
	}
}

// A query finds an item by its words' stems (Snowball's English, stem.go), but for a
// quoted word or phrase, found as written.
func TestRankStems(t *testing.T) {
	x := newIndex(t,
		Item{Key: "a", Text: "we recorded the studies"},
		Item{Key: "b", Text: "a record of one study"},
		Item{Key: "c", Title: "Recordings", Text: "nothing else"},
		Item{Key: "d", Text: "a reckoning"},
	)
	for _, tc := range []struct {
		query string
		want  []string // the items found, sorted
	}{
		{"record", []string{"a", "b", "c"}},
		{"recorded", []string{"a", "b", "c"}},
		{"RECORDS", []string{"a", "b", "c"}},
		{"studies", []string{"a", "b"}},
		{"study", []string{"a", "b"}},
		{`"recorded"`, []string{"a"}},
		{`"record"`, []string{"b"}},
		{`"the studies"`, []string{"a"}},
		{`"the study"`, nil},
		{"reckon", []string{"d"}},
		{"reckoned", []string{"d"}},
	} {
		res, keys := x.rank(tc.query, Ranking)
		slices.Sort(keys)
		if !slices.Equal(keys, tc.want) || res.Every != len(tc.want) {
			t.Errorf("%q: found (-want +got):\n-%v\n+%v (every %d)", tc.query, tc.want, keys, res.Every)
		}
	}
}

func TestStem(t *testing.T) {
	long := "a" + strings.Repeat("x", maxStemmed-2) + "s" // maxStemmed letters: stemmed
	for tok, want := range map[string]string{
		"recorded": "record", "records": "record", "recording": "record", "record": "record",
		"studies": "studi", "study": "studi", "running": "run", "generously": "generous",
		"dying": "die", "skies": "sky", "oed": "o", // a stem needn't share two letters with its token
		"abs": "ab",                                                // three letters: stemmed
		"ss":  "ss",                                                // two: not
		"x1s": "x1s", "1920s": "1920s", "naïve": "naïve", "東": "東", // only a to z
		long: long[:maxStemmed-1], long + "s": long + "s", // one more: not
	} {
		if got := Stem(tok); got != want {
			t.Errorf("Stem(%q) = %q, want %q", tok, got, want)
		}
	}
}

// Stop words ("the", "of") are looked for, but when a query has other words an item
// needn't have them to have every word, and isn't found by them alone; a query of stop
// words alone needs them all for every word.
func TestRankStopWords(t *testing.T) {
	x := newIndex(t,
		Item{Key: "x", Text: "the harbor"},
		Item{Key: "y", Text: "harbor lights"},
		Item{Key: "z", Text: "the end of it"},
	)
	for _, tc := range []struct {
		query       string
		every, some []string
	}{
		{"the harbor", []string{"x", "y"}, nil},
		{"harbor of the", []string{"x", "y"}, nil},
		{"the of", []string{"z"}, []string{"x"}},
		{"the lights", []string{"y"}, nil},
		{`"the" lights`, nil, []string{"x", "z"}}, // quoted, "the" is needed: and none has both
		{`"the harbor"`, []string{"x"}, nil},
	} {
		res, every, some := x.everySome(tc.query)
		if !slices.Equal(every, tc.every) || !slices.Equal(some, tc.some) || res.Every != len(tc.every) || res.Some != len(tc.some) {
			t.Errorf("%q: every, some (-want +got):\n-%v %v\n+%v %v", tc.query, tc.every, tc.some, every, some)
		}
	}
	// No line holds stop words alone: for "the harbor", line 1 shows none.
	y := newIndex(t, Item{Key: "w", Text: "the end\nthe harbor"})
	if res, _ := y.rank("the harbor", Ranking); len(res.Ranked) != 1 || len(res.Ranked[0].Hit.Lines) != 1 || res.Ranked[0].Hit.Lines[0].Number != 2 {
		t.Errorf("lines %+v, want line 2 alone", res.Ranked)
	}
}

// Texts and queries are folded alike (tokens.go): case, accents and other marks,
// compatibility forms (NFKD), and the letters spelled out.
func TestRankFolding(t *testing.T) {
	x := newIndex(t,
		Item{Key: "f", Title: "Café", Text: "ﬁne Ｃafe straße Ærø naïve Ёлка ŁÓDŹ"},
		Item{Key: "g", Text: "cafe\u0301 e\u0301te\u0301"},
	)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"cafe", []string{"f", "g"}},
		{"CAFÉ", []string{"f", "g"}},
		{"fine", []string{"f"}},
		{"ﬁne", []string{"f"}},
		{"Ｃａｆｅ", []string{"f", "g"}},
		{"strasse", []string{"f"}},
		{"STRASSE", []string{"f"}},
		{"aero", []string{"f"}},
		{"naive", []string{"f"}},
		{"елка", []string{"f"}},
		{"lodz", []string{"f"}},
		{`"ete"`, []string{"g"}},
		{`"été"`, []string{"g"}},
		{`"strasse aero"`, []string{"f"}},
	} {
		res, keys := x.rank(tc.query, Ranking)
		slices.Sort(keys)
		if !slices.Equal(keys, tc.want) || res.Every != len(tc.want) {
			t.Errorf("%q: found (-want +got):\n-%v\n+%v", tc.query, tc.want, keys)
		}
	}
	res, keys := x.rank("cafe", Ranking)
	for i, r := range res.Ranked {
		if inTitle := r.Hit.InTitle != 0; inTitle != (keys[i] == "f") {
			t.Errorf("cafe in %s's title: %v", keys[i], inTitle)
		}
	}
}

// Han, Hiragana, Katakana and Hangul characters are a token each, so a word of them is a
// phrase of characters: found where they come one after another, and only there, though
// the postings have each character of many items.
func TestRankCJK(t *testing.T) {
	x := newIndex(t,
		Item{Key: "k", Text: "東京都に行く"},
		Item{Key: "j", Text: "京の都"},
		Item{Key: "h", Text: "서울 coffee코피"},
	)
	for _, tc := range []struct {
		query string
		every []string
		some  []string
	}{
		{"京都", []string{"k"}, nil},
		{"東京", []string{"k"}, nil},
		{"都京", nil, nil},
		{"京 都", []string{"j", "k"}, nil},
		{"京都 の", nil, []string{"j", "k"}},
		{"coffee", []string{"h"}, nil},
		{"코피", []string{"h"}, nil},
		{"서울coffee", []string{"h"}, nil},
		{"울서", nil, nil},
	} {
		res, every, some := x.everySome(tc.query)
		if !slices.Equal(every, tc.every) || !slices.Equal(some, tc.some) || res.Unread != 0 {
			t.Errorf("%q: every, some (-want +got):\n-%v %v\n+%v %v (unread %d)", tc.query, tc.every, tc.some, every, some, res.Unread)
		}
	}
}

// The term cut: the keys' postings are decoded smallest first while they fit in
// MaxPostings bytes, exactly; the rest are skipped, but for the smallest, always read.
func TestOverBudget(t *testing.T) {
	buf := make([]byte, MaxPostings+2)
	chunk := func(n int) []byte { return buf[:n:n] }
	const half = MaxPostings / 2
	for _, tc := range []struct {
		name  string
		sizes [][]int // each key's chunks' bytes
		want  []bool  // skipped
	}{
		{"none", [][]int{{}, {}}, []bool{false, false}},
		{"all in MaxPostings exactly", [][]int{{half}, {half / 2}, {half / 2}}, []bool{false, false, false}},
		{"one byte over: the biggest out", [][]int{{half}, {half + 1}}, []bool{false, true}},
		{"the smallest first, in any order", [][]int{{half + 1}, {half}}, []bool{true, false}},
		{"the smallest is read, over MaxPostings alone", [][]int{{MaxPostings + 1}, {MaxPostings + 2}}, []bool{false, true}},
		{"a key's chunks add up", [][]int{{half, 1}, {half}, {1}}, []bool{true, false, false}},
		{"ties: the query's order", [][]int{{half}, {half}, {half}}, []bool{false, false, true}},
		{"one byte over, of three", [][]int{{half}, {half - 2}, {3}}, []bool{true, false, false}},
	} {
		chunks := make([][][]byte, len(tc.sizes))
		for i, sizes := range tc.sizes {
			for _, n := range sizes {
				chunks[i] = append(chunks[i], chunk(n))
			}
		}
		if got := overBudget(chunks); !slices.Equal(got, tc.want) {
			t.Errorf("%s: skipped (-want +got):\n-%v\n+%v", tc.name, tc.want, got)
		}
	}
}

// What Plan makes of a key the term cut skipped: it weighs as if every item had it
// (df = N), any item may have it, and no term with it is sure without reading the text.
func TestSkippedKey(t *testing.T) {
	q, _ := Parse("harbor night")
	p := &Plan{Query: q, Model: worked, Weights: make([]float64, 2)}
	ps := postings{lists: [][]entry{{{num: 1, value: 1 << 2}, {num: 3, value: 2 << 2}}, nil}, skipped: []bool{false, true}, total: 2}
	idf := ps.idf(4)
	// harbor, df 2 of 4: ln(1 + 2.5/2.5) = ln 2; night, skipped, df 4: ln(1 + 0.5/4.5).
	if want := []float64{math.Log(2), math.Log(10.0 / 9)}; math.Abs(idf[0]-want[0]) > 1e-12 || math.Abs(idf[1]-want[1]) > 1e-12 {
		t.Errorf("idf (-want +got):\n-%v\n+%v", want, idf)
	}
	termKeys, sure := p.weigh(q.Keys(), idf, ps.skipped)
	if sure != 0b01 {
		t.Errorf("sure terms %02b, want 01 (harbor; night skipped)", sure)
	}
	acc := ps.slotItems(5)
	maybe := ps.mayHave(termKeys, acc)
	if want := []uint64{0b11, 0b11}; !slices.Equal(maybe, want) || !slices.Equal(acc.nums, []uint32{1, 3}) {
		t.Errorf("items %v may have %b, want %b", acc.nums, maybe, want)
	}
	// All lengths at the average, norm 1: harbor's tf 1 and 2, saturated 1 and 11/8; the
	// skipped key adds nothing.
	lens := lengths{text: []float64{4, 4}, title: []float64{0, 0}}
	score := ps.scores(worked, Stats{Items: 4, Text: 16}, acc, idf, lens)
	if want := []float64{idf[0], idf[0] * 11 / 8}; math.Abs(score[0]-want[0]) > 1e-12 || math.Abs(score[1]-want[1]) > 1e-12 {
		t.Errorf("scores (-want +got):\n-%v\n+%v", want, score)
	}
}

// Rank reads the texts of the best max(limit, Model.Rerank) by their words, the shortest
// first, and no more when the postings tell all (Sure): the first fetch it asks for.
func TestRerank(t *testing.T) {
	x := newIndex(t, harbor...)
	m := worked
	m.Rerank = 2
	p, _ := x.plan("harbor", m) // by words: 2, 1, 3; lengths 3, 6, 8 tokens
	for _, tc := range []struct {
		limit, ranked int
		want          string
	}{
		{1, 1, "[2 1]"},
		{2, 2, "[2 1]"},
		{3, 3, "[2 1 3]"},
		{0, 3, "[2 1 3]"},
	} {
		var asked [][]string
		res, err := p.Rank(tc.limit, 3, MaxRead, x.fetch(&asked))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(asked); got != "["+tc.want+"]" {
			t.Errorf("limit %d: fetched %s, want [%s]", tc.limit, got, tc.want)
		}
		if len(res.Ranked) != tc.ranked || res.Every != 3 {
			t.Errorf("limit %d: ranked %d, every %d, want %d, 3", tc.limit, len(res.Ranked), res.Every, tc.ranked)
		}
	}
}
