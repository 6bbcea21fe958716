package search

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// Line is a line of a text that holds some of a query's words or phrases.
type Line struct {
	Number int    // 1-based
	Text   string // the line, white space trimmed, cut around its first match when long
	Terms  int    // how many of the query's terms it holds
}

// Hit is what Match finds in one title and text.
type Hit struct {
	Found      bool   // every term is in the title or the text
	In         uint32 // bit i set: term i is in the title or the text
	TitleTerms int    // how many terms the title has
	Hits       int    // occurrences in the text, each term counted at most MaxCount times
	Span       int    // the fewest tokens of the text that hold every term; 0 with one term, or when the text lacks some
	Counts     []int  // occurrences of each term in the text
	Lines      []Line // the lines with the most terms, at most as many as asked, in text order
}

// MaxCount is the most occurrences of one term that count for ranking.
const MaxCount = 10

// LineWidth is about how many bytes of a long line Match keeps around its first match.
const LineWidth = 160

// matcher is a query made ready to scan texts with.
type matcher struct {
	ids     map[string]int // token → its index in the query's distinct tokens
	toks    []string       // the distinct tokens
	ends    [][]int        // for each distinct token, the terms that end with it
	terms   [][]int        // each term's tokens, as indexes
	longest int
}

func newMatcher(q Query) *matcher {
	m := &matcher{ids: map[string]int{}}
	m.toks = q.Distinct()
	for i, tok := range m.toks {
		m.ids[tok] = i
	}
	m.ends = make([][]int, len(m.ids))
	for i, t := range q.Terms {
		ts := make([]int, len(t.Tokens))
		for j, tok := range t.Tokens {
			ts[j] = m.ids[tok]
		}
		m.terms = append(m.terms, ts)
		last := ts[len(ts)-1]
		m.ends[last] = append(m.ends[last], i)
		m.longest = max(m.longest, len(ts))
	}
	return m
}

// occurrence is where a term was found: the token position it ends at, and the byte offset
// and line it starts at.
type occurrence struct {
	term, end, at, line int
}

type seen struct {
	id, at int
}

// each calls fn with every occurrence of a term in text, in the order their ends come.
func (m *matcher) each(text string, fn func(occurrence)) {
	ring := make([]seen, m.longest)
	pos := 0
	// Lines are counted only up to where an occurrence starts: most tokens are none.
	line, counted := 1, 0
	lineOf := func(at int) int {
		if at >= counted {
			line += strings.Count(text[counted:at], "\n")
		} else {
			line -= strings.Count(text[at:counted], "\n")
		}
		counted = at
		return line
	}
	scan(text, func(tok []byte, at int) {
		id := m.id(tok)
		ring[pos%len(ring)] = seen{id: id, at: at}
		if id >= 0 {
		terms:
			for _, t := range m.ends[id] {
				ts := m.terms[t]
				if len(ts) > pos+1 {
					continue
				}
				for k := range len(ts) - 1 {
					if ring[(pos-len(ts)+1+k)%len(ring)].id != ts[k] {
						continue terms
					}
				}
				first := ring[(pos-len(ts)+1)%len(ring)]
				fn(occurrence{term: t, end: pos, at: first.at, line: lineOf(first.at)})
			}
		}
		pos++
	})
}

// id is tok's index among the query's distinct tokens, or -1. A query has few: comparing
// lengths first turns most tokens away without hashing them.
func (m *matcher) id(tok []byte) int {
	for i, t := range m.toks {
		if len(t) == len(tok) && t == string(tok) {
			return i
		}
	}
	return -1
}

