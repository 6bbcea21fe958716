package search

// Results are a search's answer, whatever a store finds (F: docstore's documents,
// threads' conversations): at most the limit asked of them, best first, of Total found,
// Every with every word and phrase, Some with some (each found has every quoted phrase).
// Unread is how many more may have been found but were not read (MaxRead).
type Results[F any] struct {
	Query              Query
	Found              []F
	Total, Every, Some int
	Unread             int
	Read               int // bytes of texts read
	// Unquoted: nothing had the quoted phrases of Quoted, so these are the results of
	// its words, unquoted (Unquoted).
	Unquoted bool
	Quoted   Query
}

// FromRank is the results for q of a ranking (Rank's), its counts, nothing yet Found.
func FromRank[F any](q Query, rk Result) Results[F] {
	return Results[F]{Query: q, Every: rk.Every, Some: rk.Some, Total: rk.Every + rk.Some, Unread: rk.Unread, Read: rk.Read}
}

// Search is a store's search of query: pass (one search of a query within a reading
// budget) with the whole of MaxRead; when nothing had the query's quoted phrases (and
// nothing went unread), pass again with their words unquoted, within what the first left
// of the budget, and the answer says so (Results.Unquoted, Results.Quoted).
func Search[F any](query string, pass func(query string, budget int) (Results[F], error)) (Results[F], error) {
	res, err := pass(query, MaxRead)
	if err == nil && res.Total == 0 && res.Unread == 0 && res.Query.Quoted() != 0 {
		quoted := res.Query
		if res, err = pass(Unquoted(query), MaxRead-res.Read); err == nil {
			res.Unquoted, res.Quoted = true, quoted
		}
	}
	return res, err
}
