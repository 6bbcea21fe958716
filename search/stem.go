package search

import (
	"strings"
	"sync"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// Words are matched by their English stem (Snowball's "english", Porter2), so that
// "recorded" finds "record" and "studies" finds "study". Only tokens of plain letters a to
// z are stemmed (after folding, so "Café" is "cafe"): digits, other scripts and CJK
// characters are kept as they are, and so are tokens too short (two letters) or too long
// (over maxStemmed) to be English words.
const maxStemmed = 40

// stems remembers what Stem made of recent tokens: a text is mostly words already seen.
// It is bounded: when full it starts again, so a text of made-up words costs time, not
// memory.
var stems = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

const maxStems = 1 << 16

// stemmable reports whether tok is a token the English stemmer is given.
func stemmable(tok []byte) bool {
	if len(tok) < 3 || len(tok) > maxStemmed {
		return false
	}
	for _, c := range tok {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// Stem is the English stem of a folded token (Tokens gives them), or the token itself
// where it isn't stemmed.
func Stem(tok string) string { return stemBytes([]byte(tok), tok) }

// stemBytes is Stem of tok, with s its string when the caller has one ("" otherwise).
func stemBytes(tok []byte, s string) string {
	if !stemmable(tok) {
		if s == "" {
			s = string(tok)
		}
		return s
	}
	stems.RLock()
	st, ok := stems.m[string(tok)]
	stems.RUnlock()
	if ok {
		return st
	}
	if s == "" {
		s = string(tok)
	}
	env := snowballstem.NewEnv(s)
	english.Stem(env)
	st = env.Current()
	if st == s {
		st = s // the same string, not a copy
	}
	stems.Lock()
	if len(stems.m) >= maxStems {
		clear(stems.m)
	}
	stems.m[s] = st
	stems.Unlock()
	return st
}

// stopWords are the English words too common to tell documents apart (Snowball's English
// list, with Lucene's "will", and the "s" and "t" of "it's" and "don't"). They are looked for
// and ranked like any other word, weighing little since they are in most documents, but
// when a query has other words a document needn't have them to have "every word", isn't
// found by them alone, and no line is shown for them alone.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself yourselves he him his
	himself she her hers herself it its itself they them their theirs themselves what which who whom this that these
	those am is are was were be been being have has had having do does did doing would should could ought will a an
	the and but if or because as until while of at by for with about against between into through during before after
	above below to from up down in out on off over under again further then once here there when where why how all
	any both each few more most other some such no nor not only own same so than too very s t can`) {
		m[w] = true
	}
	return m
}()
