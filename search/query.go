package search

import (
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on what of a query is looked for. A longer query is not refused: MaxTerms of its
// words and phrases are looked for, and its first MaxTokens tokens (a phrase that would pass
// them is cut; Query.Partial says when something was left out), of its first MaxWords, so
// that the cost of a query is bounded whatever its length. Which MaxTerms: Parse keeps the
// first (a stop word among them giving its place to a later word that is not one), and
// remembers up to MaxCandidates; Index.Plan then keeps the rarest of those in the index
// (Query.Narrow), so that a question whose key words come late still finds them.
const (
	MaxTerms      = 64
	MaxCandidates = 4 * MaxTerms
	MaxTokens     = 512
	// MaxWords is how many of a query's words and phrases are read at all: those past the
	// first MaxTerms still count when they repeat one (Query.Repeats) or take a stop
	// word's place.
	MaxWords = 4096
)

// LooseQuotes is how many words outside its quotes (stop words not counted) make a query
// a question rather than a search for a phrase: in such a query a quoted phrase weighs
// QuoteBoost times more, but a text without it is still found. A shorter query's phrases
// must be in every text found.
const LooseQuotes = 4

// QuoteBoost is how much more a quoted phrase of a question (LooseQuotes) weighs.
const QuoteBoost = 2.0

// ErrEmptyQuery is returned by Parse for a query without a word to look for.
var ErrEmptyQuery = errors.New("the query has no word to look for")

// Term is one word or "quoted phrase" of a query.
type Term struct {
	Text   string   // as the query gave it; a quoted phrase in double quotes
	Tokens []string // folded
	// Quoted: a "quoted phrase" (or "word"), which every document found must have,
	// exactly: its tokens one after another as they are, not stemmed. Other terms are
	// found by their tokens' stems; a word of several tokens ("e-mail", "東京") still
	// needs them one after another.
	Quoted bool
	// Stop: one English stop word ("the", "of"), not quoted: see Query.Required.
	Stop bool
	// asKey: Tokens are the index's keys already, not to be stemmed (a typo's fix).
	asKey bool
}

// Query is what Parse makes of a query.
type Query struct {
	Text    string // the terms looked for, with white space folded
	Terms   []Term
	Partial bool // some of the query was left out (MaxTerms, MaxTokens)
	// Repeats is how many times each term was given (Terms[i] Repeats[i] times): a word a
	// long question says three times weighs three times one it says once.
	Repeats []int
	// Loose: the query is a question (LooseQuotes) whose quoted phrases rank but don't
	// filter: Quoted is empty.
	Loose bool
	// Fixes are the words no item had that were searched for as the nearest word the
	// index has instead (typo.go), in the query's order.
	Fixes []Fix
	m     *matcher
	// cands are the distinct terms read, up to MaxCandidates, with how many times each was
	// given, when there are more than Terms holds: what Narrow chooses from.
	cands   []Term
	candRep []int
}

// Parse reads a query: words, and phrases in double quotes (straight or curly; an unclosed
// quote runs to the end). A word or phrase without a letter or digit is left out; the
// same term twice is one term, given twice (Query.Repeats). It returns ErrEmptyQuery when
// no term is left.
func Parse(q string) (Query, error) {
	if !utf8.ValidString(q) {
		q = strings.ToValidUTF8(q, " ")
	}
	p := parsing{seen: map[string]int{}}
	rest := q
	for rest != "" {
		i := strings.IndexFunc(rest, isQuote)
		words := rest
		if i >= 0 {
			words = rest[:i]
		}
		for _, w := range strings.FieldsFunc(words, unicode.IsSpace) {
			p.add(w, false)
		}
		if i < 0 {
			break
		}
		_, n := utf8.DecodeRuneInString(rest[i:])
		rest = rest[i+n:]
		j := strings.IndexFunc(rest, isQuote)
		if j < 0 {
			p.add(rest, true)
			break
		}
		p.add(rest[:j], true)
		_, n = utf8.DecodeRuneInString(rest[j:])
		rest = rest[j+n:]
	}
	out := p.out
	if len(out.Terms) == 0 {
		return Query{}, ErrEmptyQuery
	}
	if len(p.cands) > len(out.Terms) {
		out.cands, out.candRep = p.cands, p.candRep
	}
	return out.finish(), nil
}

// finish sets what follows from q's terms: Text, Loose, the matcher.
func (q Query) finish() Query {
	texts := make([]string, len(q.Terms))
	words, quoted := 0, false
	for i, t := range q.Terms {
		texts[i] = t.Text
		quoted = quoted || t.Quoted
		if !t.Quoted && !t.Stop {
			words++
		}
	}
	q.Text = strings.Join(texts, " ")
	q.Loose = quoted && words >= LooseQuotes
	q.m = newMatcher(q)
	return q
}

// Narrow keeps MaxTerms of the terms a long query gave (Query.Partial, up to MaxCandidates
// of them), in the query's order: every quoted phrase, then the words with the smallest
// size (how common each is: size(keys) is given each term's index keys), a word of size 0
// (not in the index) after those that are, stop words last. A query of at most MaxTerms
// terms is returned as it is.
func (q Query) Narrow(size func(keys []string) int) Query {
	if len(q.cands) == 0 {
		return q
	}
	type ranked struct {
		i, rank, size int
	}
	rs := make([]ranked, len(q.cands))
	for i, t := range q.cands {
		r := ranked{i: i}
		switch {
		case t.Quoted:
		case t.Stop:
			r.rank = 3
		default:
			r.size = size(t.keys())
			r.rank = 1
			if r.size == 0 {
				r.rank = 2
			}
		}
		rs[i] = r
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return a.size - b.size
	})
	keep := make([]bool, len(q.cands))
	tokens := 0
	n := 0
	for _, r := range rs {
		if n == MaxTerms {
			break
		}
		if t := len(q.cands[r.i].Tokens); tokens+t <= MaxTokens {
			keep[r.i], tokens, n = true, tokens+t, n+1
		}
	}
	out := Query{Partial: true}
	for i, t := range q.cands {
		if keep[i] {
			out.Terms = append(out.Terms, t)
			out.Repeats = append(out.Repeats, q.candRep[i])
		}
	}
	return out.finish()
}

