package semantic

import (
	"cmp"
	"slices"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// Fusion is how meaning and words are put together: within the first Depth documents of
// the lexical ranking, each one's score is its lexical score (as a share of the best's)
// plus Meaning times its similarity to the query (as a share of the range of those
// Depth's similarities, 0 to 1). The lexical side dominates: meaning reorders documents
// whose words score alike, and can't lift one the words put far below. Documents with
// every word still come before those with some (the contract's rule), and documents past
// Depth keep their lexical order after.
//
// A document the lexical ranking didn't give (not among its first Depth) whose
// similarity is in the top of the range of all documents' (at least Alone of it, 1 the
// most alike) and above every one of those Depth's comes back too, at most AloneMax of
// them, scored Meaning times its similarity (on the Depth's scale), marked ByMeaning:
// after the documents the words found, unless their scores are far below the best.
// Alone 0 is never.
type Fusion struct {
	Meaning  float64
	Depth    int
	Alone    float64
	AloneMax int
}

// Fused is the fusion chosen on half of BEIR SciFact's training claims (docs/SEARCH.md).
var Fused = Fusion{Meaning: 0.3, Depth: 50, Alone: 0.9, AloneMax: 3}

// Hit is one document of a ranking.
type Hit struct {
	ID    string
	Score float64 // the lexical score (0 for one found by meaning alone)
	Every bool    // it has every word of the query
	// ByMeaning: the lexical ranking didn't give it (or not among the first Depth); its
	// meaning did.
	ByMeaning bool
	Fused     float64
}

// Fuse reorders lex (the lexical ranking, best first) with sim (each document's
// similarity to the query; nil: lex as it is) as f says, and adds documents found by
// meaning alone. live, if not nil, says which of sim's documents may be given (not
// deleted); it is asked only of those f would add.
func (f Fusion) Fuse(lex []Hit, sim map[string]float32, live func(id string) bool) []Hit {
	if len(sim) == 0 || f.Depth <= 0 || f.Meaning <= 0 || len(lex) == 0 && (f.Alone <= 0 || f.AloneMax <= 0) {
		return lex
	}
	depth := min(f.Depth, len(lex))
	top := slices.Clone(lex[:depth])
	lo, hi := float32(0), float32(0)
	seen := false
	for _, h := range top {
		if s, ok := sim[h.ID]; ok {
			if !seen {
				lo, hi, seen = s, s, true
			}
			lo, hi = min(lo, s), max(hi, s)
		}
	}
	// The range of all the similarities: a document by meaning alone must be in its top
	// (Alone), and more alike than any the words ranked.
	loAll, hiAll, have := float32(0), float32(0), false
	for _, s := range sim {
		if !have {
			loAll, hiAll, have = s, s, true
		}
		loAll, hiAll = min(loAll, s), max(hiAll, s)
	}
	normAll := func(s float32) float64 {
		if hiAll <= loAll {
			return 0
		}
		return float64(s-loAll) / float64(hiAll-loAll)
	}
	norm := func(s float32) float64 {
		if hi <= lo {
			return 1
		}
		return float64(s-lo) / float64(hi-lo)
	}
	best := 0.0
	for _, h := range top {
		best = max(best, h.Score)
	}
	for i := range top {
		lexical := 1.0
		if best > 0 {
			lexical = top[i].Score / best
		}
		top[i].Fused = lexical
		if s, ok := sim[top[i].ID]; ok && seen {
			top[i].Fused += f.Meaning * norm(s)
		}
	}
	if f.Alone > 0 && f.AloneMax > 0 {
		given := make(map[string]bool, len(lex))
		for _, h := range lex {
			given[h.ID] = true
		}
		var alone []Hit
		for id, s := range sim {
			if given[id] || normAll(s) < f.Alone || seen && s <= hi {
				continue
			}
			n := normAll(s)
			if seen {
				n = min(norm(s), 1.5)
			}
			alone = append(alone, Hit{ID: id, ByMeaning: true, Fused: f.Meaning * n})
		}
		slices.SortFunc(alone, func(a, b Hit) int {
			if c := cmp.Compare(b.Fused, a.Fused); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		n := 0
		for _, h := range alone {
			if n == f.AloneMax {
				break
			}
			if live == nil || live(h.ID) {
				top = append(top, h)
				n++
			}
		}
	}
	slices.SortStableFunc(top, func(a, b Hit) int {
		if a.Every != b.Every {
			if a.Every {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.Fused, a.Fused)
	})
	return append(top, lex[depth:]...)
}

// Search is r.Search (the lexical ranking: docstore) of query, at most limit documents,
// fused with sim (Index.Similar; nil: the lexical answer as it is) as f says. Those found
// by meaning, not by the lexical ranking, are in byMeaning; Results.Total counts them.
func (f Fusion) Search(r *docstore.Reader, query string, limit int, sim map[string]float32) (res docstore.Results, byMeaning map[string]bool, err error) {
	if len(sim) == 0 {
		res, err = r.Search(query, limit)
		return res, nil, err
	}
	res, err = r.Search(query, max(limit, f.Depth))
	if err != nil {
		return res, nil, err
	}
	lex := make([]Hit, len(res.Found))
	found := make(map[string]docstore.Found, len(res.Found))
	for i, fd := range res.Found {
		lex[i] = Hit{ID: fd.Document.ID, Score: fd.Score, Every: fd.Every}
		found[fd.Document.ID] = fd
	}
	alone := map[string]docstore.Document{}
	fused := f.Fuse(lex, sim, func(id string) bool {
		d, err := r.ByID(id)
		if err != nil || d.Deleted != nil {
			return false
		}
		alone[id] = d
		return true
	})
	res.Found = res.Found[:0]
	for _, h := range fused {
		if len(res.Found) == limit {
			break
		}
		if h.ByMeaning {
			if byMeaning == nil {
				byMeaning = map[string]bool{}
			}
			byMeaning[h.ID] = true
			res.Found = append(res.Found, docstore.Found{Document: alone[h.ID]})
			res.Total++
			continue
		}
		res.Found = append(res.Found, found[h.ID])
	}
	return res, byMeaning, nil
}