// Match finds q's words and phrases in title and text, giving up to lines of the text's
// matching lines.
func Match(q Query, title, text string, lines int) Hit {
	m := q.matcher()
	all := uint32(1)<<len(q.Terms) - 1
	var h Hit
	var titleIn uint32
	m.each(title, func(o occurrence) { titleIn |= 1 << o.term })
	h.TitleTerms = bits.OnesCount32(titleIn)

	counts := make([]int, len(q.Terms))
	var (
		textIn uint32
		occ    []occurrence
		byLine []lineHit
	)
	m.each(text, func(o occurrence) {
		counts[o.term]++
		textIn |= 1 << o.term
		if len(q.Terms) > 1 {
			occ = append(occ, o)
		}
		if n := len(byLine); n > 0 && byLine[n-1].line == o.line {
			byLine[n-1].in |= 1 << o.term
		} else {
			byLine = append(byLine, lineHit{line: o.line, at: o.at, in: 1 << o.term})
		}
	})
	h.Counts = counts
	for _, c := range counts {
		h.Hits += min(c, MaxCount)
	}
	h.In = titleIn | textIn
	h.Found = h.In == all
	if textIn == all && len(q.Terms) > 1 {
		h.Span = m.span(occ, len(q.Terms))
	}
	h.Lines = bestLines(text, byLine, lines)
	return h
}

// span is the fewest tokens that hold an occurrence of each of n terms.
func (m *matcher) span(occ []occurrence, n int) int {
	have := make([]int, n)
	missing, best := n, math.MaxInt
	i := 0
	for _, o := range occ {
		if have[o.term] == 0 {
			missing--
		}
		have[o.term]++
		for missing == 0 {
			first := occ[i]
			start := first.end - len(m.terms[first.term]) + 1
			best = min(best, o.end-start+1)
			have[first.term]--
			if have[first.term] == 0 {
				missing++
			}
			i++
		}
	}
	return best
}

type lineHit struct {
	line, at int
	in       uint32
}

// bestLines picks up to most lines with the most terms (the earliest first among equals),
// and gives them in text order.
func bestLines(text string, hits []lineHit, most int) []Line {
	if most <= 0 || len(hits) == 0 {
		return nil
	}
	picked := slices.Clone(hits)
	slices.SortStableFunc(picked, func(a, b lineHit) int {
		return bits.OnesCount32(b.in) - bits.OnesCount32(a.in)
	})
	picked = picked[:min(most, len(picked))]
	slices.SortFunc(picked, func(a, b lineHit) int { return a.line - b.line })
	out := make([]Line, len(picked))
	for i, p := range picked {
		out[i] = Line{Number: p.line, Text: cutLine(text, p.at), Terms: bits.OnesCount32(p.in)}
	}
	return out
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

// Compare orders hits best first: negative when a ranks before b, positive when after, 0
// when the ranking can't tell them apart (the store's own order then decides).
func Compare(a, b Hit) int {
	if a.TitleTerms != b.TitleTerms {
		return b.TitleTerms - a.TitleTerms
	}
	if a.Hits != b.Hits {
		return b.Hits - a.Hits
	}
	return spanRank(a.Span) - spanRank(b.Span)
}

func spanRank(s int) int {
	if s == 0 {
		return math.MaxInt32
	}
	return min(s, math.MaxInt32)
}

// Combine is what the hits of several texts (the messages of a conversation, its title)
// make together: a term in any counts, occurrences add up, the closest span is kept. Their
// Lines are left out. All must come from one query.
func Combine(hits []Hit) Hit {
	var out Hit
	for _, h := range hits {
		if out.Counts == nil {
			out.Counts = make([]int, len(h.Counts))
		}
		out.In |= h.In
		out.TitleTerms = max(out.TitleTerms, h.TitleTerms)
		for i, c := range h.Counts {
			out.Counts[i] += c
		}
		if h.Span > 0 && (out.Span == 0 || h.Span < out.Span) {
			out.Span = h.Span
		}
	}
	for _, c := range out.Counts {
		out.Hits += min(c, MaxCount)
	}
	out.Found = len(out.Counts) > 0 && out.In == uint32(1)<<len(out.Counts)-1
	return out
}
