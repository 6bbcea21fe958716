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
	// K3 is how much a word the query gives n times outweighs one it gives once:
	// (K3+1)·n/(K3+n) times; 0, not at all.
	K3 float64
}

// Ranking is the model the stores rank with, tuned on BEIR SciFact's training claims
// (docs/SEARCH.md).
var Ranking = Model{K1: 1.2, BText: 0.75, BTitle: 0.5, WTitle: 2, Near: 0.05, Rerank: 50, K3: 1.2}

// Budgets that bound what one search costs, whatever the query and the store.
const (
	// MaxPostings is about how many bytes of postings a search decodes: past it, the keys
	// in the most items are not decoded, and the terms that have them are read in the
	// texts instead (a store that big is one where such words are in most documents).
	MaxPostings = 16 << 20
	// MaxRead is how many bytes of texts a search reads (to find phrases, to rank by
	// nearness, for the lines): candidates past it are left out, and counted (Unread).
	MaxRead = 32 << 20
	// MaxBatch is the most bytes of texts one Fetch reads, past its first text.
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
// the store then ranks with Plan.Rank, which reads the texts it needs through Fetch.
//
// A query of more than MaxTerms terms is narrowed first (Query.Narrow) to its rarest: the
// plan's Query is the one searched for.
func (x Index) Plan(q Query, m Model) (*Plan, error) {
	meta := kv.GetAll(x.meta, [][]byte{nextKey, statsKey})
	next, st := decodeNext(meta[0]), decodeStats(meta[1])
	if len(q.cands) > 0 {
		q = q.Narrow(x.sizes(q.cands, next))
	}
	keys := q.Keys()
	chunks := x.chunks(keys, next)
	if fixed, ok := x.fix(q, keys, chunks, next); ok {
		q, keys = fixed, fixed.Keys()
		chunks = x.chunks(keys, next)
	}
	p := &Plan{Query: q, Model: m, Weights: make([]float64, len(q.Terms))}
	skipped := overBudget(chunks)
	for _, s := range skipped {
		if s {
			p.Skipped++
		}
	}
	ps, err := decodePostings(chunks, skipped)
	if err != nil {
		return nil, err
	}
	if ps.total == 0 {
		return p, nil
	}
	idf := ps.idf(float64(max(st.Items, 1)))
	termKeys, sureTerms := p.weigh(keys, idf, skipped)
	acc := ps.slotItems(next)
	lens, err := x.readLengths(acc)
	if err != nil {
		return nil, err
	}
	score := ps.scores(m, st, acc, p.keyWeights(termKeys, idf), lens)
	maybe := ps.mayHave(termKeys, acc)
	quoted, req := q.Quoted(), q.Required()
	for s, num := range acc.nums {
		if maybe[s]&req == 0 || maybe[s]&quoted != quoted {
			continue
		}
		p.Candidates = append(p.Candidates, Candidate{Num: num, Score: score[s], Maybe: maybe[s], Sure: maybe[s]&^sureTerms == 0, Len: int(lens.text[s] + lens.title[s])})
	}
	return p, nil
}

// fix gives q with each word no item has (its key has no chunk) that typoTerm allows
// replaced by the nearest key the index has, up to MaxFixes of them; ok is false when
// none was.
func (x Index) fix(q Query, keys []string, chunks [][][]byte, next uint32) (Query, bool) {
	has := make(map[string]bool, len(keys))
	for i, k := range keys {
		has[k] = len(chunks[i]) > 0
	}
	var fixes []Fix
	budget := MaxTypoSteps
	terms := slices.Clone(q.Terms)
	for i, t := range terms {
		if len(fixes) == MaxFixes {
			break
		}
		if !typoTerm(t) || has[t.keys()[0]] {
			continue
		}
		if k := x.nearest(t.Tokens[0], next, &budget); k != "" {
			fixes = append(fixes, Fix{Word: t.Text, Key: k})
			terms[i] = Term{Text: k, Tokens: []string{k}, asKey: true}
		}
	}
	if len(fixes) == 0 {
		return q, false
	}
	out := Query{Terms: terms, Repeats: slices.Clone(q.Repeats), Partial: q.Partial, Fixes: fixes}
	// A fix that is another word of the query ("rfund refund") makes one term of the two.
	for i := 0; i < len(out.Terms); i++ {
		for j := 0; j < i; j++ {
			a, b := out.Terms[j], out.Terms[i]
			if (a.asKey || b.asKey) && !a.Quoted && !b.Quoted && slices.Equal(a.keys(), b.keys()) {
				out.Repeats[j] += out.Repeats[i]
				out.Terms = slices.Delete(out.Terms, i, i+1)
				out.Repeats = slices.Delete(out.Repeats, i, i+1)
				i--
				break
			}
		}
	}
	return out.finish(), true
}

// sizes reads the postings of the keys of terms (the words, not the phrases nor the stop
// words: Narrow doesn't ask for those), all at once, and gives Narrow's size: the bytes of
// a term's keys' postings, about three bytes an item that has them.
func (x Index) sizes(terms []Term, next uint32) func(keys []string) int {
	var keys []string
	seen := map[string]bool{}
	for _, t := range terms {
		if t.Quoted || t.Stop {
			continue
		}
		for _, k := range t.keys() {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	bytes := make(map[string]int, len(keys))
	for i, cs := range x.chunks(keys, next) {
		for _, c := range cs {
			bytes[keys[i]] += len(c) - 4
		}
	}
	return func(keys []string) int {
		n := 0
		for _, k := range keys {
			n += bytes[k]
		}
		return n
	}
}

// keyWeights is each key's idf times Okapi's weight for how many times the query gives it,
// (K3+1)·n/(K3+n): n is Query.Repeats summed over the terms that have the key (two words of
// one stem count twice), a stop word counting once however often it is given. In a question
// (Query.Loose) the keys of its quoted phrases weigh QuoteBoost times more.
func (p *Plan) keyWeights(termKeys [][]int, idf []float64) []float64 {
	if len(p.Query.Repeats) != len(termKeys) {
		return idf
	}
	times := make([]int, len(idf))
	boost := make([]bool, len(idf))
	for t, ks := range termKeys {
		n := p.Query.Repeats[t]
		if p.Query.Terms[t].Stop {
			n = 1
		}
		for _, i := range ks {
			times[i] += n
			boost[i] = boost[i] || p.Query.Loose && p.Query.Terms[t].Quoted
		}
	}
	w := make([]float64, len(idf))
	for i := range idf {
		q := float64(max(times[i], 1))
		w[i] = idf[i] * (p.Model.K3 + 1) * q / (p.Model.K3 + q)
		if boost[i] {
			w[i] *= QuoteBoost
		}
	}
	return w
}

// postings are the postings of a query's keys (Query.Keys), key by key, as Plan decoded
// them.
type postings struct {
	lists   [][]entry // each key's postings, in number order; nil if skipped
	skipped []bool    // the keys not decoded (MaxPostings)
	total   int       // the postings decoded, of all keys
}

// overBudget says which keys' postings are not decoded, so that a search decodes about
// MaxPostings bytes whatever its words: taking the keys by the bytes of their chunks, the
// smallest first, those past the budget. The smallest is always decoded, however big, so
// that a query whose words are all in most items still finds some.
func overBudget(chunks [][][]byte) []bool {
	size := make([]int, len(chunks))
	order := make([]int, len(chunks))
	for i, cs := range chunks {
		order[i] = i
		for _, c := range cs {
			size[i] += len(c)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return size[a] - size[b] })
	skipped := make([]bool, len(chunks))
	used := 0
	for n, i := range order {
		if n > 0 && used+size[i] > MaxPostings {
			skipped[i] = true
			continue
		}
		used += size[i]
	}
	return skipped
}

// decodePostings decodes the chunks of each key not skipped (each chunk ends with its
// number, as Index.chunks gives it).
func decodePostings(chunks [][][]byte, skipped []bool) (postings, error) {
	ps := postings{lists: make([][]entry, len(chunks)), skipped: skipped}
	for i, cs := range chunks {
		if skipped[i] {
			continue
		}
		for _, c := range cs {
			var err error
			j := binary.BigEndian.Uint32(c[len(c)-4:])
			if ps.lists[i], err = decodeChunk(ps.lists[i], j, c[:len(c)-4]); err != nil {
				return postings{}, err
			}
		}
		ps.total += len(ps.lists[i])
	}
	return ps, nil
}

// idf is each key's inverse document frequency among n items. How many items have a
// skipped key is not known: it is taken to be all of them (it is in most, or it would
// not have been skipped), so that it weighs next to nothing.
func (ps postings) idf(n float64) []float64 {
	idf := make([]float64, len(ps.lists))
	for i, l := range ps.lists {
		df := float64(len(l))
		if ps.skipped[i] {
			df = n
		}
		idf[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	return idf
}

// weigh gives each term its keys (indexes into keys, each once) and adds their idf to
// its weight (p.Weights). It also says which terms the postings answer for: a term of
// one unquoted token, short enough to be a key of its own and not skipped, is had by just
// the items with its key's postings; other terms need the text read to know.
func (p *Plan) weigh(keys []string, idf []float64, skipped []bool) (termKeys [][]int, sure uint64) {
	keyIndex := make(map[string]int, len(keys))
	for i, k := range keys {
		keyIndex[k] = i
	}
	termKeys = make([][]int, len(p.Query.Terms))
	for t, term := range p.Query.Terms {
		seen := map[int]bool{}
		for _, k := range term.keys() {
			if i := keyIndex[k]; !seen[i] {
				seen[i] = true
				termKeys[t] = append(termKeys[t], i)
				p.Weights[t] += idf[i]
			}
		}
		if !term.Quoted && len(term.Tokens) == 1 && len(Stem(term.Tokens[0])) <= MaxKey && !skipped[termKeys[t][0]] {
			sure |= 1 << t
		}
	}
	return termKeys, sure
}

// slotItems gives a slot to every item with a posting, in the order the postings come: the
// dense arrays of scores, lengths and terms are indexed by it.
func (ps postings) slotItems(next uint32) *slots {
	acc := newSlots(next, ps.total)
	for _, l := range ps.lists {
		for _, e := range l {
			acc.slot(e.num)
		}
	}
	return acc
}

// lengths are the tokens of each slot's item, in its text and in its title.
type lengths struct {
	text, title []float64
}

// readLengths reads the lengths of the items with a slot, for BM25F's length normalisation:
// only the chunks of lengths that hold one of them, all read at once.
func (x Index) readLengths(acc *slots) (lengths, error) {
	var js []uint32
	for _, num := range acc.nums {
		if j := num / Span; len(js) == 0 || js[len(js)-1] != j {
			js = append(js, j)
		}
	}
	slices.Sort(js)
	js = slices.Compact(js)
	ks := make([][]byte, len(js))
	for i, j := range js {
		ks[i] = lensKey(j)
	}
	vs := kv.GetAll(x.lens, ks)
	l := lengths{text: make([]float64, len(acc.nums)), title: make([]float64, len(acc.nums))}
	for i, j := range js {
		es, err := decodeLens(j, vs[i])
		if err != nil {
			return lengths{}, err
		}
		for _, e := range es {
			if s, ok := acc.find(e.num); ok {
				l.text[s], l.title[s] = float64(e.text), float64(e.title)
			}
		}
	}
	return l, nil
}

// scores is each slot's BM25F score of the words (m, against the lengths of st's
// items), summed key by key in the query's order: the same sums, and so the same
// scores to the last bit, on every store.
func (ps postings) scores(m Model, st Stats, acc *slots, idf []float64, lens lengths) []float64 {
	n := float64(max(st.Items, 1))
	avgText, avgTitle := max(float64(st.Text)/n, 1), max(float64(st.TitleToks)/n, 1)
	normText := make([]float64, len(acc.nums))
	normTitle := make([]float64, len(acc.nums))
	for s := range acc.nums {
		normText[s] = 1 - m.BText + m.BText*lens.text[s]/avgText
		normTitle[s] = 1 - m.BTitle + m.BTitle*lens.title[s]/avgTitle
	}
	score := make([]float64, len(acc.nums))
	for i, l := range ps.lists {
		for _, e := range l {
			s, _ := acc.find(e.num)
			tf := float64(e.value>>2)/normText[s] + m.WTitle*float64(e.value&3)/normTitle[s]
			score[s] += idf[i] * tf * (m.K1 + 1) / (m.K1 + tf)
		}
	}
	return score
}

// mayHave is the terms (bit t: term t) each slot's item may have, as far as the postings
// tell: those of whose keys it has every one, a skipped key counting as had (any item
// may have it). Only reading the text tells whether a phrase's tokens come in order.
func (ps postings) mayHave(termKeys [][]int, acc *slots) []uint64 {
	maybe := make([]uint64, len(acc.nums))
	count := make([]uint16, len(acc.nums))
	for t, ks := range termKeys {
		need := 0
		clear(count)
		for _, i := range ks {
			if ps.skipped[i] {
				continue
			}
			need++
			for _, e := range ps.lists[i] {
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
	return maybe
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

// Fetched is an item a store read for Rank: its title and text, and when it last changed (later ranks first among equals). Gone: it is
// no longer there.
type Fetched struct {
	Doc  Doc
	Time int64
	Gone bool
}

// Fetch reads the items numbered nums, in the store's transaction: as many of them, in order, as fit in budget bytes and, but for the first, in MaxBatch
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
	cs, k := p.cands(limit)
	r := &reader{q: p.Query, near: p.Model.Near, sc: newScanner(p.Query, p.Weights), lines: lines, budget: budget, fetch: fetch}
	cs, more, err := r.readBest(cs, k)
	if err != nil {
		return Result{}, err
	}
	if more {
		if err := r.readUnsure(cs); err != nil {
			return Result{}, err
		}
	}
	res, final := tally(cs)
	best(final, k, byWords)
	slices.SortFunc(final[:min(k, len(final))], byFinal)
	if limit > 0 && len(final) > limit {
		final = final[:limit]
	}
	for _, c := range final {
		res.Ranked = append(res.Ranked, c.ranked())
	}
	res.Read = budget - r.budget
	return res, nil
}

// cands are the plan's candidates as Rank begins with them, and how many it ranks (k).
func (p *Plan) cands(limit int) ([]*cand, int) {
	cs := make([]*cand, len(p.Candidates))
	req := p.Query.Required()
	for i, c := range p.Candidates {
		cs[i] = &cand{Candidate: c, found: true, every: c.Maybe&req == req, final: c.Score}
	}
	k := len(cs)
	if limit > 0 {
		k = min(k, max(limit, p.Model.Rerank))
	}
	return cs, k
}

// shortestFirst orders a batch to read as read does.
func shortestFirst(batch []*cand) {
	slices.SortStableFunc(batch, func(a, b *cand) int { return a.Len - b.Len })
}

func numsOf(batch []*cand) []uint32 {
	nums := make([]uint32, len(batch))
	for i, c := range batch {
		nums[i] = c.Num
	}
	return nums
}

// reader reads candidates' texts for Rank, within what is left of its budget, and
// matches the query in them.
type reader struct {
	q      Query
	near   float64 // Model.Near
	sc     *scanner
	lines  int // the lines to keep of each text (Hit)
	budget int // bytes of texts left to read
	fetch  Fetch
}

// read reads the texts of batch, the shortest first so that as many as can be are read
// within the budget, and matches each: whether it is still found, has every word, and its
// score with its words' nearness. It reports false when the budget ran out (fetch gave
// nothing) before all of batch was read.
func (r *reader) read(batch []*cand) (bool, error) {
	shortestFirst(batch)
	for len(batch) > 0 {
		got, used, err := r.fetch(numsOf(batch), r.budget)
		if err != nil {
			return false, err
		}
		r.budget -= used
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
			c.hit = r.sc.match(f.Doc, r.lines)
			c.found, c.every = c.hit.Found(r.q), c.hit.Every(r.q)
			c.final = c.Score + r.near*c.hit.Near
		}
		batch = batch[len(got):]
	}
	return true, nil
}

// readBest reads the best k candidates by their words (byWords), and reads again while
// reading shows some of those not found (they lack a phrase, or a word of several tokens)
// and others come up into the k. It gives cs without those found wanting (but for the
// last read's, which tally leaves out), the best k first, and false if the budget ran
// out before the best k were all read.
func (r *reader) readBest(cs []*cand, k int) ([]*cand, bool, error) {
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
		if more, err = r.read(unread); err != nil {
			return nil, false, err
		}
	}
	return cs, more, nil
}

// readUnsure reads the others that may lack a phrase or a word of several tokens (not
// Sure), to know whether they are found: they are counted only if they are.
func (r *reader) readUnsure(cs []*cand) error {
	var unsure []*cand
	for _, c := range cs {
		if !c.read && !c.Sure {
			unsure = append(unsure, c)
		}
	}
	if len(unsure) == 0 {
		return nil
	}
	_, err := r.read(unsure)
	return err
}

// tally counts the candidates found, with every word and with some, and those not known
// to be found because their texts were past the budget (Unread); it gives the found.
func tally(cs []*cand) (Result, []*cand) {
	var res Result
	found := make([]*cand, 0, len(cs))
	for _, c := range cs {
		switch {
		case !c.read && !c.Sure:
			res.Unread++
		case c.found:
			found = append(found, c)
			if c.every {
				res.Every++
			} else {
				res.Some++
			}
		}
	}
	return res, found
}

// byWords orders candidates as the postings can, before any text is read: every word
// first, then by the words' score, then the higher number first.
func byWords(a, b *cand) int {
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

// byFinal orders the candidates Rank gives: every word first, then by score with
// nearness, then the last changed first, then the higher number first.
func byFinal(a, b *cand) int {
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
}

// ranked is c as Rank gives it: scored with its words' nearness if its text was read.
func (c *cand) ranked() Ranked {
	score := c.Score
	if c.read {
		score = c.final
	}
	return Ranked{Num: c.Num, Hit: c.hit, Score: score, Every: c.every, Time: c.time}
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
