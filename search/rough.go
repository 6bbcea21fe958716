package search

import (
	"bytes"
	"slices"
	"sync"
	"unicode/utf8"
)

// Rough is Match without the lines: whether q is found in title and text, and what ranks
// it. It gives the same as Match, faster: when every token
// of q is ASCII, it folds the text once into a buffer of tokens separated by spaces and
// finds each term's last token with bytes.Index, looking back for the rest, rather than
// cutting every token out of the text. A store reads every candidate of a phrase query
// with it, and only those that make the first page with Match.
func Rough(q Query, title, text string) Hit { return rough(q, title, text) }

// RoughBytes is Rough of a text in bytes (as a store keeps it: nothing is copied).
func RoughBytes(q Query, title string, text []byte) Hit { return rough(q, title, text) }

var bufs = sync.Pool{New: func() any { return new([]byte) }}

func rough[T string | []byte](q Query, title string, text T) Hit {
	if !q.ascii() {
		return Match(q, title, string(text), 0)
	}
	var h Hit
	buf := foldInto(make([]byte, 0, len(title)+2), title)
	for i, t := range q.Terms {
		if countTerm(buf, t.Tokens, 1, nil) > 0 {
			h.In |= 1 << i
			h.TitleTerms++
		}
	}
	// The text's buffer is kept for the next text: a search folds thousands.
	pooled := bufs.Get().(*[]byte)
	defer bufs.Put(pooled)
	buf = foldInto((*pooled)[:0], text)
	*pooled = buf
	h.Counts = make([]int, len(q.Terms))
	var occ []occurrence // for the span: each occurrence's term and the token it ends at
	for i, t := range q.Terms {
		var at func(int)
		if len(q.Terms) > 1 {
			at = func(end int) { occ = append(occ, occurrence{term: i, end: end}) }
		}
		n := countTerm(buf, t.Tokens, -1, at)
		h.Counts[i] = n
		h.Hits += min(n, MaxCount)
		if n > 0 {
			h.In |= 1 << i
		}
	}
	all := uint32(1)<<len(q.Terms) - 1
	h.Found = h.In == all
	if len(q.Terms) > 1 && h.Counts != nil && !slices.Contains(h.Counts, 0) {
		slices.SortFunc(occ, func(a, b occurrence) int {
			if a.end != b.end {
				return a.end - b.end
			}
			return a.term - b.term
		})
		h.Span = q.matcher().span(occ, len(q.Terms))
	}
	return h
}

// ascii reports whether every token of q is ASCII.
func (q Query) ascii() bool {
	for _, t := range q.Terms {
		for _, tok := range t.Tokens {
			for i := range len(tok) {
				if tok[i] >= utf8.RuneSelf {
					return false
				}
			}
		}
	}
	return true
}

// foldInto appends s's tokens to buf, folded, each followed by one space (and one before
// the first): a text's tokens as scan cuts them.
func foldInto[T string | []byte](buf []byte, s T) []byte {
	// Written by index into room made ahead: an append a byte costs twice as much. Only a
	// non-ASCII rune can grow (a CJK one gets spaces around it), so room is checked there.
	n := len(buf)
	buf = slices.Grow(buf, len(s)+2)
	buf = buf[:cap(buf)]
	buf[n] = ' '
	n++
	in := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if f := asciiWord[c]; f != 0 {
				buf[n] = f
				n++
				in = true
			} else if in {
				buf[n] = ' '
				n++
				in = false
			}
			i++
			continue
		}
		if len(buf)-n < len(s)-i+32 { // room for the rest, if ASCII, and this rune
			buf = slices.Grow(buf[:n], len(s)-i+64)[:n]
			buf = buf[:cap(buf)]
		}
		r, size := decodeRune(s[i:])
		switch {
		case isCJK(r):
			if in {
				buf[n] = ' '
				n++
			}
			n += copy(buf[n:], s[i:i+size])
			buf[n] = ' '
			n++
			in = false
		case isWordRune(r):
			if f := fold(r); f != "" {
				if len(buf)-n < len(f)+1 {
					buf = slices.Grow(buf[:n], len(f)+len(s)-i+32)[:n]
					buf = buf[:cap(buf)]
				}
				n += copy(buf[n:], f)
				in = true
			}
		case in:
			buf[n] = ' '
			n++
			in = false
		}
		i += size
	}
	if in {
		if n == len(buf) {
			buf = append(buf[:n], ' ')
		} else {
			buf[n] = ' '
		}
		n++
	}
	return buf[:n]
}

// countTerm counts the occurrences of toks, one after another, in a folded buffer (at
// most most of them; all when most < 0), calling at (if not nil) with the position of the
// token each ends at.
func countTerm(buf []byte, toks []string, most int, at func(end int)) int {
	last := []byte(" " + toks[len(toks)-1] + " ")
	n := 0
	// Every token has one space before it: a token's position is the spaces before it.
	counted, pos := 0, 0
	for from := 0; most < 0 || n < most; {
		i := bytes.Index(buf[from:], last)
		if i < 0 {
			break
		}
		space := from + i // the space before the last token
		from = space + len(last) - 1
		ok := true
		for k, back := len(toks)-2, space; k >= 0 && ok; k-- {
			tok := toks[k]
			start := back - len(tok)
			ok = start >= 1 && buf[start-1] == ' ' && string(buf[start:back]) == tok
			back = start - 1
		}
		if ok {
			n++
			if at != nil {
				pos += bytes.Count(buf[counted:space], []byte{' '})
				counted = space
				at(pos)
			}
		}
	}
	return n
}

// decodeRune is utf8.DecodeRuneInString of the start of s, for bytes too: a rune is at
// most 4 bytes, and so short a copy stays on the stack.
func decodeRune[T string | []byte](s T) (rune, int) {
	return utf8.DecodeRuneInString(string(s[:min(len(s), utf8.UTFMax)]))
}
