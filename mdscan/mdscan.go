// Package mdscan reads the parts of a Markdown text that the store keeps track of: its links
// to other documents ([[Title]], [[Title|shown]], and Markdown links that DocumentID reads as
// naming a document) and its headings, leaving out what is code (fenced and indented code
// blocks, code spans), in one pass whose cost is linear in the text.
//
// # Caveats
//
// It is not a Markdown parser: it follows CommonMark's block structure as far as telling
// code from prose and headings from paragraphs needs, and no further. Where it is simpler
// than a parser (the page renders with goldmark):
//
//   - list items and block quotes are followed one level deep; a heading inside either is
//     not a section heading (Headings leaves it out), a link inside either counts;
//   - a link reference definition that names a document ([ref]: /document/<id>) is a link,
//     whether or not a [text][ref] uses it;
//   - raw HTML is prose: a link written as <a href> is not a link (the page drops raw HTML).
package mdscan

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Link is one link of a text to a document: either Title ([[Title]], [[Title|Shown]]) or ID
// (a Markdown link, autolink or link reference definition whose destination DocumentID reads as
// naming a document).
type Link struct {
	Title string // as written, white space around it trimmed
	Shown string // [[Title|Shown]]'s text; "" when none
	ID    string // the id of the document a Markdown link names, in upper case
	// At is where the link begins in the text: the first [ of a [[Title]] or a Markdown
	// link, the < of an autolink, the line of a link reference definition.
	At int
}

// Heading is an ATX (# Title) or setext (Title, then === or ---) heading outside any list
// item, block quote or code block.
type Heading struct {
	Level int    // 1 to 6
	Text  string // as written: white space folded, an ATX heading's closing #s left out
	Line  int    // the heading's first line, from 1
}

// MaxTitle is the longest [[Title]] that is a link, in characters (a document's title is
// at most 200).
const MaxTitle = 200

// Links calls fn with each link of text, in order, until fn returns false.
func Links(text string, fn func(Link) bool) {
	w := walker{text: text, link: fn}
	w.walk()
}

// Headings calls fn with each heading of text, in order, until fn returns false.
func Headings(text string, fn func(Heading) bool) {
	w := walker{text: text, heading: fn}
	w.walk()
}

