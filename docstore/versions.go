package docstore

import (
	"context"
	"fmt"

	"github.com/compass-mcp/compass-mcp/linediff"
)

// Diff renders the unified diff from version a to version b of a named document (b 0: the
// latest), or "" when their texts are the same.
func (r *Reader) Diff(name string, a, b int) (Document, string, error) {
	d, err := r.b.named(name)
	if err != nil {
		return d, "", err
	}
	if b == 0 {
		b = d.Version
	}
	va, vb, err := r.b.pair(d, a, b)
	if err != nil {
		return d, "", err
	}
	return d, linediff.UnifiedLines(fmt.Sprintf("%s v%d", va.Title, a), fmt.Sprintf("%s v%d", vb.Title, b), va.lines, vb.lines, 3), nil
}

// versionLines is a version (without its Text) and its text's lines (linediff.Lines).
type versionLines struct {
	Version
	lines []string
}

// pair reads versions x and y of d as lines, for a diff: a text rebuilt from deltas is
// never joined, and when y is the version kept whole that x was rebuilt from (the latest,
// most often), its lines are read once for both.
func (b *buckets) pair(d Document, x, y int) (versionLines, versionLines, error) {
	for _, n := range []int{x, y} {
		if n < 1 || n > d.Version {
			return versionLines{}, versionLines{}, &NoVersionError{Document: d, Asked: n}
		}
	}
	vb, raws, err := b.records(d.ID, x, x)
	if err != nil {
		return versionLines{}, versionLines{}, err
	}
	vx, whole, err := b.linesFrom(vb, d.ID, x, raws[0])
	if err != nil || y == x {
		return vx, vx, err
	}
	if y == whole.Number {
		return vx, whole, nil
	}
	if vb, raws, err = b.records(d.ID, y, y); err != nil {
		return versionLines{}, versionLines{}, err
	}
	vy, _, err := b.linesFrom(vb, d.ID, y, raws[0])
	return vx, vy, err
}

// Since returns what changed in a named document after version n: the versions since,
// newest first (texts left out), and the unified diff from version n to the latest.
func (r *Reader) Since(name string, n int) (Document, []Version, string, error) {
	b := r.b
	d, err := b.named(name)
	if err != nil {
		return d, nil, "", err
	}
	from, latest, err := b.pair(d, n, d.Version)
	if err != nil {
		return d, nil, "", err
	}
	var vs []Version
	err = b.headers(d.ID, n+1, d.Version, func(v Version) error {
		vs = append(vs, v)
		return nil
	})
	if err != nil {
		return d, nil, "", err
	}
	return d, vs, linediff.UnifiedLines(fmt.Sprintf("%s v%d", from.Title, n), fmt.Sprintf("%s v%d", latest.Title, d.Version), from.lines, latest.lines, 3), nil
}

// Log returns a named document and every version of it, newest first, without their texts
// (LogPage with no bound). For a document of many versions, LogPage reads a page of them.
func (r *Reader) Log(name string) (Document, []Version, error) { return r.LogPage(name, 0, 0) }

// LogPage returns a named document and its versions numbered below before (0: from the
// latest), newest first, at most limit of them (0: all), without their texts: what a page
// of a history lists. No text is rebuilt, so its cost is the headers read (a few hundred
// bytes a version), whatever the texts' sizes: a page of a 50,000-version history reads
// that page's headers, not 50,000 (issue 34). For the texts, Store.Walk.
func (r *Reader) LogPage(name string, before, limit int) (Document, []Version, error) {
	d, err := r.b.named(name)
	if err != nil {
		return d, nil, err
	}
	top := d.Version
	if before > 0 {
		top = min(top, before-1)
	}
	bottom := 1
	if limit > 0 {
		bottom = max(1, top-limit+1)
	}
	vs := make([]Version, 0, max(0, top-bottom+1))
	// In chunks of a snapshot's worth of versions, each chunk's records read at once.
	for hi := top; hi >= bottom; hi -= snapshotEvery {
		err := r.b.headers(d.ID, max(bottom, hi-snapshotEvery+1), hi, func(v Version) error {
			vs = append(vs, v)
			return nil
		})
		if err != nil {
			return d, nil, err
		}
	}
	return d, vs, nil
}

// Walk calls fn with every version of document id (deleted or not), newest first, its text
// included: each text is rebuilt from the one after it and handed to fn, never kept, so
// memory holds about two versions' texts whatever the history's length. It reads in the
// read transactions chunks makes, so another process gets its turn with the file between
// them; fn runs inside one and should not wait on anything slow. It returns ErrNotFound
// when the space has no document id, and fn's error as it is. For the headers alone
// (a history to list), Log reads no text at all.
func (s *Store) Walk(ctx context.Context, id string, fn func(Version) error) error {
	d, err := ReadIn(ctx, s, func(r *Reader) (Document, error) { return r.ByID(id) })
	if err != nil {
		return err
	}
	// fn has what a run of a range handed it: a run again of that range (the versions are
	// the same, never changed once saved) hands it only the versions after.
	handed := 0
	return s.chunks(ctx, d, d.Version, func(b *buckets, lo, hi int, again bool) error {
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
func (s *Store) chunks(ctx context.Context, d Document, from int, read func(b *buckets, lo, hi int, again bool) error) error {
	chunk := snapshotEvery
	for hi := from; hi >= 1; hi -= chunk {
		lo := max(1, hi-chunk+1)
		runs := 0
		if err := s.view(ctx, func(b *buckets) error { runs++; return read(b, lo, hi, runs > 1) }); err != nil {
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
