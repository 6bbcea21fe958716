package docstore

import (
	"math"
	"slices"

	"github.com/compass-mcp/compass-mcp/search"
)

// Scan answers query the slow way, with no index: the ids of the space's live documents
// whose latest title or text has every term, sorted, found by reading every latest version
// whole. It is what Search must find, for checks (the tests compare the two after writes,
// crashes and random texts); it reads the whole space, so nothing serving calls it.
func (s *Store) Scan(query string) ([]string, error) {
	q, err := search.Parse(query)
	if err != nil {
		return nil, err
	}
	docs, _, err := s.List(math.MaxInt)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, d := range docs {
		_, latest, err := s.Read(d.ID, 0)
		if err != nil {
			return nil, err
		}
		title, text := search.Tokens(latest.Title), search.Tokens(latest.Text)
		if slices.IndexFunc(q.Terms, func(term search.Term) bool {
			return !hasRun(title, term.Tokens) && !hasRun(text, term.Tokens)
		}) < 0 {
			ids = append(ids, d.ID)
		}
	}
	slices.Sort(ids)
	return ids, nil
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