// WikiLink reads a [[Title]] or [[Title|shown]] at the start of s: the title and shown text
// (trimmed), and how many bytes it takes. It stops at the first ']', '[' or line break after
// the opening brackets, so its cost is the link's length, never the rest of s. A title that
// is empty, longer than MaxTitle or has control characters makes no link. The page's
// renderer reads [[ ]] with it too, so that what is a link is one rule in both.
func WikiLink[T string | []byte](s T) (title, shown string, n int, ok bool) {
	if len(s) < 4 || s[0] != '[' || s[1] != '[' {
		return "", "", 0, false
	}
	limit := min(len(s), 2+8*MaxTitle) // the shown text may be longer than a title, not without end
	end := -1
	for i := 2; i < limit; i++ {
		c := s[i]
		if c == '[' || c == '\n' || c == '\r' {
			return "", "", 0, false
		}
		if c == ']' {
			end = i
			break
		}
	}
	if end < 0 || end+1 >= len(s) || s[end+1] != ']' {
		return "", "", 0, false
	}
	inner := string(s[2:end])
	target, rest, piped := strings.Cut(inner, "|")
	// In a GFM table a pipe is written \| so that it doesn't end the cell.
	target = strings.TrimSpace(strings.TrimSuffix(target, `\`))
	if piped {
		shown = strings.TrimSpace(rest)
	}
	if !ValidTitle(target) {
		return "", "", 0, false
	}
	return target, shown, end + 2, true
}

// ValidTitle reports whether s can be a [[Title]]'s title: not empty, valid UTF-8, at most
// MaxTitle characters, without control characters.
func ValidTitle(s string) bool {
	if s == "" {
		return false
	}
	if len(s) <= MaxTitle {
		plain := true // printable ASCII: valid, and no longer than it is long
		for i := 0; i < len(s) && plain; i++ {
			plain = s[i] >= 0x20 && s[i] < 0x7f
		}
		if plain {
			return true
		}
	}
	return utf8.ValidString(s) && utf8.RuneCountInString(s) <= MaxTitle && !strings.ContainsFunc(s, unicode.IsControl)
}

// walker is one pass over a text's lines, keeping the little block structure it needs.
type walker struct {
	text    string
	link    func(Link) bool
	heading func(Heading) bool
	stopped bool

	// the open paragraph: text[paraStart:paraEnd], from line paraLine; paraStart < 0 when none
	paraStart, paraEnd, paraLine int
	paraTop                      bool // it is outside list items and block quotes
	paraQuote                    int  // the block quotes it is in
	// the open fenced code block
	fence      byte // '`' or '~'; 0 when none
	fenceLen   int
	fenceQuote int // the block quotes it is in
	fenceBase  int // the column its list item's content starts at
	// the list item lines are in: its content's column; 0 when none
	listIndent int
	// reusable state of inline scans
	in inline
}

func (w *walker) walk() {
	w.paraStart = -1
	text := w.text
	line := 0
	for pos := 0; pos < len(text) && !w.stopped; {
		line++
		end := strings.IndexByte(text[pos:], '\n')
		next := len(text)
		if end < 0 {
			end = len(text)
		} else {
			end += pos
			next = end + 1
		}
		if end > pos && text[end-1] == '\r' {
			end--
		}
		w.line(pos, text[pos:end], line, end)
		pos = next
	}
	w.flush()
}

// line reads one line, s: text[start:end], without its line break.
func (w *walker) line(start int, s string, num, end int) {
	quotes, s := quoteDepth(s)
	indent, t := indentOf(s)
	if w.fence != 0 && w.inFence(quotes, indent, t) {
		return
	}
	if t == "" {
		w.flush()
		return
	}
	if w.lazy(quotes, indent, t, end) {
		return
	}
	w.block(start, quotes, indent, t, num, end)
}

// quoteDepth counts the block quote markers (">", up to three spaces before each) that
// open s, and returns it with them taken off.
func quoteDepth(s string) (quotes int, _ string) {
	for {
		t := strings.TrimLeft(s, " ")
		if len(s)-len(t) > 3 || !strings.HasPrefix(t, ">") {
			break
		}
		quotes++
		s = strings.TrimPrefix(t[1:], " ")
	}
	return quotes, s
}

// inFence reads a line, t after indent spaces inside quotes block quotes, while a code
// fence is open: it closes the fence when the line's block quote or list item ended (and
// the line is then read as any other: false), or when the line is a closing fence; true
// when the line is the fence's.
func (w *walker) inFence(quotes, indent int, t string) bool {
	switch {
	case quotes < w.fenceQuote:
		w.fence = 0 // its block quote ended
	case w.fenceBase > 0 && t != "" && indent < w.fenceBase:
		w.fence, w.listIndent = 0, 0 // its list item ended
	default:
		if indent-min(indent, w.fenceBase) <= 3 && closesFence(t, w.fence, w.fenceLen) {
			w.fence = 0
		}
		return true
	}
	return false
}

// lazy reads a non-blank line whose block quote depth or indent is less than the open
// paragraph's or list item's: true when it is a lazy continuation of the paragraph
// (which then ends at end); otherwise it closes what the line ended, and is false.
func (w *walker) lazy(quotes, indent int, t string, end int) bool {
	if w.paraStart >= 0 && quotes != w.paraQuote {
		if quotes < w.paraQuote && !startsBlock(t, indent) {
			w.paraEnd = end // a lazy continuation of the quote's paragraph
			return true
		}
		w.flush()
	}
	if w.listIndent > 0 && indent < w.listIndent {
		if w.paraStart >= 0 && !startsBlock(t, indent) {
			w.paraEnd = end // a lazy continuation of the item's paragraph
			return true
		}
		w.listIndent = 0
	}
	return false
}

// block reads what a line, t from start after indent spaces inside quotes block quotes,
// opens or continues: indented code, a code fence, a heading, a thematic break, a list
// item (whose content is read again as a line of its own) or a paragraph.
func (w *walker) block(start, quotes, indent int, t string, num, end int) {
	base := w.listIndent
	for redo := true; redo; {
		redo = false
		rel := indent - base
		if rel >= 4 {
			if w.paraStart >= 0 {
				w.paraEnd = end
			}
			return // indented code (or a paragraph's continuation)
		}
		switch {
		case opensFence(t):
			w.flush()
			w.fence, w.fenceLen, w.fenceQuote, w.fenceBase = t[0], runOf(t, t[0]), quotes, base
			return
		case t[0] == '#' && atxLevel(t) > 0:
			w.flush()
			w.atxHeading(quotes == 0 && base == 0, t, num, end)
			return
		case w.paraStart >= 0 && setextLevel(t) > 0:
			w.setextHeading(quotes, t)
			return
		case thematicBreak(t):
			w.flush()
			return
		}
		if n, ordered, first := listMarker(t); n > 0 && (w.paraStart < 0 || !ordered || first) {
			w.flush()
			after := t[n:]
			spaces, rest := indentOf(after)
			if rest == "" || spaces > 4 {
				spaces = 1
			}
			w.listIndent = indent + n + spaces
			if rest == "" {
				return
			}
			base, indent, t = w.listIndent, w.listIndent, rest
			start = end - len(rest)
			redo = true
			continue
		}
		if w.paraStart < 0 {
			w.paraStart, w.paraLine, w.paraTop, w.paraQuote = start, num, quotes == 0 && base == 0, quotes
		}
		w.paraEnd = end
	}
}

// atxHeading reads the "#" heading t, ending at end on line num: it hands a top one
// (outside block quotes and lists) to w.heading, stopping the walk when that says so, and
// scans its text for links.
func (w *walker) atxHeading(top bool, t string, num, end int) {
	level := atxLevel(t)
	content := atxText(t[level:])
	if top && w.heading != nil && !w.heading(Heading{Level: level, Text: foldSpace(content), Line: num}) {
		w.stopped = true
		return
	}
	if content != "" {
		rest := t[level:]
		from := end - len(t) + level + len(rest) - len(strings.TrimLeft(rest, " \t"))
		w.scan(from, from+len(content))
	}
}

// setextHeading makes the open paragraph a heading, underlined by t: it hands a top one
// to w.heading, stopping the walk when that says so, and scans its text for links.
func (w *walker) setextHeading(quotes int, t string) {
	level := setextLevel(t)
	ps, pe, pl, top := w.paraStart, w.paraEnd, w.paraLine, w.paraTop
	w.paraStart = -1
	if top && quotes == 0 && w.heading != nil && !w.heading(Heading{Level: level, Text: foldSpace(w.text[ps:pe]), Line: pl}) {
		w.stopped = true
		return
	}
	w.scanText(ps, pe, false)
}

// flush scans the open paragraph, if any, and closes it.
func (w *walker) flush() {
	if w.paraStart < 0 {
		return
	}
	ps, pe := w.paraStart, w.paraEnd
	w.paraStart = -1
	w.scanText(ps, pe, true)
}

// scanText reads a paragraph's (or setext heading's) leading link reference definitions,
// then the rest: a paragraph's as a table if it has one (see table), else inline.
func (w *walker) scanText(start, end int, paragraph bool) {
	if w.link == nil || w.stopped {
		return
	}
	for start < end {
		lineEnd := strings.IndexByte(w.text[start:end], '\n')
		if lineEnd < 0 {
			lineEnd = end
		} else {
			lineEnd += start
		}
		dest, ok := definition(w.text[start:lineEnd])
		if !ok {
			break
		}
		if id, ok := DocumentID(dest); ok && !w.emit(Link{ID: id, At: start}) {
			return
		}
		start = lineEnd + 1
	}
	if start < end && (!paragraph || !w.table(start, end)) {
		w.scan(start, end)
	}
}

func (w *walker) emit(l Link) bool {
	if w.stopped {
		return false
	}
	if !w.link(l) {
		w.stopped = true
	}
	return !w.stopped
}

// indentOf is the columns of white space s begins with (a tab to the next multiple of 4),
// and s without it.
func indentOf(s string) (int, string) {
	col := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col, s[i:]
		}
	}
	return col, ""
}

