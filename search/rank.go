package search

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	"github.com/compass-mcp/compass-mcp/kv"
)

// Model is how documents are ranked: BM25F (the title a field of its own, weighed
// WTitle, each field's length normalised with its b), each word weighing its inverse
// document frequency, plus Near times how close together the words come in the text
// (Hit.Near), for the Rerank best by the words alone.
type Model struct {
	K1, BText, BTitle, WTitle float64
	Near                      float64
	Rerank                    int
}

// Ranking is the model the stores rank with, tuned on BEIR SciFact's training claims
// (docs/SEARCH.md).
var Ranking = Model{K1: 1.2, BText: 0.75, BTitle: 0.5, WTitle: 2, Near: 0.05, Rerank: 50}

// Budgets that bound what one search costs, whatever the query and the store.
const (
	// MaxPostings is about how many bytes of postings a search decodes: past it, the keys
	// in the most items are not decoded, and the terms that have them are read in the
	// texts instead (a store that big is one where such words are in most documents).
	MaxPostings = 16 << 20
	// MaxRead is how many bytes of texts a search reads (to find phrases, to rank by
	// nearness, for the lines): candidates past it are left out, and counted (Unread).
	MaxRead = 32 << 20
	// MaxBatch is the most bytes of texts read in one transaction (Fetch).
	MaxBatch = 8 << 20
)

// Candidate is an item that may be found, as the postings tell.
type Candidate struct {
	Num   uint32
	Score float64 // its words' BM25F score
	Maybe uint64  // the terms whose keys it has (bit i: term i)
	Sure  bool    // the postings tell everything: it has just the terms Maybe
	Len   int     // tokens in its text and title
}

// Plan is a query's candidates, scored from the index: what Rank starts from.
type Plan struct {
	Query      Query
	Model      Model
	Candidates []Candidate
	Weights    []float64 // each term's weight: the sum of its keys' idf
	Skipped    int       // keys whose postings were not decoded (MaxPostings)
}

