package docstore

import (
	"bytes"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// What a refusal of a name suggests: the titles close to it, found in the scan of the titles
// that looked for one with every word of the name, so in the same transaction.
//
// Close, on titles and names with case and accents folded (É is e), is either
//   - the whole name within max(1, n/4) edits of the whole title, n the name's length in
//     characters, and at most 3 ("Lanch plan" and "Launch plan": 1 of at most 2), or
//   - every word of the name in the title, or within n/4 edits (at most 3) of one of its
//     words, n that word's length: so a word of fewer than 4 characters must be there as it
//     is ("lanch" and "Launch plan": "lanch" is 1 from "launch").
//
// An edit is an insertion, a deletion, a change, or two neighbours swapped: the optimal
// string alignment distance (Damerau–Levenshtein where no character is edited twice). The
// closest come first: fewest edits, then the title nearest the name's length, then the
// titles' order.
//
// The work is bounded whatever the name and the titles. A name longer than a title may be
// finds nothing; only the first closeRunes characters of the name, of each of its words and
// of each title are compared, each comparison costs one step a character of the title (the
// distance is computed 64 characters at once, as bits of a machine word: Myers's algorithm,
// with Hyyrö's extension for swaps), and one lookup takes at most closeBudget steps in all,
// after which it keeps what it has found.

const (
	// maxClose is how many close titles a refusal names.
	maxClose = 3
	// closeRunes is how much of a name, of a word and of a title is compared, in characters:
	// more than people need to tell titles apart by eye, and one machine word of bits.
	closeRunes = 64
	// closeWords is how many distinct words of a name are compared one by one; a name of
	// more is compared whole only.
	closeWords = 8
	// closeEdits is the most edits a close title is from the name, however long it is: past
	// that, a title is another title, not the one meant.
	closeEdits = 3
	// closeBudget bounds the steps of one lookup over all titles (a few ns each): 10,000
	// ordinary titles take a small part of it; a space of long titles, each compared with a
	// name of many words, stops there.
	closeBudget = 2_000_000
)

// closeFinder keeps the titles closest to one name while a scan offers it every title.
type closeFinder struct {
	whole  pattern   // the name
	runes  int       // the name's whole length in characters
	words  []pattern // its distinct words (none: only the whole name is compared)
	budget int       // steps left
	best   []closeTitle
	title  titleChars // scratch: the title being compared
}

// closeTitle is one title found close: its key in doc_titles and its document's id.
type closeTitle struct {
	key, id string
	edits   int // edits from the name (the word rule: summed over the words)
	spread  int // difference of length from the name
}

// newCloseFinder prepares the search for titles close to name, which may be anything a
// caller gave: a name too long to be a title gets a finder that finds nothing.
func newCloseFinder(name string) *closeFinder {
	f := &closeFinder{budget: closeBudget}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || len(name) > 4*MaxTitle || utf8.RuneCountInString(name) > MaxTitle {
		f.budget = 0
		return f
	}
	f.runes = utf8.RuneCountInString(name)
	f.whole = newPattern(name)
	var seen []string
	for _, w := range strings.FieldsFunc(name, notWordRune) {
		if len(seen) == closeWords {
			f.words = nil // too many words: compare the name whole only
			break
		}
		if !contains(seen, w) {
			seen = append(seen, w)
			f.words = append(f.words, newPattern(w))
		}
	}
	return f
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// allowed is how many edits from a text of n characters are close: a quarter of n, but
// at least least and at most closeEdits.
func allowed(n, least int) int { return min(closeEdits, max(least, n/4)) }

// unaccented is r's base letter when r is a letter with an accent (é is e, ñ is n): the
// first character of its canonical decomposition.
func unaccented(r rune) rune {
	if r < utf8.RuneSelf {
		return r
	}
	if r < rune(len(latin)) {
		return latin[r]
	}
	return decomposed(r)
}

func decomposed(r rune) rune {
	if d := norm.NFD.PropertiesString(string(r)).Decomposition(); len(d) > 0 {
		base, _ := utf8.DecodeRune(d)
		return base
	}
	return r
}

// latin is unaccented for the Latin letters (U+0000 to U+024F), looked up once.
var latin = func() (t [0x250]rune) {
	for r := range t {
		t[r] = decomposed(rune(r))
	}
	return t
}()

// consider offers the title whose doc_titles key (case-folded) is key, of document id. It
// keeps neither slice.
func (f *closeFinder) consider(key, id []byte) {
	if f.budget <= 0 {
		return
	}
	for _, b := range f.best {
		if b.key == string(key) {
			return // deleted documents may share a title: name it once
		}
	}
	edits, ok := f.compare(key)
	if !ok {
		return
	}
	c := closeTitle{edits: edits, spread: abs(f.title.all - f.runes)}
	at := len(f.best)
	for at > 0 && c.before(f.best[at-1]) {
		at--
	}
	if at == maxClose {
		return
	}
	c.key, c.id = string(key), string(id)
	if len(f.best) < maxClose {
		f.best = append(f.best, closeTitle{})
	}
	copy(f.best[at+1:], f.best[at:])
	f.best[at] = c
}

func (c closeTitle) before(d closeTitle) bool {
	if c.edits != d.edits {
		return c.edits < d.edits
	}
	return c.spread < d.spread // equal: the one offered first (the scan's order) stays first
}

// compare is the fewest edits from the name to the title key by either rule, if close. It
// reads the title's first closeRunes characters once, then runs the comparisons that can
// still come out close: of the whole name with the whole title, and of each word of the name
// not in the title as it is with each word of the title, skipping those whose lengths or
// characters alone differ by more than the edits allowed.
func (f *closeFinder) compare(key []byte) (int, bool) {
	// First what needs no reading of the title's characters: its length in bytes (a
	// character is 1 to 4), and whether it has the name's short words, which must be there
	// as they are.
	k := allowed(f.whole.m, 1)
	wholeOn := len(key) >= f.whole.m-k && min((len(key)+3)/4, closeRunes) <= f.whole.m+k
	wordsOn := len(f.words) > 0
	for i := range f.words {
		if w := &f.words[i]; allowed(w.m, 0) == 0 && wordsOn {
			wordsOn = bytes.Contains(key, w.text)
		}
	}
	if !wholeOn && !wordsOn {
		return 0, false
	}
	// Then, for the many titles all ASCII, what their set of characters alone rules out.
	if chars, ok := asciiChars(key); ok {
		wholeOn = wholeOn && abs(min(len(key), closeRunes)-f.whole.m) <= k && f.whole.maybeWithin(chars, k)
		for i := range f.words {
			w := &f.words[i]
			wordsOn = wordsOn && bits.OnesCount64(w.chars&^chars) <= allowed(w.m, 0)
		}
		if !wholeOn && !wordsOn {
			return 0, false
		}
	}
	t := &f.title
	t.read(key)
	f.budget -= t.n
	edits, ok := 0, false
	if wholeOn && abs(t.n-f.whole.m) <= k && f.whole.maybeWithin(t.chars, k) {
		f.budget -= t.n
		if d := f.whole.distance(t.runes[:t.n]); d <= k {
			edits, ok = d, true
		}
	}
	if !wordsOn {
		return edits, ok
	}
	sum := 0
	for i := range f.words {
		w := &f.words[i]
		k := allowed(w.m, 0)
		lacks := bits.OnesCount64(w.chars &^ t.chars) // characters of w the title hasn't
		if k == 0 || lacks == 0 && bytes.Contains(key, w.text) {
			continue // short words were found above
		}
		if lacks > k {
			return edits, ok
		}
		best := k + 1
		for _, u := range t.words[:t.nw] {
			if abs(u.end-u.start-w.m) > k || !w.maybeWithin(u.chars, k) {
				continue
			}
			f.budget -= u.end - u.start
			best = min(best, w.distance(t.runes[u.start:u.end]))
		}
		if best > k {
			return edits, ok
		}
		sum += best
	}
	if !ok || sum < edits {
		edits, ok = sum, true
	}
	return edits, ok
}

// titleChars is a title's first closeRunes characters, without accents, and where its words
// are; each with the set of its characters as bits (see charBit).
type titleChars struct {
	runes [closeRunes]rune
	n     int
	chars uint64
	words [closeRunes/2 + 1]wordSpan
	nw    int
	all   int // the title's length in characters, all of it
}

type wordSpan struct {
	start, end int
	chars      uint64
}

func (t *titleChars) read(key []byte) {
	// Locals, not t's fields, in the loop: it runs for every title of the space.
	n, nw, chars := 0, 0, uint64(0)
	var cur wordSpan // the word being read, if inWord
	inWord, i := false, 0
	for ; i < len(key) && n < closeRunes; n++ {
		var (
			r    rune
			word bool
		)
		if c := key[i]; c < utf8.RuneSelf {
			r, word = rune(c), asciiWord[c]
			i++
		} else {
			var size int
			r, size = utf8.DecodeRune(key[i:])
			i += size
			word = !notWordRune(r)
			r = unaccented(r)
		}
		t.runes[n] = r
		bit := charBit(r)
		chars |= bit
		switch {
		case word && !inWord:
			cur = wordSpan{start: n, end: n + 1, chars: bit}
		case word:
			cur.end, cur.chars = n+1, cur.chars|bit
		case inWord:
			t.words[nw] = cur
			nw++
		}
		inWord = word
	}
	if inWord {
		t.words[nw] = cur
		nw++
	}
	t.n, t.nw, t.chars, t.all = n, nw, chars, n+utf8.RuneCount(key[i:])
}

// asciiWord tells which ASCII characters are letters or digits.
var asciiWord = func() (w [utf8.RuneSelf]bool) {
	for c := range w {
		w[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return w
}()

// asciiChars is the set of the first closeRunes characters of key, if they are all ASCII.
func asciiChars(key []byte) (chars uint64, ok bool) {
	for _, c := range key[:min(len(key), closeRunes)] {
		if c >= utf8.RuneSelf {
			return 0, false
		}
		chars |= charBit(rune(c))
	}
	return chars, true
}

// charBit is the bit of r in a set of characters: two characters may share one, so a set
// tells for sure only which characters a text lacks.
func charBit(r rune) uint64 { return 1 << (uint(r) % 64) }

// pattern is a word or a name to compare titles with: for each of its characters, the bit
// of each place it is at (bit 0 the first).
type pattern struct {
	text  []byte // as given (case-folded), to look for as it is
	m     int    // characters compared: at most closeRunes
	chars uint64 // the set of its characters (see charBit)
	ascii [utf8.RuneSelf]uint64
	other []runeBits
}

type runeBits struct {
	r    rune
	bits uint64
}

func newPattern(s string) pattern {
	p := pattern{text: []byte(s)}
	for _, r := range s {
		if p.m == closeRunes {
			break
		}
		r = unaccented(r)
		p.chars |= charBit(r)
		bit := uint64(1) << p.m
		p.m++
		if r < utf8.RuneSelf {
			p.ascii[r] |= bit
			continue
		}
		found := false
		for i := range p.other {
			if p.other[i].r == r {
				p.other[i].bits |= bit
				found = true
			}
		}
		if !found {
			p.other = append(p.other, runeBits{r, bit})
		}
	}
	return p
}

// maybeWithin tells whether a text with the set of characters chars may be within k edits of
// p: each character one has and the other lacks takes an edit of its own.
func (p *pattern) maybeWithin(chars uint64, k int) bool {
	return bits.OnesCount64(p.chars&^chars) <= k && bits.OnesCount64(chars&^p.chars) <= k
}

// distance is the edits from p to text.
func (p *pattern) distance(text []rune) int {
	run := p.start()
	for _, r := range text {
		p.step(&run, r)
	}
	return run.score
}

func (p *pattern) bits(r rune) uint64 {
	if r < utf8.RuneSelf {
		return p.ascii[r]
	}
	for _, o := range p.other {
		if o.r == r {
			return o.bits
		}
	}
	return 0
}

// osaRun is one comparison of a pattern with a text under way, a column of the edit
// distance table as bits: vp and vn, where going down a row adds one or takes one away;
// d0, where the diagonal keeps its value; score, the distance from the whole pattern to
// the text so far.
type osaRun struct {
	vp, vn, d0, prev uint64 // prev: the bits of the text's character before
	score            int
}

func (p *pattern) start() osaRun { return osaRun{vp: ^uint64(0), score: p.m} }

// step adds r to the text of run (Hyyrö 2003, "A bit-vector algorithm for computing
// Levenshtein and Damerau edit distances", with the top row counting up from 0: the
// distance of the whole pattern, not a search in the text).
func (p *pattern) step(run *osaRun, r rune) {
	pm := p.bits(r)
	tr := ((^run.d0 & pm) << 1) & run.prev // a swap of r and the character before it
	d0 := (((pm & run.vp) + run.vp) ^ run.vp) | pm | run.vn | tr
	hp := run.vn | ^(d0 | run.vp)
	hn := run.vp & d0
	if high := uint64(1) << (p.m - 1); hp&high != 0 {
		run.score++
	} else if hn&high != 0 {
		run.score--
	}
	hp = hp<<1 | 1
	hn <<= 1
	run.vp = hn | ^(d0 | hp)
	run.vn = hp & d0
	run.d0, run.prev = d0, pm
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