func runOf(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// opensFence: three or more backticks (with no backtick after them) or tildes.
func opensFence(t string) bool {
	if t[0] != '`' && t[0] != '~' {
		return false
	}
	n := runOf(t, t[0])
	return n >= 3 && (t[0] == '~' || strings.IndexByte(t[n:], '`') < 0)
}

func closesFence(t string, c byte, length int) bool {
	n := runOf(t, c)
	return n >= length && strings.TrimSpace(t[n:]) == ""
}

// atxLevel is the level of an ATX heading that t begins, or 0.
func atxLevel(t string) int {
	n := runOf(t, '#')
	if n < 1 || n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return 0
	}
	return n
}

// atxText is an ATX heading's content: trimmed, its closing sequence of #s left out.
func atxText(s string) string {
	s = strings.TrimSpace(s)
	t := strings.TrimRight(s, "#")
	if t == "" {
		return ""
	}
	if len(t) < len(s) && (t[len(t)-1] == ' ' || t[len(t)-1] == '\t') {
		return strings.TrimSpace(t)
	}
	return s
}

// setextLevel is 1 for a line of =, 2 for a line of -, else 0.
func setextLevel(t string) int {
	switch n := runOf(t, t[0]); {
	case strings.TrimSpace(t[n:]) != "":
		return 0
	case t[0] == '=':
		return 1
	case t[0] == '-':
		return 2
	}
	return 0
}