// Plan reads q's postings and scores every item that has any of its terms (or may have:
// a phrase's tokens, not yet known to be one after another). It reads only the index:
// the store then ranks with Plan.Rank, reading texts outside this transaction.
func (x Index) Plan(q Query, m Model) (*Plan, error) {
	p := &Plan{Query: q, Model: m, Weights: make([]float64, len(q.Terms))}
	if x.meta != nil {
		kv.Prefetch(x.meta, [][]byte{nextKey, statsKey}) // on PostgreSQL: one round trip for both
	}
	keys := q.Keys()
	chunks := x.chunks(keys)
	// The budget: keys by the bytes of their postings, the smallest first; the smallest
	// is always decoded.
	size := make([]int, len(keys))
	order := make([]int, len(keys))
	for i, cs := range chunks {
		order[i] = i
		for _, c := range cs {
			size[i] += len(c)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return size[a] - size[b] })
	skipped := make([]bool, len(keys))
	used := 0
	for n, i := range order {
		if n > 0 && used+size[i] > MaxPostings {
			skipped[i] = true
			p.Skipped++
			continue
		}
		used += size[i]
	}
	lists := make([][]entry, len(keys))
	total := 0
	for i, cs := range chunks {
		if skipped[i] {
			continue
		}
		for _, c := range cs {
			var err error
			j := binary.BigEndian.Uint32(c[len(c)-4:])
			if lists[i], err = decodeChunk(lists[i], j, c[:len(c)-4]); err != nil {
				return nil, err
			}
		}
		total += len(lists[i])
	}
	if total == 0 {
		return p, nil
	}
	st := x.stats()
	n := float64(max(st.Items, 1))
	avgText, avgTitle := max(float64(st.Text)/n, 1), max(float64(st.TitleToks)/n, 1)
	idf := make([]float64, len(keys))
	for i := range keys {
		df := float64(len(lists[i]))
		if skipped[i] {
			df = n // in most: it weighs next to nothing
		}
		idf[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	keyIndex := make(map[string]int, len(keys))
	for i, k := range keys {
		keyIndex[k] = i
	}
	termKeys := make([][]int, len(q.Terms))
	var sureTerms uint64
	for t, term := range q.Terms {
		seen := map[int]bool{}
		for _, k := range term.keys() {
			if i := keyIndex[k]; !seen[i] {
				seen[i] = true
				termKeys[t] = append(termKeys[t], i)
				p.Weights[t] += idf[i]
			}
		}
		if !term.Quoted && len(term.Tokens) == 1 && len(Stem(term.Tokens[0])) <= MaxKey && !skipped[termKeys[t][0]] {
			sureTerms |= 1 << t
		}
	}

	// Every item with a posting gets a slot.
	acc := newSlots(x.next(), total)
	for _, l := range lists {
		for _, e := range l {
			acc.slot(e.num)
		}
	}
	// Lengths, of the chunks that hold a candidate.
	var js []uint32
	for _, num := range acc.nums {
		if j := num / Span; len(js) == 0 || js[len(js)-1] != j {
			js = append(js, j)
		}
	}
	slices.Sort(js)
	js = slices.Compact(js)
	if _, ok := x.lens.(kv.Prefetcher); ok {
		ks := make([][]byte, len(js))
		for i, j := range js {
			ks[i] = lensKey(j)
		}
		kv.Prefetch(x.lens, ks)
	}
	textLen := make([]float64, len(acc.nums))
	titleLen := make([]float64, len(acc.nums))
	for _, j := range js {
		es, err := decodeLens(j, x.lens.Get(lensKey(j)))
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if s, ok := acc.find(e.num); ok {
				textLen[s], titleLen[s] = float64(e.text), float64(e.title)
			}
		}
	}
	normText := make([]float64, len(acc.nums))
	normTitle := make([]float64, len(acc.nums))
	for s := range acc.nums {
		normText[s] = 1 - m.BText + m.BText*textLen[s]/avgText
		normTitle[s] = 1 - m.BTitle + m.BTitle*titleLen[s]/avgTitle
	}
	// The words' score, key by key in the query's order (the same sums on every store).
	score := make([]float64, len(acc.nums))
	for i, l := range lists {
		for _, e := range l {
			s, _ := acc.find(e.num)
			tf := float64(e.value>>2)/normText[s] + m.WTitle*float64(e.value&3)/normTitle[s]
			score[s] += idf[i] * tf * (m.K1 + 1) / (m.K1 + tf)
		}
	}
	// The terms each may have: all of a term's keys (a skipped key: any item may).
	maybe := make([]uint64, len(acc.nums))
	count := make([]uint16, len(acc.nums))
	for t, ks := range termKeys {
		need := 0
		clear(count)
		for _, i := range ks {
			if skipped[i] {
				continue
			}
			need++
			for _, e := range lists[i] {
				s, _ := acc.find(e.num)
				count[s]++
			}
		}
		for s := range count {
			if int(count[s]) == need {
				maybe[s] |= 1 << t
			}
		}
	}
	quoted, req := q.Quoted(), q.Required()
	for s, num := range acc.nums {
		if maybe[s]&req == 0 || maybe[s]&quoted != quoted {
			continue
		}
		p.Candidates = append(p.Candidates, Candidate{Num: num, Score: score[s], Maybe: maybe[s], Sure: maybe[s]&^sureTerms == 0, Len: int(textLen[s] + titleLen[s])})
	}
	return p, nil
}

// slots gives each item number met a slot in dense arrays: by a table when the numbers
// are few enough for one, else by a map.
type slots struct {
	table []int32
	m     map[uint32]int32
	nums  []uint32
}

func newSlots(next uint32, postings int) *slots {
	s := &slots{}
	if int(next) <= 8*postings+4096 {
		s.table = make([]int32, next)
		for i := range s.table {
			s.table[i] = -1
		}
	} else {
		s.m = make(map[uint32]int32, postings)
	}
	return s
}

func (s *slots) slot(num uint32) int32 {
	if i, ok := s.find(num); ok {
		return i
	}
	i := int32(len(s.nums))
	s.nums = append(s.nums, num)
	if s.table != nil {
		s.table[num] = i
	} else {
		s.m[num] = i
	}
	return i
}

func (s *slots) find(num uint32) (int32, bool) {
	if s.table != nil {
		if int(num) >= len(s.table) {
			return 0, false
		}
		i := s.table[num]
		return i, i >= 0
	}
	i, ok := s.m[num]
	return i, ok
}

// Fetched is an item a store read for Rank: its title and text (copied out of the
// transaction), and when it last changed (later ranks first among equals). Gone: it is
// no longer there.
type Fetched struct {
	Doc  Doc
	Time int64
	Gone bool
}

// Fetch reads the items numbered nums, in a transaction of its own, copying their texts:
// as many of them, in order, as fit in budget bytes and, but for the first, in MaxBatch
// (none when the first alone is over budget), and says how many bytes it read.
type Fetch func(nums []uint32, budget int) ([]Fetched, int, error)

// Ranked is one item of a ranking.
type Ranked struct {
	Num   uint32
	Hit   Hit     // what was found in its text (lines included); zero if not read
	Score float64 // its words' score, and their nearness when read
	Every bool    // it has every word (Query.Required) and phrase
	Time  int64
}

// Result is what Rank gives: the first limit items found, best first, and how many were
// found in all.
type Result struct {
	Ranked      []Ranked
	Every, Some int // found with every word, with some
	Unread      int // candidates left out, their texts past the budget
	Read        int // bytes of texts read
}

type cand struct {
	Candidate
	read, found, every bool
	hit                Hit
	time               int64
	final              float64
}

// Rank reads what it must of the candidates' texts with fetch (those that may have a
// phrase, to know; the best, to rank by nearness and for the lines) and ranks them: every
// word and phrase before some, then by score, then latest first. It gives the first limit
// (< 1: all), each with up to lines of its lines, reading at most budget bytes of texts
// (MaxRead, or what another search of the same call left of it).
func (p *Plan) Rank(limit, lines, budget int, fetch Fetch) (Result, error) {
	q := p.Query
	cs := make([]*cand, len(p.Candidates))
	req := q.Required()
	for i, c := range p.Candidates {
		cs[i] = &cand{Candidate: c, found: true, every: c.Maybe&req == req, final: c.Score}
	}
	k := len(cs)
	if limit > 0 {
		k = min(k, max(limit, p.Model.Rerank))
	}
	sc := newScanner(q, p.Weights)
	var res Result
	start := budget
	// Those to read are read the shortest first: within the budget, as many as can be.
	read := func(batch []*cand) (bool, error) {
		slices.SortStableFunc(batch, func(a, b *cand) int { return a.Len - b.Len })
		for len(batch) > 0 {
			nums := make([]uint32, len(batch))
			for i, c := range batch {
				nums[i] = c.Num
			}
			got, used, err := fetch(nums, budget)
			if err != nil {
				return false, err
			}
			budget -= used
			if len(got) == 0 {
				return false, nil
			}
			for i, f := range got {
				c := batch[i]
				c.read, c.time = true, f.Time
				if f.Gone {
					c.found = false
					continue
				}
				c.hit = sc.match(f.Doc, lines)
				c.found, c.every = c.hit.Found(q), c.hit.Every(q)
				c.final = c.Score + p.Model.Near*c.hit.Near
			}
			batch = batch[len(got):]
		}
		return true, nil
	}
	byWords := func(a, b *cand) int {
		if a.every != b.every {
			if a.every {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(b.Num, a.Num)
	}
	// The best k, read; reading may show that some lack a phrase, or a word of several
	// tokens, and then others come up.
	more := true
	for more {
		live := cs[:0]
		for _, c := range cs {
			if c.found {
				live = append(live, c)
			}
		}
		cs = live
		best(cs, k, byWords)
		var unread []*cand
		for _, c := range cs[:min(k, len(cs))] {
			if !c.read {
				unread = append(unread, c)
			}
		}
		if len(unread) == 0 {
			break
		}
		var err error
		if more, err = read(unread); err != nil {
			return Result{}, err
		}
	}
	// The others that may have a phrase: read to know whether they are found.
	var unsure []*cand
	for _, c := range cs {
		if !c.read && !c.Sure {
			unsure = append(unsure, c)
		}
	}
	if more && len(unsure) > 0 {
		if _, err := read(unsure); err != nil {
			return Result{}, err
		}
	}
	final := make([]*cand, 0, len(cs))
	for _, c := range cs {
		switch {
		case !c.read && !c.Sure:
			res.Unread++
		case c.found:
			final = append(final, c)
			if c.every {
				res.Every++
			} else {
				res.Some++
			}
		}
	}
	best(final, k, byWords)
	top := final[:min(k, len(final))]
	slices.SortFunc(top, func(a, b *cand) int {
		if a.every != b.every {
			if a.every {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.final, a.final); c != 0 {
			return c
		}
		if c := cmp.Compare(b.time, a.time); c != 0 {
			return c
		}
		return cmp.Compare(b.Num, a.Num)
	})
	if limit > 0 && len(final) > limit {
		final = final[:limit]
	}
	for _, c := range final {
		score := c.Score
		if c.read {
			score = c.final
		}
		res.Ranked = append(res.Ranked, Ranked{Num: c.Num, Hit: c.hit, Score: score, Every: c.every, Time: c.time})
	}
	res.Read = start - budget
	return res, nil
}

// best puts the first k of cs (by cmp) first, in order; the rest after, in no order. It
// costs about len(cs)·log k, not a sort of all.
func best(cs []*cand, k int, cmp func(a, b *cand) int) {
	if k >= len(cs) {
		slices.SortFunc(cs, cmp)
		return
	}
	// A max-heap of the best k so far, the worst of them on top.
	h := cs[:k]
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && cmp(h[r], h[l]) > 0 {
				l = r
			}
			if cmp(h[l], h[i]) <= 0 {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for i := k; i < len(cs); i++ {
		if cmp(cs[i], h[0]) < 0 {
			h[0], cs[i] = cs[i], h[0]
			down(0)
		}
	}
	slices.SortFunc(h, cmp)
}
