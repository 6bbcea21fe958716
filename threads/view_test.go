package threads

import "testing"

// inView reads with fn in a View of its own: a test's read, in one snapshot. fn may run
// more than once (kv.DB.View); what inView returns is its last run's.
func inView[T any](tb testing.TB, s *Store, fn func(*Reader) (T, error)) (T, error) {
	tb.Helper()
	return ReadIn(tb.Context(), s, fn)
}

// The reads the tests make most, each a View of its own.

func readRecent(tb testing.TB, s *Store, limit int, except string) ([]Conversation, error) {
	tb.Helper()
	return inView(tb, s, func(r *Reader) ([]Conversation, error) { return r.Recent(limit, except) })
}

func readGet(tb testing.TB, s *Store, id string) (Conversation, error) {
	tb.Helper()
	return inView(tb, s, func(r *Reader) (Conversation, error) { return r.Get(id) })
}

func readPage(tb testing.TB, s *Store, id string, limit int, before string) ([]Message, bool, error) {
	tb.Helper()
	var more bool
	msgs, err := inView(tb, s, func(r *Reader) (msgs []Message, err error) {
		msgs, more, err = r.Page(id, limit, before)
		return msgs, err
	})
	return msgs, more, err
}

func readSearch(tb testing.TB, s *Store, query string, limit int, except string) (Results, error) {
	tb.Helper()
	return inView(tb, s, func(r *Reader) (Results, error) { return r.Search(query, limit, except) })
}
