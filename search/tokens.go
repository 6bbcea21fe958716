package search

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// foldTable holds the folded form of every rune below foldTableSize; others are folded
// when met, and remembered in foldMore.
const foldTableSize = 0x2000

var (
	foldTable [foldTableSize]string
	foldMore  sync.Map // rune → string
)

// Letters that NFKD leaves whole, spelled out as a reader of the language would type them
// on a keyboard without them.
var spelled = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe", 'ø': "o", 'Ø': "o",
	'đ': "d", 'Đ': "d", 'ð': "d", 'Ð': "d", 'þ': "th", 'Þ': "th", 'ł': "l", 'Ł': "l", 'ı': "i",
	'ħ': "h", 'Ħ': "h", 'ŧ': "t", 'Ŧ': "t",
}

func init() {
	for r := rune(0); r < foldTableSize; r++ {
		foldTable[r] = computeFold(r)
	}
}

// computeFold is r as a token holds it: decomposed (NFKD), marks dropped, lower case, only
// letters and digits kept.
func computeFold(r rune) string {
	if s, ok := spelled[r]; ok {
		return s
	}
	if !isWordRune(r) {
		return ""
	}
	var b strings.Builder
	for _, d := range norm.NFKD.String(string(r)) {
		if s, ok := spelled[d]; ok {
			b.WriteString(s)
			continue
		}
		if unicode.IsLetter(d) || unicode.IsDigit(d) {
			b.WriteRune(unicode.ToLower(d))
		}
	}
	return b.String()
}

func fold(r rune) string {
	if r < foldTableSize {
		return foldTable[r]
	}
	if s, ok := foldMore.Load(r); ok {
		return s.(string)
	}
	s := computeFold(r)
	foldMore.Store(r, s)
	return s
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// isCJK reports whether r is a character of a script written without spaces between
// words, which is a token of its own.
func isCJK(r rune) bool {
	return r >= 0x1100 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// asciiWord maps an ASCII byte to its folded form, or 0 when it is no part of a word.
var asciiWord = func() (t [128]byte) {
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c)
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = byte(c)
		t[c-'a'+'A'] = byte(c)
	}
	return t
}()

// scan calls fn with each token of s, folded (the slice is reused: copy what is kept),
// and the byte offset in s where it starts.
func scan(s string, fn func(tok []byte, at int)) {
	buf := make([]byte, 0, 64)
	start := -1
	flush := func() {
		if len(buf) > 0 {
			fn(buf, start)
		}
		buf, start = buf[:0], -1
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if f := asciiWord[c]; f != 0 {
				if start < 0 {
					start = i
				}
				buf = append(buf, f)
			} else if start >= 0 {
				flush()
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case isCJK(r):
			flush()
			buf = append(buf, s[i:i+n]...)
			start = i
			flush()
		case isWordRune(r):
			if start < 0 {
				start = i
			}
			buf = append(buf, fold(r)...)
		case start >= 0:
			flush()
		}
		i += n
	}
	flush()
}

// Tokens returns the tokens of s, folded, in order.
func Tokens(s string) []string {
	var out []string
	scan(s, func(tok []byte, _ int) { out = append(out, string(tok)) })
	return out
}

// Count adds sign times the number of times each index key (a token's stem, see Stem and
// MaxKey) occurs in s to counts: what an index keeps of a text.
func Count(s string, sign int, counts map[string]int) {
	// Counted here first: a lookup by string(tok) doesn't copy tok, an assignment would.
	seen := map[string]*int{}
	scan(s, func(tok []byte, _ int) {
		if n := seen[string(tok)]; n != nil {
			*n++
			return
		}
		n := 1
		seen[string(tok)] = &n
	})
	for tok, n := range seen {
		counts[key(stemBytes([]byte(tok), tok))] += sign * *n
	}
}
