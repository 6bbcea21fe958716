package docstore_test

import (
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// view reads with fn in a View of its own: a test's read, in one snapshot. fn may run
// more than once (kv.DB.View); what view returns is its last run's.
func view[T any](tb testing.TB, s *docstore.Store, fn func(*docstore.Reader) (T, error)) (T, error) {
	tb.Helper()
	return docstore.ReadIn(tb.Context(), s, fn)
}

// view2 is view for a read of two results.
func view2[A, B any](tb testing.TB, s *docstore.Store, fn func(*docstore.Reader) (A, B, error)) (A, B, error) {
	tb.Helper()
	var a A
	var b B
	err := s.View(tb.Context(), func(r *docstore.Reader) (err error) {
		a, b, err = fn(r)
		return err
	})
	return a, b, err
}

// find is the document name names (a title or an id), in a View of its own.
func find(tb testing.TB, s *docstore.Store, name string) (docstore.Document, error) {
	tb.Helper()
	return view(tb, s, func(r *docstore.Reader) (docstore.Document, error) { return r.Find(name) })
}

// read is version n of the document name names (n 0: the latest), in a View of its own.
func read(tb testing.TB, s *docstore.Store, name string, n int) (docstore.Document, docstore.Version, error) {
	tb.Helper()
	return view2(tb, s, func(r *docstore.Reader) (docstore.Document, docstore.Version, error) { return r.Read(name, n) })
}

// The reads of more results, each in a View of its own, as their Reader methods.

func backlinks(tb testing.TB, s *docstore.Store, name, after string, limit int) (d docstore.Document, page []docstore.Document, total int, next string, err error) {
	tb.Helper()
	err = s.View(tb.Context(), func(r *docstore.Reader) (err error) {
		d, page, total, next, err = r.Backlinks(name, after, limit)
		return err
	})
	return d, page, total, next, err
}

func recent(tb testing.TB, s *docstore.Store, after string, limit int) (docs []docstore.Document, next string, total int, err error) {
	tb.Helper()
	err = s.View(tb.Context(), func(r *docstore.Reader) (err error) {
		docs, next, total, err = r.Recent(after, limit)
		return err
	})
	return docs, next, total, err
}

func proposal(tb testing.TB, s *docstore.Store, name string, n int) (d docstore.Document, p docstore.Proposal, base docstore.Version, err error) {
	tb.Helper()
	err = s.View(tb.Context(), func(r *docstore.Reader) (err error) {
		d, p, base, err = r.Proposal(name, n)
		return err
	})
	return d, p, base, err
}

func readSection(tb testing.TB, s *docstore.Store, name string, version int, section string) (d docstore.Document, v docstore.Version, part docstore.Part, at docstore.HeadingAt, err error) {
	tb.Helper()
	err = s.View(tb.Context(), func(r *docstore.Reader) (err error) {
		d, v, part, at, err = r.ReadSection(name, version, section)
		return err
	})
	return d, v, part, at, err
}

// findLinks is the document name names and its links, found then read in one View.
func findLinks(tb testing.TB, s *docstore.Store, name string, limit int) (docstore.Document, docstore.Links, error) {
	tb.Helper()
	return view2(tb, s, func(r *docstore.Reader) (docstore.Document, docstore.Links, error) {
		d, err := r.Find(name)
		if err != nil {
			return d, docstore.Links{}, err
		}
		ls, err := r.Links(d, limit)
		return d, ls, err
	})
}

// readLinked is version n of the document name names and, when that is its latest, the
// document's links, read in one View, as a page shows them.
func readLinked(tb testing.TB, s *docstore.Store, name string, version, limit int) (d docstore.Document, v docstore.Version, ls docstore.Links, err error) {
	tb.Helper()
	err = s.View(tb.Context(), func(r *docstore.Reader) (err error) {
		ls = docstore.Links{}
		if d, v, err = r.Read(name, version); err != nil || v.Number != d.Version {
			return err
		}
		ls, err = r.Links(d, limit)
		return err
	})
	return d, v, ls, err
}
