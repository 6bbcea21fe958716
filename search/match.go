package search

import (
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// Doc is what a query is matched against: a title, and a text in parts (a document's text
// is one part; a conversation's messages are a part each). A phrase never runs from one
// part into the next.
type Doc struct {
	Title string
	Parts []string
}

// Line is a line of a text that holds some of a query's words or phrases.
type Line struct {
	Part   int    // which of the Doc's parts
	Number int    // 1-based, in its part
	Text   string // the line, white space trimmed, cut around its first match when long
	Terms  int    // how many of the query's terms it holds
	score  float64
}

// Hit is what Rank finds in one Doc it reads.
type Hit struct {
	In      uint64 // bit i set: term i is in the title or the text
	InTitle uint64 // bit i set: term i is in the title
	// Near is how close together the terms are in the text: for each pair of terms that
	// come within Near tokens of each other, 1/d² for each time at a distance d, saturated,
	// weighed by the rarer of the two (ranking adds it to the words' score).
	Near  float64
	Lines []Line // the best lines, at most as many as asked, in text order
}

// Found reports whether h is a document that q finds: one that has every quoted phrase
// and at least one term (not a stop word, when q has others: Query.Required).
func (h Hit) Found(q Query) bool { return h.In&q.Required() != 0 && h.In&q.Quoted() == q.Quoted() }

// Every reports whether h has every word and phrase of q (Query.Required).
func (h Hit) Every(q Query) bool { return h.In&q.Required() == q.Required() && h.Found(q) }

// LineWidth is about how many bytes of a long line a Hit keeps around its first match.
const LineWidth = 160

// Near is the most tokens between two terms that count as near each other.
const Near = 6

// matcher is a query made ready to scan texts with: each term is a sequence of atoms
// (exact tokens for a quoted term, stems for the others), found by an Aho-Corasick
// automaton over the atoms of its kind, so that scanning a text costs the same for
// every token whatever the query (a phrase of 330 distinct characters included).
type matcher struct {
	n       int              // terms
	exact   map[string]int32 // folded token → exact atom
	stemmed map[string]int32 // stem → stem atom
	first   [2][256]bool     // first bytes of each kind's atoms
	pair    [2]*pairs        // first two bytes of the tokens each kind's atoms may be
	minLen  [2]int           // shortest atom of each kind
	auto    [2]*automaton    // exact, stemmed; nil when the query has none of that kind
	longest int              // tokens in the longest term
	lens    []int            // tokens in each term
}

const (
	kindExact = iota
	kindStem
)

type automaton struct {
	alpha int
	next  []int32   // state*alpha + atom → state
	out   [][]int32 // the terms that end at each state
}

func newMatcher(q Query) *matcher {
	m := &matcher{n: len(q.Terms), exact: map[string]int32{}, stemmed: map[string]int32{}, lens: make([]int, len(q.Terms))}
	var pats [2][][]int32
	var terms [2][]int32
	m.minLen = [2]int{1 << 30, 1 << 30}
	for i, t := range q.Terms {
		kind, atoms := kindStem, m.stemmed
		if t.Quoted {
			kind, atoms = kindExact, m.exact
		}
		pat := make([]int32, len(t.Tokens))
		for j, tok := range t.Tokens {
			a := tok
			if kind == kindStem && !t.asKey {
				a = Stem(tok)
			}
			id, ok := atoms[a]
			if !ok {
				id = int32(len(atoms))
				atoms[a] = id
				m.first[kind][a[0]] = true
				m.minLen[kind] = min(m.minLen[kind], len(a))
				if m.pair[kind] == nil {
					m.pair[kind] = new(pairs)
				}
				m.pair[kind].add(a)
			}
			pat[j] = id
		}
		pats[kind] = append(pats[kind], pat)
		terms[kind] = append(terms[kind], int32(i))
		m.lens[i] = len(pat)
		m.longest = max(m.longest, len(pat))
	}
	for kind := range 2 {
		if len(pats[kind]) > 0 {
			alpha := len(m.exact)
			if kind == kindStem {
				alpha = len(m.stemmed)
			}
			m.auto[kind] = build(alpha, pats[kind], terms[kind])
		}
	}
	return m
}

// pairs is a set of the first two bytes of tokens. A token's stem begins with the token's
// first two bytes (Snowball's English stemmer removes and changes endings only), but for a
// stem of one letter ("oed" is "o") and for "dying", "lying" and "tying" ("die", "lie",
// "tie"): so most tokens of a text are known not to be any atom of a query without looking
// them up.
type pairs [1 << 16 / 64]uint64

func (p *pairs) set(a, b byte) { p[int(a)<<2|int(b)>>6] |= 1 << (b & 63) }

func (p *pairs) has(tok []byte) bool {
	return len(tok) < 2 || p[int(tok[0])<<2|int(tok[1])>>6]&(1<<(tok[1]&63)) != 0
}

func (p *pairs) add(atom string) {
	if len(atom) < 2 {
		for b := range 256 {
			p.set(atom[0], byte(b))
		}
		return
	}
	p.set(atom[0], atom[1])
	if len(atom) == 3 && atom[1:] == "ie" {
		p.set(atom[0], 'y')
	}
}

// build makes the automaton that finds pats (of atoms below alpha), pats[i] being term
// terms[i]: a trie with every missing move filled in from the longest suffix that has it.
func build(alpha int, pats [][]int32, terms []int32) *automaton {
	a := &automaton{alpha: alpha}
	grow := func() int32 {
		s := int32(len(a.out))
		for range alpha {
			a.next = append(a.next, -1)
		}
		a.out = append(a.out, nil)
		return s
	}
	grow()
	for i, p := range pats {
		s := int32(0)
		for _, sym := range p {
			at := int(s)*alpha + int(sym)
			if a.next[at] < 0 {
				c := grow()
				a.next[at] = c
			}
			s = a.next[at]
		}
		a.out[s] = append(a.out[s], terms[i])
	}
	fail := make([]int32, len(a.out))
	var queue []int32
	for sym := range alpha {
		if c := a.next[sym]; c < 0 {
			a.next[sym] = 0
		} else {
			queue = append(queue, c)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if f := fail[s]; len(a.out[f]) > 0 {
			a.out[s] = append(slices.Clip(a.out[s]), a.out[f]...)
		}
		for sym := range alpha {
			at := int(s)*alpha + sym
			via := a.next[int(fail[s])*alpha+sym]
			if c := a.next[at]; c < 0 {
				a.next[at] = via
			} else {
				fail[c] = via
				queue = append(queue, c)
			}
		}
	}
	return a
}

// scanner scans texts for one matcher; it keeps what it learnt of tokens (their atoms)
// from one text to the next. Not for use by several goroutines at once.
type scanner struct {
	m       *matcher
	w       []float64 // each term's weight, for the lines and Near
	req     uint64    // the terms a line needs one of (Query.Required)
	memo    map[string]int32
	state   [2]int32
	ring    []recent // the last tokens: where a phrase that ends here started
	pos     int
	near    []recentOcc
	acc     []float64 // acc[i*n+j], i < j: nearness of terms i and j
	touched []int
	// what is being found
	in    uint64
	lines []Line
	most  int
	cur   lineAcc
	text  string
	part  int
}

type recent struct{ at, line int }

type recentOcc struct {
	term       int32
	start, end int
}

type lineAcc struct {
	line, at int
	in       uint64
	open     bool
}

const maxMemo = 1 << 15

// newScanner is a scanner for q, term i weighing w[i] (Plan.Weights).
func newScanner(q Query, w []float64) *scanner {
	m := q.matcher()
	return &scanner{m: m, w: w, req: q.Required(), memo: map[string]int32{}, ring: make([]recent, max(1, m.longest)), acc: make([]float64, m.n*m.n)}
}

// atom is tok's atom of the stemmed kind, or -1.
func (sc *scanner) stemAtom(tok []byte) int32 {
	m := sc.m
	if len(tok) < m.minLen[kindStem] || !m.first[kindStem][tok[0]] || !m.pair[kindStem].has(tok) {
		return -1
	}
	if !stemmable(tok) {
		if id, ok := m.stemmed[string(tok)]; ok {
			return id
		}
		return -1
	}
	if id, ok := sc.memo[string(tok)]; ok {
		return id
	}
	id, ok := m.stemmed[stemBytes(tok, "")]
	if !ok {
		id = -1
	}
	if len(sc.memo) < maxMemo {
		sc.memo[string(tok)] = id
	}
	return id
}

// token moves the automata on by one token of the text, which starts at byte at of line.
func (sc *scanner) token(tok []byte, at, line int, title bool) {
	m := sc.m
	sc.ring[sc.pos%len(sc.ring)] = recent{at: at, line: line}
	for kind := range 2 {
		a := m.auto[kind]
		if a == nil {
			continue
		}
		var sym int32 = -1
		if kind == kindExact {
			if len(tok) >= m.minLen[kindExact] && m.first[kindExact][tok[0]] && m.pair[kindExact].has(tok) {
				if id, ok := m.exact[string(tok)]; ok {
					sym = id
				}
			}
		} else {
			sym = sc.stemAtom(tok)
		}
		if sym < 0 {
			sc.state[kind] = 0
			continue
		}
		s := a.next[int(sc.state[kind])*a.alpha+int(sym)]
		sc.state[kind] = s
		for _, t := range a.out[s] {
			sc.found(int(t), title)
		}
	}
	sc.pos++
}

// found is an occurrence of term t that ends at the current token.
func (sc *scanner) found(t int, title bool) {
	sc.in |= 1 << t
	if title {
		return
	}
	n := sc.m.lens[t]
	start := sc.pos - n + 1
	first := sc.ring[start%len(sc.ring)]
	// The line: where it starts, unless a later line is already being counted.
	if !sc.cur.open || first.line > sc.cur.line {
		sc.endLine()
		sc.cur = lineAcc{line: first.line, at: first.at, open: true}
	}
	sc.cur.in |= 1 << t
	// Nearness: with each other term that ended at most Near tokens before this one starts.
	keep := sc.near[:0]
	for _, r := range sc.near {
		if start-r.end > Near {
			continue
		}
		keep = append(keep, r)
		if d := start - r.end; d >= 1 && int(r.term) != t {
			i, j := min(int(r.term), t), max(int(r.term), t)
			k := i*sc.m.n + j
			if sc.acc[k] == 0 {
				sc.touched = append(sc.touched, k)
			}
			sc.acc[k] += 1 / float64(d*d)
		}
	}
	if len(keep) == 16 {
		keep = keep[1:]
	}
	sc.near = append(keep, recentOcc{term: int32(t), start: start, end: sc.pos})
}

// endLine offers the line being counted to the best lines.
func (sc *scanner) endLine() {
	if !sc.cur.open || sc.most <= 0 {
		sc.cur.open = false
		return
	}
	c := sc.cur
	sc.cur.open = false
	if c.in&sc.req == 0 {
		return // stop words alone
	}
	var score float64
	for in := c.in; in != 0; in &= in - 1 {
		score += sc.w[bits.TrailingZeros64(in)]
	}
	// Worse than the worst of a full set: not kept (an earlier line wins a tie).
	if len(sc.lines) == sc.most && score <= sc.lines[len(sc.lines)-1].score {
		return
	}
	l := Line{Part: sc.part, Number: c.line, Text: cutLine(sc.text, c.at), Terms: bits.OnesCount64(c.in), score: score}
	i, _ := slices.BinarySearchFunc(sc.lines, score, func(l Line, s float64) int {
		if l.score >= s {
			return -1
		}
		return 1
	})
	sc.lines = slices.Insert(sc.lines, i, l)
	if len(sc.lines) > sc.most {
		sc.lines = sc.lines[:sc.most]
	}
}

// scanText feeds text's tokens to the automata: the title's when title, else part part
// of the text.
func (sc *scanner) scanText(text string, title bool) {
	sc.state = [2]int32{}
	sc.pos += Near + 1 // nothing near across parts
	sc.text = text
	buf := make([]byte, 0, 64)
	start, line, startLine := -1, 1, 1
	flush := func() {
		if len(buf) > 0 { // as scan: a run that folds to nothing (a lone mark) is no token
			sc.token(buf, start, startLine, title)
		}
		buf, start = buf[:0], -1
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if f := asciiWord[c]; f != 0 {
				if start < 0 {
					start, startLine = i, line
				}
				buf = append(buf, f)
			} else {
				if start >= 0 {
					flush()
				}
				if c == '\n' {
					line++
				}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			flush()
			buf = append(buf, text[i:i+n]...)
			start, startLine = i, line
			flush()
		case isWordRune(r):
			if start < 0 {
				start, startLine = i, line
			}
			buf = append(buf, fold(r)...)
		case start >= 0:
			flush()
		}
		i += n
	}
	flush()
	if !title {
		sc.endLine()
	}
}

// match scans doc, keeping up to lines of its best lines.
func (sc *scanner) match(doc Doc, lines int) Hit {
	sc.in, sc.lines, sc.most, sc.near = 0, nil, lines, sc.near[:0]
	for _, k := range sc.touched {
		sc.acc[k] = 0
	}
	sc.touched = sc.touched[:0]
	sc.scanText(doc.Title, true)
	h := Hit{InTitle: sc.in}
	for i, p := range doc.Parts {
		sc.part = i
		sc.cur.open = false
		sc.scanText(p, false)
	}
	h.In = sc.in
	n := sc.m.n
	for _, k := range sc.touched {
		i, j := k/n, k%n
		a := sc.acc[k]
		h.Near += min(sc.w[i], sc.w[j]) * a / (a + 1)
	}
	h.Lines = sc.lines
	slices.SortFunc(h.Lines, func(a, b Line) int {
		if a.Part != b.Part {
			return a.Part - b.Part
		}
		return a.Number - b.Number
	})
	sc.text = ""
	return h
}

// cutLine is the line of text around byte offset at, trimmed, and cut to about LineWidth
// bytes around at when longer, with "…" where it was cut.
func cutLine(text string, at int) string {
	start := strings.LastIndexByte(text[:at], '\n') + 1
	end := strings.IndexByte(text[at:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += at
	}
	line := strings.TrimRight(text[start:end], "\r")
	at -= start
	lead := len(line) - len(strings.TrimLeft(line, " \t"))
	line, at = strings.TrimSpace(line), at-lead
	if len(line) <= LineWidth {
		return line
	}
	from := max(0, at-LineWidth/3)
	to := min(len(line), from+LineWidth)
	from = max(0, min(from, to-LineWidth))
	for from > 0 && !utf8.RuneStart(line[from]) {
		from--
	}
	for to < len(line) && !utf8.RuneStart(line[to]) {
		to++
	}
	out := line[from:to]
	if from > 0 {
		out = "…" + strings.TrimLeft(out, " ")
	}
	if to < len(line) {
		out = strings.TrimRight(out, " ") + "…"
	}
	return out
}