// thematicBreak: three or more of one of - * _, with only spaces between.
func thematicBreak(t string) bool {
	c := t[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	n := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// listMarker is the width of the list marker t begins with (- + * followed by white space or
// the end, or 1 to 9 digits and . or ) likewise), 0 when none; whether it is ordered, and
// if so whether it is 1 (only such a list may interrupt a paragraph).
func listMarker(t string) (n int, ordered, first bool) {
	switch {
	case t[0] == '-' || t[0] == '+' || t[0] == '*':
		n = 1
	default:
		d := 0
		for d < len(t) && d < 10 && t[d] >= '0' && t[d] <= '9' {
			d++
		}
		if d == 0 || d > 9 || d >= len(t) || (t[d] != '.' && t[d] != ')') {
			return 0, false, false
		}
		n, ordered, first = d+1, true, strings.TrimLeft(t[:d], "0") == "1"
	}
	if n < len(t) && t[n] != ' ' && t[n] != '\t' {
		return 0, false, false
	}
	return n, ordered, first
}

// startsBlock tells whether a line (t, at indent) would begin a block other than a
// paragraph, so that it can't be a lazy continuation.
func startsBlock(t string, indent int) bool {
	if indent >= 4 {
		return false
	}
	n, _, _ := listMarker(t)
	return n > 0 || opensFence(t) || atxLevel(t) > 0 || thematicBreak(t) || t[0] == '>'
}

// foldSpace folds runs of white space to one space and trims the ends.
func foldSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// definition reads a link reference definition that is a whole line, [label]: destination
// ["title"], and returns its destination.
func definition(line string) (string, bool) {
	indent, t := indentOf(line)
	if indent > 3 || !strings.HasPrefix(t, "[") || strings.HasPrefix(t, "[[") {
		return "", false
	}
	close := -1
	for i := 1; i < len(t) && i < 1000; i++ {
		if t[i] == '\\' {
			i++
			continue
		}
		if t[i] == '[' {
			return "", false
		}
		if t[i] == ']' {
			close = i
			break
		}
	}
	if close < 2 || close+1 >= len(t) || t[close+1] != ':' || strings.TrimSpace(t[1:close]) == "" {
		return "", false
	}
	rest := strings.TrimLeft(t[close+2:], " \t")
	dest, n, ok := destination(rest)
	if !ok || dest == "" {
		return "", false
	}
	tail := strings.TrimSpace(rest[n:])
	if tail != "" && !isTitle(tail) {
		return "", false
	}
	return dest, true
}

func isTitle(s string) bool {
	if len(s) < 2 {
		return false
	}
	switch s[0] {
	case '"':
		return s[len(s)-1] == '"'
	case '\'':
		return s[len(s)-1] == '\''
	case '(':
		return s[len(s)-1] == ')'
	}
	return false
}

// maxDest is the longest destination read, in bytes, and maxDepth the most parentheses
// nested in one: a link to a document is far shorter, and the bounds keep a text of a
// million "[a](" from being read a million times to its end.
const (
	maxDest  = 2048
	maxDepth = 8
)

// destination reads a link destination at the start of s: <...> or a run without white
// space whose parentheses balance. It returns the destination, the bytes it took, and
// whether it is one.
func destination(s string) (string, int, bool) {
	cut := len(s) > maxDest
	if cut {
		s = s[:maxDest]
	}
	if strings.HasPrefix(s, "<") {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '\n', '<':
				return "", 0, false
			case '>':
				return s[1:i], i + 1, true
			}
		}
		return "", 0, false
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isPunct(s[i+1]):
			i++
		case c == '(':
			depth++
			if depth > maxDepth {
				return "", 0, false
			}
		case c == ')':
			if depth == 0 {
				return s[:i], i, true
			}
			depth--
		case c <= ' ' || c == 0x7f:
			if depth != 0 {
				return "", 0, false
			}
			return s[:i], i, true
		}
	}
	if depth != 0 || cut {
		return "", 0, false
	}
	return s, len(s), true
}

func isPunct(c byte) bool {
	return c < 0x80 && unicode.IsPunct(rune(c)) || c < 0x80 && unicode.IsSymbol(rune(c))
}
