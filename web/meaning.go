package web

import (
	"time"
)

// MeaningDownBytes is about the most of the endpoint's last failure the page shows.
const MeaningDownBytes = 300

// meaningView is what the documents list says of the semantic tier (Config.Semantic,
// docs/SEARCH.md "Search by meaning"): whether it is on, its endpoint (its user info, query
// values and key redacted) and model, and how far the index of the list's space has got,
// as its last pass counted (semantic.Index.Progress: from memory, no read, no request).
type meaningView struct {
	On                            bool
	Endpoint, Model               string
	Started                       bool // an agent's search or change of the space started its index
	Counted                       bool // a pass has counted the space's documents
	Documents, Embedded, Passages int
	Dims                          int
	At                            time.Time // when the last pass counted
	Down                          string    // the endpoint's last failure, cut at MeaningDownBytes
}

// meaning is what the list of space's documents says of the semantic tier.
func (s *Site) meaning(space string) meaningView {
	t := s.cfg.Semantic
	if t == nil {
		return meaningView{}
	}
	st, started := t.Progress(space)
	return meaningView{On: true, Endpoint: t.Endpoint(), Model: st.Model, Started: started, Counted: !st.Counted.IsZero(),
		Documents: st.Documents, Embedded: st.Embedded, Passages: st.Passages, Dims: st.Dims, At: st.Counted,
		Down: cutText(st.Down, MeaningDownBytes)}
}
