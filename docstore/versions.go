package docstore

import (
	"fmt"

	"github.com/compass-mcp/compass-mcp/linediff"
)

// Diff renders the unified diff from version a to version b of a named document (b 0: the
// latest), or "" when their texts are the same.
func (s *Store) Diff(name string, a, b int) (Document, string, error) {
	var (
		d    Document
		diff string
	)
	err := s.view(func(bk *buckets) (err error) {
		if d, err = bk.named(name); err != nil {
			return err
		}
		to := b // the View may run again: 0 (the latest) is asked afresh
		if to == 0 {
			to = d.Version
		}
		va, vb, err := bk.pair(d, a, to)
		if err != nil {
			return err
		}
		diff = linediff.Unified(fmt.Sprintf("%s v%d", va.Title, a), fmt.Sprintf("%s v%d", vb.Title, to), va.Text, vb.Text, 3)
		return nil
	})
	return d, diff, err
}

func (b *buckets) pair(d Document, x, y int) (Version, Version, error) {
	for _, n := range []int{x, y} {
		if n < 1 || n > d.Version {
			return Version{}, Version{}, &NoVersionError{Document: d, Asked: n}
		}
	}
	vx, err := b.version(d.ID, x)
	if err != nil {
		return Version{}, Version{}, err
	}
	vy, err := b.version(d.ID, y)
	return vx, vy, err
}

// Since returns what changed in a named document after version n: the versions since,
// newest first (texts left out), and the unified diff from version n to the latest.
func (s *Store) Since(name string, n int) (Document, []Version, string, error) {
	var (
		d    Document
		vs   []Version
		diff string
	)
	err := s.view(func(b *buckets) (err error) {
		vs = nil
		if d, err = b.named(name); err != nil {
			return err
		}
		from, latest, err := b.pair(d, n, d.Version)
		if err != nil {
			return err
		}
		err = b.headers(d.ID, n+1, d.Version, func(v Version) error {
			vs = append(vs, v)
			return nil
		})
		if err != nil {
			return err
		}
		diff = linediff.Unified(fmt.Sprintf("%s v%d", from.Title, n), fmt.Sprintf("%s v%d", latest.Title, d.Version), from.Text, latest.Text, 3)
		return nil
	})
	return d, vs, diff, err
}

// Log returns a named document and every version of it, newest first, without their texts:
// what a history lists. No text is rebuilt, so its cost is the headers' whatever the texts'
// sizes. It reads them in read transactions of a snapshot's worth of versions each (see
// chunks), so the file is never held for the whole of a long history. For the texts, Walk.
func (s *Store) Log(name string) (Document, []Version, error) {
	d, vs, _, err := s.log(name, false)
	return d, vs, err
}

// LogID is ByID, then Log of id if ByID found it (recorded), the lookup in the same
// transaction as the document and its newest versions (ReadLinkedID's for a history). Not
// recorded, it returns nothing else and no error.
func (s *Store) LogID(id string) (d Document, vs []Version, recorded bool, err error) {
	return s.log(id, true)
}

func (s *Store) log(name string, byID bool) (Document, []Version, bool, error) {
	// The document and its newest chunk in one transaction, then the rest.
	var (
		d        Document
		vs       []Version
		lo       int
		recorded = true
	)
	err := s.view(func(b *buckets) (err error) {
		d, vs, recorded = Document{}, nil, true
		if byID {
			if _, recorded, err = b.doc(name); err != nil || !recorded {
				return err
			}
		}
		if d, err = b.named(name); err != nil {
			return err
		}
		vs = make([]Version, 0, d.Version)
		lo = max(1, d.Version-snapshotEvery+1)
		return b.headers(d.ID, lo, d.Version, func(v Version) error {
			vs = append(vs, v)
			return nil
		})
	})
	if err != nil || !recorded {
		return Document{}, nil, recorded, err
	}
	before := 0 // len(vs) before this range
	err = s.chunks(d, lo-1, func(b *buckets, lo, hi int, again bool) error {
		if again {
			vs = vs[:before]
		}
		before = len(vs)
		return b.headers(d.ID, lo, hi, func(v Version) error {
			vs = append(vs, v)
			return nil
		})
	})
	return d, vs, true, err
}

// Walk calls fn with every version of document id (deleted or not), newest first, its text
// included: each text is rebuilt from the one after it and handed to fn, never kept, so
// memory holds about two versions' texts whatever the history's length. It reads in the
// read transactions chunks makes, so another process gets its turn with the file between
// them; fn runs inside one and should not wait on anything slow. It returns ErrNotFound
// when the space has no document id, and fn's error as it is. For the headers alone
// (a history to list), Log reads no text at all.
func (s *Store) Walk(id string, fn func(Version) error) error {
	d, err := s.ByID(id)
	if err != nil {
		return err
	}
	// fn has what a run of a range handed it: a run again of that range (the versions are
	// the same, never changed once saved) hands it only the versions after.
	handed := 0
	return s.chunks(d, d.Version, func(b *buckets, lo, hi int, again bool) error {
		if !again {
			handed = 0
		}
		skip := handed
		return b.span(d.ID, lo, hi, func(v Version) error {
			if skip > 0 {
				skip--
				return nil
			}
			handed++
			return fn(v)
		})
	})
}

// chunks calls read with d's versions from from down as ranges lo..hi, a snapshot's worth
// (snapshotEvery) each and each in a read transaction of its own: starting a range afresh
// costs at most one chain of deltas. A View may run its function again (kv.DB.View): read
// is then called again with the same range, and again true, and must undo what its run
// before did with that range.
func (s *Store) chunks(d Document, from int, read func(b *buckets, lo, hi int, again bool) error) error {
	chunk := snapshotEvery
	for hi := from; hi >= 1; hi -= chunk {
		lo := max(1, hi-chunk+1)
		runs := 0
		if err := s.view(func(b *buckets) error { runs++; return read(b, lo, hi, runs > 1) }); err != nil {
			return err
		}
	}
	return nil
}

// headers calls fn with versions hi down to lo of document id, their texts left out.
func (b *buckets) headers(id string, lo, hi int, fn func(Version) error) error {
	_, raws, err := b.records(id, lo, hi)
	if err != nil {
		return err
	}
	for k := hi; k >= lo; k-- {
		r, err := recordOf(id, k, raws[k-lo], false)
		if err != nil {
			return err
		}
		r.Version.Text = "" // a record of the layout before is JSON whole, its text in it
		if err := fn(r.Version); err != nil {
			return err
		}
	}
	return nil
}
