package web

import (
	"bytes"
)

// A document is rendered in pieces (see render): runs of whole top-level blocks, cut only
// where cutting changes nothing a reader sees, so that each piece parses by itself as it
// would within the whole text.
//
// A cut goes before a line that starts in column 0 after a blank line. Nothing goldmark
// parses continues across such a line: a paragraph, a table, a block quote, an indented
// code block, an HTML block of kinds 6 and 7, and every list item end at the blank line or
// at the unindented line after it. What may continue is kept whole:
//
//   - a list, when the line is its next item (a list marker): cut there, a loose list
//     would become several tight ones;
//   - a fenced code block opened in the first four columns, to its closing fence;
//   - an HTML block of kinds 1 to 5 (<script, <pre, <style, <textarea, a comment, <?, <!X,
//     CDATA), which ends only at its end marker, blank lines or not.
//
// Link reference definitions are the document's, wherever they are: render lets every
// piece see every definition (see collectRefs).

// piece is a run of src's lines: src[start:end], whose first line is line (from 1).
type piece struct {
	start, end, line int
}

// split cuts src into pieces of about target bytes or more, at the places described
// above: a piece is as small as its blocks allow, so one block longer than target is a
// piece of its own, whatever its length. One pass, no allocation but the result.
func split(src []byte, target int) []piece {
	var (
		out        []piece
		start      = 0 // of the current piece
		startLine  = 1
		line       = 0 // the current line's number, from 1
		prevBlank  = true
		fence      byte // the fence character of an open fenced code block, or 0
		fenceLen   int
		htmlEnd    []byte // the end marker of an open HTML block of kinds 1-5, or nil
		htmlEndAny [][]byte
	)
	for pos := 0; pos < len(src); {
		end := bytes.IndexByte(src[pos:], '\n')
		next := len(src)
		if end >= 0 {
			next = pos + end + 1
		}
		l := src[pos:next]
		line++
		blank := isBlank(l)
		switch {
		case fence != 0:
			if closesFence(l, fence, fenceLen) {
				fence = 0
			}
		case htmlEnd != nil || htmlEndAny != nil:
			if containsEnd(l, htmlEnd, htmlEndAny) {
				htmlEnd, htmlEndAny = nil, nil
			}
		default:
			if prevBlank && !blank && l[0] != ' ' && l[0] != '\t' && !startsListItem(l) && pos > start && pos-start >= target {
				out = append(out, piece{start, pos, startLine})
				start, startLine = pos, line
			}
			if c, n, ok := opensFence(l); ok {
				fence, fenceLen = c, n
			} else if e, any := opensHTML(l); e != nil || any != nil {
				if !containsEnd(l[1:], e, any) {
					htmlEnd, htmlEndAny = e, any
				}
			}
		}
		prevBlank = blank
		pos = next
	}
	if start < len(src) || len(out) == 0 {
		out = append(out, piece{start, len(src), startLine})
	}
	return out
}

func isBlank(l []byte) bool {
	for _, c := range l {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// indent3 returns l without the up to three spaces a top-level block may start with, and
// false when l has more (or a tab among them): it is then no block's opening line.
func indent3(l []byte) ([]byte, bool) {
	for i := 0; i < len(l) && i < 4; i++ {
		switch l[i] {
		case ' ':
			continue
		case '\t':
			return nil, false
		}
		return l[i:], true
	}
	return nil, false
}

// startsListItem reports whether l, unindented, opens a list item: - + * or 1. 1) (one to
// nine digits) followed by a space, a tab or the line's end. A thematic break (* * *)
// looks like one too: it is kept with what comes before, which changes nothing.
func startsListItem(l []byte) bool {
	i := 0
	switch {
	case l[0] == '-' || l[0] == '+' || l[0] == '*':
		i = 1
	case l[0] >= '0' && l[0] <= '9':
		for i < len(l) && i < 10 && l[i] >= '0' && l[i] <= '9' {
			i++
		}
		if i > 9 || i >= len(l) || (l[i] != '.' && l[i] != ')') {
			return false
		}
		i++
	default:
		return false
	}
	return i >= len(l) || l[i] == ' ' || l[i] == '\t' || l[i] == '\n' || l[i] == '\r'
}

// opensFence reports whether l opens a fenced code block: three or more ` or ~ after at
// most three spaces (a backtick fence's info string has no backtick).
func opensFence(l []byte) (byte, int, bool) {
	l, ok := indent3(l)
	if !ok || len(l) < 3 || (l[0] != '`' && l[0] != '~') {
		return 0, 0, false
	}
	c, n := l[0], 0
	for n < len(l) && l[n] == c {
		n++
	}
	if n < 3 || (c == '`' && bytes.IndexByte(l[n:], '`') >= 0) {
		return 0, 0, false
	}
	return c, n, true
}

// closesFence reports whether l closes a fence of n or more c: at most three spaces, the
// fence, then only white space.
func closesFence(l []byte, c byte, n int) bool {
	l, ok := indent3(l)
	if !ok {
		return false
	}
	k := 0
	for k < len(l) && l[k] == c {
		k++
	}
	return k >= n && isBlank(l[k:])
}

var (
	endScript = [][]byte{[]byte("</script>"), []byte("</pre>"), []byte("</style>"), []byte("</textarea>")}
	endOthers = map[string][]byte{"<!--": []byte("-->"), "<?": []byte("?>"), "<![CDATA[": []byte("]]>")}
)

// opensHTML reports whether l opens an HTML block of kinds 1 to 5, and the end marker that
// closes it (any of anyEnd, for kind 1). Matching is ASCII case-insensitive, as
// CommonMark's is for tag names.
func opensHTML(l []byte) (end []byte, anyEnd [][]byte) {
	l, ok := indent3(l)
	if !ok || len(l) < 2 || l[0] != '<' {
		return nil, nil
	}
	for _, tag := range []string{"script", "pre", "style", "textarea"} {
		if len(l) > len(tag) && bytes.EqualFold(l[1:1+len(tag)], []byte(tag)) {
			if rest := l[1+len(tag):]; len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '>' || rest[0] == '\n' || rest[0] == '\r' {
				return nil, endScript
			}
		}
	}
	for open, e := range endOthers {
		if bytes.HasPrefix(l, []byte(open)) {
			return e, nil
		}
	}
	if l[1] == '!' && len(l) > 2 && (l[2]|0x20) >= 'a' && (l[2]|0x20) <= 'z' {
		return []byte(">"), nil
	}
	return nil, nil
}

func containsEnd(l, end []byte, anyEnd [][]byte) bool {
	if end != nil {
		return bytes.Contains(l, end)
	}
	for _, e := range anyEnd {
		if containsFold(l, e) {
			return true
		}
	}
	return false
}

// containsFold reports whether l holds e, ASCII case-insensitively (e is lower case).
func containsFold(l, e []byte) bool {
	for i := 0; i+len(e) <= len(l); i++ {
		j := bytes.IndexByte(l[i:], '<')
		if j < 0 {
			return false
		}
		i += j
		if i+len(e) <= len(l) && bytes.EqualFold(l[i:i+len(e)], e) {
			return true
		}
	}
	return false
}
