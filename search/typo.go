package search

import (
	"bytes"
	"slices"
)

// Typos. A word of a query that no item has (none of the index's keys is its stem) is
// taken for a typo of the nearest key in the index, if one is near enough: within one edit
// (a letter added, dropped, changed, or two side by side swapped) for a word of four
// letters or fewer, within two for a longer one; of those nearest, the one in most items.
// The key begins with the word's first letter (a typo there is rarer, and the walk then
// reads a twenty-sixth of the keys: on PostgreSQL each of its seeks is a round trip).
// Only words of plain letters a to z are corrected (a name in another script, a number, a
// quoted phrase never), at most MaxFixes of a query; a word the index has is never
// changed. Plan searches with the nearest key instead and says so (Query.Fixes).
const (
	// MaxFixes is how many words of one query are corrected.
	MaxFixes = 3
	// MaxTypoSteps bounds the walks of the index's keys for one query, all its words
	// together: how many keys they land on (each a Seek: a round trip on PostgreSQL, at
	// worst). A walk reads only the keys that begin with the word's first letter and skips
	// every key whose beginning is already too far from the word, so it lands on far
	// fewer keys than the index has (docs/SEARCH.md); past the bound, the nearest found so
	// far is taken.
	MaxTypoSteps = 8192
	// minTypo is the shortest word corrected: a word of two letters has too many
	// neighbours to guess from.
	minTypo = 3
)

// Fix is a word of a query that no item had, and the key searched for instead.
type Fix struct {
	Word string // as the query gave it
	Key  string // the index's key (a stem) searched for in its place
}

// typoTerm reports whether term t may be corrected: one unquoted token of letters a to z.
func typoTerm(t Term) bool {
	if t.Quoted || t.Stop || t.asKey || len(t.Tokens) != 1 {
		return false
	}
	tok := t.Tokens[0]
	return len(tok) >= minTypo && len(tok) <= maxStemmed && stemmable([]byte(tok))
}

// nearest finds the key of the index nearest to word (its stem), as the doc above says,
// walking the keys of the terms bucket in order and skipping, with one Seek, every key
// that begins with a prefix already too far from it. It returns "" when none is near.
func (x Index) nearest(word string, next uint32, budget *int) string {
	if x.terms == nil {
		return ""
	}
	target := []byte(Stem(word))
	maxD := 2
	if len(word) <= 4 {
		maxD = 1
	}
	type near struct {
		key string
		d   int
	}
	var found []near
	n := len(target)
	// rows[i] is the edit distance row of the key's first i bytes against target: the
	// rows of a prefix the next key shares are kept.
	rows := make([][]int, MaxKey+2)
	for i := range rows {
		rows[i] = make([]int, n+1)
	}
	for j := range n + 1 {
		rows[0][j] = j
	}
	var prev []byte // the key whose rows are in rows, up to its length
	c := x.terms.Cursor()
	k, _ := c.Seek(target[:1])
	for ; k != nil && k[0] == target[0] && *budget > 0; *budget-- {
		z := bytes.IndexByte(k, 0)
		if z < 0 || z > MaxKey {
			k, _ = c.Next()
			continue
		}
		tok := k[:z]
		p := 0
		for p < len(prev) && p < len(tok) && prev[p] == tok[p] {
			p++
		}
		dead := 0
		for i := p; i < len(tok); i++ {
			lo := distRow(rows, i, tok, target)
			if lo > maxD {
				dead = i + 1
				break
			}
		}
		if dead > 0 {
			prev = append(prev[:0], tok[:dead]...)
			succ := successor(tok[:dead])
			if succ == nil {
				break
			}
			k, _ = c.Seek(succ)
			continue
		}
		prev = append(prev[:0], tok...)
		if d := rows[len(tok)][n]; d <= maxD && !bytes.Equal(tok, target) {
			found = append(found, near{key: string(tok), d: d})
		}
		// The key's other chunks: past them at once.
		k, _ = c.Seek(append(slices.Clone(tok), 1))
	}
	if len(found) == 0 {
		return ""
	}
	best := slices.MinFunc(found, func(a, b near) int { return a.d - b.d }).d
	var keys []string
	for _, f := range found {
		if f.d == best {
			keys = append(keys, f.key)
		}
	}
	if len(keys) > 16 {
		keys = keys[:16] // enough to choose from; their postings are read
	}
	// The most common of the nearest: the most bytes of postings.
	sizes := x.chunks(keys, next)
	bestKey, bestSize := "", -1
	for i, cs := range sizes {
		size := 0
		for _, c := range cs {
			size += len(c)
		}
		if size > bestSize {
			bestKey, bestSize = keys[i], size
		}
	}
	return bestKey
}

// distRow fills rows[i+1], the optimal string alignment distance (Levenshtein's, and two
// letters side by side swapped as one edit) of tok's first i+1 bytes to each prefix of
// target, from the rows before, and returns its least value: when that is past the
// distance wanted, no key that begins so can be near.
func distRow(rows [][]int, i int, tok, target []byte) int {
	cur, up := rows[i+1], rows[i]
	cur[0] = i + 1
	lo := cur[0]
	for j := 1; j <= len(target); j++ {
		cost := 1
		if tok[i] == target[j-1] {
			cost = 0
		}
		d := min(up[j]+1, cur[j-1]+1, up[j-1]+cost)
		if i > 0 && j > 1 && tok[i] == target[j-2] && tok[i-1] == target[j-1] {
			d = min(d, rows[i-1][j-2]+1)
		}
		cur[j] = d
		lo = min(lo, d)
	}
	return lo
}

// successor is the least byte string after every string that begins with p (nil: none).
func successor(p []byte) []byte {
	s := slices.Clone(p)
	for len(s) > 0 {
		if s[len(s)-1] < 0xff {
			s[len(s)-1]++
			return s
		}
		s = s[:len(s)-1]
	}
	return nil
}

// Word is a word of texts whose index key is key (the first met), for showing a Fix: a key
// is a stem ("polici"), the texts have the word ("policy"). It is key when none has it.
func Word(key string, texts ...string) string {
	for _, text := range texts {
		for _, tok := range Tokens(text) {
			if Stem(tok) == key {
				return tok
			}
		}
	}
	return key
}
