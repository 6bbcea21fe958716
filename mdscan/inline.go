package mdscan

import (
	"strings"
)

// inline is what a scan of a paragraph's inline text keeps, reused from one paragraph to
// the next. Every search it makes moves forward only, so that a scan costs the
// paragraph's length whatever it holds (a million backticks or brackets, none closed).
type inline struct {
	runs    map[int][]int32 // backtick runs by length: where each begins
	passed  map[int]int     // by length, how many of runs[length] the scan has passed
	openers []opener        // the brackets not yet closed, innermost last
	// openers below inactive are not links' any more (a link may not hold a link),
	// except images'.
	inactive int
	// next is, for each of " ' ), where the scan found it next (-1: nowhere before
	// the end), asked for at from.
	next [3]struct{ at, from int }
	// the text being scanned, to end; whether its backtick runs are counted yet
	s       string
	end     int
	counted bool
	short   bool // it is read a byte at a time
	// at is, for each of specials, where it is next (-1: nowhere before the end; before
	// the scan's place, or unknown: to be looked for)
	at [len(specials)]int
}

type opener struct {
	image bool
	at    int // where its [ is
}

// specials are the bytes an inline scan stops at; special says which bytes they are.
const specials = "[]`\\<"

var special = [256]bool{'[': true, ']': true, '`': true, '\\': true, '<': true}

// shortText is the length below which a text is scanned a byte at a time.
const shortText = 256

// nextSpecial is where the first of specials at or after i is (the end when none): each
// byte's next place is found by strings.IndexByte and kept until the scan passes it, so a
// scan costs a few passes of IndexByte over the text, not a step a byte.
func (in *inline) nextSpecial(i int) int {
	if in.short {
		for i < in.end && !special[in.s[i]] {
			i++
		}
		return i
	}
	at := in.end
	for k := range len(specials) {
		p := in.at[k]
		if p == unknown || p >= 0 && p < i {
			p = in.special(i, k)
			in.at[k] = p
		}
		if p >= 0 && p < at {
			at = p
		}
	}
	return at
}

// maxOpeners is how many unclosed brackets a scan keeps track of: more are text.
const maxOpeners = 1000

// scan reads text[start:end], a paragraph's or heading's inline text, for links.
func (w *walker) scan(start, end int) {
	if w.link == nil || w.stopped {
		return
	}
	s, in := w.text, &w.in
	if !in.begin(s, start, end) {
		return
	}
	for i := start; i < end; {
		if i = in.nextSpecial(i); i == end {
			return
		}
		more := true
		switch s[i] {
		case '\\':
			if i+1 < end && isPunct(s[i+1]) {
				i += 2
			} else {
				i++
			}
		case '`':
			i = in.codeSpan(i)
		case '[':
			i, more = w.openBracket(start, i, end)
		case ']':
			i, more = w.closeBracket(i, end)
		case '<':
			i, more = w.angleLink(i, end)
		}
		if !more {
			return
		}
	}
}

// begin readies in to scan s[start:end], and is false when the text can have no link.
func (in *inline) begin(s string, start, end int) bool {
	// Every link has a [ or a <: a text with neither (most prose) has none. A short text is
	// read a byte at a time; a long one's specials are found with IndexByte, each call of
	// which costs more than reading a few dozen bytes.
	if end-start < shortText {
		found := false
		for i := start; i < end && !found; i++ {
			found = s[i] == '[' || s[i] == '<'
		}
		if !found {
			return false
		}
		in.reset(s, start, end)
		in.short = true
	} else {
		open, angle := strings.IndexByte(s[start:end], '['), strings.IndexByte(s[start:end], '<')
		if open < 0 && angle < 0 {
			return false
		}
		in.reset(s, start, end)
		in.at[0], in.at[4] = from(start, open), from(start, angle) // '[' and '<' are specials[0] and [4]
	}
	return true
}

// codeSpan reads the backtick run at i: where the scan goes on, past the code span it
// opens (nothing in it counts), or past the run when none closes it.
func (in *inline) codeSpan(i int) int {
	if !in.counted {
		in.countRuns(i)
	}
	n := runOf(in.s[i:in.end], '`')
	if close := in.nextRun(n, i); close >= 0 {
		return close + n // a code span: nothing in it counts
	}
	return i + n
}

// openBracket reads the [ at i, in the text scanned from start: a [[wiki link]] is
// emitted, any other [ kept as an opener; it returns where the scan goes on, and false
// when the walk is to stop.
func (w *walker) openBracket(start, i, end int) (int, bool) {
	s, in := w.text, &w.in
	// ![ opens an image, so ![[Title]] is no [[link]] (Obsidian's embed is not either).
	image := i > start && s[i-1] == '!' && (i-1 == start || s[i-2] != '\\')
	if title, shown, n, ok := WikiLink(s[i:end]); ok && !image {
		if !w.emit(Link{Title: title, Shown: shown, At: i}) {
			return i, false
		}
		return i + n, true
	}
	if len(in.openers) < maxOpeners {
		in.openers = append(in.openers, opener{image: image, at: i})
	}
	return i + 1, true
}