// parsing is a query being read by Parse.
type parsing struct {
	out      Query
	seen     map[string]int // a term's key: its index in Terms, or -1 once put out
	tokens   int            // tokens kept
	read     int            // words and phrases read
	cands    []Term         // every distinct term read, up to MaxCandidates (Query.cands)
	candRep  []int
	candSeen map[string]int
}

// add reads one word, or one quoted phrase, of the query.
func (p *parsing) add(text string, quoted bool) {
	if p.tokens == MaxTokens || p.read == MaxWords {
		if strings.TrimSpace(text) != "" {
			p.out.Partial = true
		}
		return
	}
	p.read++
	toks := Tokens(text)
	if len(toks) == 0 {
		return
	}
	if n := MaxTokens - p.tokens; len(toks) > n {
		toks, p.out.Partial = toks[:n], true
	}
	term := Term{Text: text, Tokens: toks, Quoted: quoted, Stop: !quoted && len(toks) == 1 && stopWords[toks[0]]}
	if quoted {
		term.Text = `"` + strings.Join(strings.Fields(text), " ") + `"`
	}
	key := term.seenKey()
	p.candidate(key, term)
	if i, ok := p.seen[key]; ok {
		if i >= 0 {
			p.out.Repeats[i]++
		}
		return
	}
	if len(p.out.Terms) == MaxTerms && !p.makeRoom(term) {
		return
	}
	p.seen[key] = len(p.out.Terms)
	p.out.Repeats = append(p.out.Repeats, 1)
	p.tokens += len(toks)
	p.out.Terms = append(p.out.Terms, term)
}

// candidate counts term (with key) among the distinct terms read, while there is room.
func (p *parsing) candidate(key string, term Term) {
	if p.candSeen == nil {
		p.candSeen = map[string]int{}
	}
	if i, ok := p.candSeen[key]; ok {
		p.candRep[i]++
		return
	}
	if len(p.cands) == MaxCandidates {
		return
	}
	p.candSeen[key] = len(p.cands)
	p.cands = append(p.cands, term)
	p.candRep = append(p.candRep, 1)
}

// makeRoom, when MaxTerms are taken, puts out the first stop word for term, unless term is
// one too (or none is left); it tells whether there is room now.
func (p *parsing) makeRoom(term Term) bool {
	p.out.Partial = true
	i := slices.IndexFunc(p.out.Terms, func(t Term) bool { return t.Stop })
	if term.Stop || i < 0 {
		return false
	}
	p.seen[p.out.Terms[i].seenKey()] = -1
	for k, j := range p.seen {
		if j > i {
			p.seen[k] = j - 1
		}
	}
	p.out.Terms = slices.Delete(p.out.Terms, i, i+1)
	p.out.Repeats = slices.Delete(p.out.Repeats, i, i+1)
	return true
}

// Unquoted is q with its double quotes taken out: its phrases' words as words. A store
// searches for it when no document has a quoted phrase, rather than answer nothing.
func Unquoted(q string) string {
	return strings.Map(func(r rune) rune {
		if isQuote(r) {
			return ' '
		}
		return r
	}, q)
}

func isQuote(r rune) bool { return r == '"' || r == '“' || r == '”' || r == '„' }

// matcher is the query made ready to scan texts with, made once by Parse.
func (q Query) matcher() *matcher {
	if q.m != nil {
		return q.m
	}
	return newMatcher(q)
}

// Keys returns the index keys of the query's tokens (their stems), each once, in the
// order they come: what an index is asked for.
func (q Query) Keys() []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range q.Terms {
		for _, k := range t.keys() {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// seenKey is what tells t from the query's other terms: its folded tokens, a quote before
// a phrase's.
func (t Term) seenKey() string {
	k := strings.Join(t.Tokens, " ")
	if t.Quoted {
		k = `"` + k
	}
	return k
}

// keys are the index keys of t's tokens, in order.
func (t Term) keys() []string {
	out := make([]string, len(t.Tokens))
	for i, tok := range t.Tokens {
		if t.asKey {
			out[i] = key(tok)
		} else {
			out[i] = key(Stem(tok))
		}
	}
	return out
}

// Required is the set of terms (bit i: term i) a document must have to have "every word"
// of q: all but the stop words, or all when q has nothing else.
func (q Query) Required() uint64 {
	var all, req uint64
	for i, t := range q.Terms {
		all |= 1 << i
		if !t.Stop {
			req |= 1 << i
		}
	}
	if req == 0 {
		return all
	}
	return req
}

// Quoted is the set of q's quoted terms that every document found has: none in a
// question (Loose).
func (q Query) Quoted() uint64 {
	var m uint64
	if q.Loose {
		return 0
	}
	for i, t := range q.Terms {
		if t.Quoted {
			m |= 1 << i
		}
	}
	return m
}

// All is the set of all of q's terms.
func (q Query) All() uint64 {
	if len(q.Terms) == 64 {
		return ^uint64(0)
	}
	return 1<<len(q.Terms) - 1
}
