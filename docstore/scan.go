package docstore

import (
	"math"
	"slices"

	"github.com/compass-mcp/compass-mcp/search"
)

// Scan answers query the slow way, with no index: the ids of the space's live documents
// that Search must find (every quoted phrase, and at least one term but a stop word, in
// the latest title or text), sorted, found by reading every latest version whole. It is for checks (the
// tests compare it with Search after writes, crashes and random texts); it reads the whole
// space, so nothing serving calls it.
func (r *Reader) Scan(query string) ([]string, error) {
	found, _, err := r.ScanEvery(query)
	return found, err
}

// ScanEvery is Scan, and also the ids of those found with every word and phrase.
func (r *Reader) ScanEvery(query string) (found, every []string, err error) {
	q, err := search.Parse(query)
	if err != nil {
		return nil, nil, err
	}
	docs, _, err := r.List(math.MaxInt)
	if err != nil {
		return nil, nil, err
	}
	stems := func(toks []string) []string {
		out := make([]string, len(toks))
		for i, t := range toks {
			out[i] = search.Stem(t)
		}
		return out
	}
	for _, d := range docs {
		_, latest, err := r.Read(d.ID, 0)
		if err != nil {
			return nil, nil, err
		}
		title, text := search.Tokens(latest.Title), search.Tokens(latest.Text)
		stitle, stext := stems(title), stems(text)
		var in uint64
		for i, term := range q.Terms {
			has := hasRun(title, term.Tokens) || hasRun(text, term.Tokens)
			if !term.Quoted {
				run := stems(term.Tokens)
				has = hasRun(stitle, run) || hasRun(stext, run)
			}
			if has {
				in |= 1 << i
			}
		}
		if in&q.Required() == 0 || in&q.Quoted() != q.Quoted() {
			continue
		}
		found = append(found, d.ID)
		if in&q.Required() == q.Required() {
			every = append(every, d.ID)
		}
	}
	slices.Sort(found)
	slices.Sort(every)
	return found, every, nil
}

// hasRun reports whether run occurs in toks, one token after another.
func hasRun(toks, run []string) bool {
	for i := 0; i+len(run) <= len(toks); i++ {
		if slices.Equal(toks[i:i+len(run)], run) {
			return true
		}
	}
	return false
}