// closeBracket reads the ] at i: it closes the innermost opener, and when a (destination)
// follows, that is a link (emitted when it is to a document) or an image; it returns
// where the scan goes on, and false when the walk is to stop.
func (w *walker) closeBracket(i, end int) (int, bool) {
	s, in := w.text, &w.in
	if len(in.openers) > 0 {
		top := len(in.openers) - 1
		o := in.openers[top]
		in.openers = in.openers[:top]
		live := o.image || top >= in.inactive
		in.inactive = min(in.inactive, top)
		if i+1 < end && s[i+1] == '(' {
			if dest, n, ok := in.inlineDest(s, i+2, end); ok && live {
				if id, ok := DocumentID(dest); ok && !o.image && !w.emit(Link{ID: id, At: o.at}) {
					return i, false
				}
				if !o.image {
					in.inactive = len(in.openers)
				}
				return n, true
			}
		}
	}
	return i + 1, true
}

// angleLink reads the < at i: an <autolink> to a document is emitted; it returns where
// the scan goes on, and false when the walk is to stop.
func (w *walker) angleLink(i, end int) (int, bool) {
	s := w.text
	if uri, n, ok := autolink(s[i:end]); ok {
		if id, ok := DocumentID(uri); ok && !w.emit(Link{ID: id, At: i}) {
			return i, false
		}
		return i + n, true
	}
	return i + 1, true
}

func (in *inline) reset(s string, start, end int) {
	in.openers, in.inactive = in.openers[:0], 0
	for i := range in.next {
		in.next[i].from = -1
	}
	in.s, in.end, in.counted, in.short = s, end, false, false
	for k := range in.at {
		in.at[k] = unknown
	}
}

// from is an IndexByte's answer j in a text that begins at start, made a place in the whole.
func from(start, j int) int {
	if j < 0 {
		return -1
	}
	return start + j
}

// unknown is an in.at that hasn't been looked for yet.
const unknown = -2

// special is where specials[k] is first at or after i, or -1.
func (in *inline) special(i, k int) int {
	if j := strings.IndexByte(in.s[i:in.end], specials[k]); j >= 0 {
		return i + j
	}
	return -1
}

// countRuns finds every run of backticks from start to the end of the text being scanned:
// done at the first backtick met, so a paragraph without any pays nothing for them.
func (in *inline) countRuns(start int) {
	s, end := in.s, in.end
	in.counted = true
	for k := range in.runs {
		in.runs[k] = in.runs[k][:0]
	}
	clear(in.passed)
	if in.runs == nil {
		in.runs, in.passed = map[int][]int32{}, map[int]int{}
	}
	for i := start; i < end; {
		j := strings.IndexByte(s[i:end], '`')
		if j < 0 {
			break
		}
		i += j
		n := runOf(s[i:end], '`')
		in.runs[n] = append(in.runs[n], int32(i))
		i += n
	}
}

// nextRun is where the first run of exactly n backticks after at begins, or -1.
func (in *inline) nextRun(n, at int) int {
	list := in.runs[n]
	k := in.passed[n]
	for k < len(list) && int(list[k]) <= at {
		k++
	}
	if in.passed != nil {
		in.passed[n] = k
	}
	if k < len(list) {
		return int(list[k])
	}
	return -1
}

// find is the first c (one of " ' )) in s[from:end], or -1, remembering where it was so
// that a later search from further on doesn't scan again what this one did.
func (in *inline) find(s string, c byte, from, end int) int {
	slot := &in.next[strings.IndexByte(`"')`, c)]
	if slot.from >= 0 && slot.from <= from && (slot.at < 0 || slot.at >= from) {
		return slot.at
	}
	at := strings.IndexByte(s[from:end], c)
	if at >= 0 {
		at += from
	}
	slot.at, slot.from = at, from
	return at
}

// inlineDest reads an inline link's destination and title from s[i:end], just after its
// "(": the destination, the position after the closing ")", and whether it is a link.
func (in *inline) inlineDest(s string, i, end int) (string, int, bool) {
	i = skipSpace(s, i, end)
	if i < end && s[i] == ')' {
		return "", i + 1, true
	}
	dest, n, ok := destination(s[i:end])
	if !ok {
		return "", 0, false
	}
	i = skipSpace(s, i+n, end)
	if i < end && (s[i] == '"' || s[i] == '\'' || s[i] == '(') && n > 0 {
		closer := s[i]
		if closer == '(' {
			closer = ')'
		}
		j := in.find(s, closer, i+1, end)
		if j < 0 {
			return "", 0, false
		}
		i = skipSpace(s, j+1, end)
	}
	if i >= end || s[i] != ')' {
		return "", 0, false
	}
	return dest, i + 1, true
}

// skipSpace skips spaces and tabs, and at most one line break among them.
func skipSpace(s string, i, end int) int {
	breaks := 0
	for i < end {
		switch s[i] {
		case ' ', '\t':
		case '\n':
			if breaks++; breaks > 1 {
				return i
			}
		default:
			return i
		}
		i++
	}
	return i
}

// autolink reads <scheme:...> at the start of s: the URI, and the bytes it takes.
func autolink(s string) (string, int, bool) {
	i := 1
	for i < len(s) && i <= 33 && (isLetter(s[i]) || i > 1 && (isDigit(s[i]) || s[i] == '+' || s[i] == '.' || s[i] == '-')) {
		i++
	}
	if i < 3 || i > 33 || i >= len(s) || s[i] != ':' {
		return "", 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '>':
			return s[1:j], j + 1, true
		case c <= ' ' || c == '<' || c == 0x7f:
			return "", 0, false
		}
	}
	return "", 0, false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
