package docstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// Blame says, for every line of a document's latest version, which version last changed
// it. It is read from the reverse deltas the versions are stored as (see record): the delta
// of version k-1 says which lines of version k it has, so the lines of k it lacks are the
// ones k made. Following the latest lines down the history that way costs each version's
// delta header, never its text: only the latest text is read whole.

// Blame is who last changed each line of a document's latest version.
type Blame struct {
	Document Document
	Lines    []string        // the latest text's lines, without their line breaks
	Runs     []Run           // the lines in order, as runs last changed by one version
	Versions map[int]Version // the versions the runs name (headers: no text)
	Names    spaces.Names    // people's names, as the first snapshot read them (Reader.Names)
}

// Run is Count lines from line First (1-based) that Version last changed.
type Run struct {
	Version, First, Count int
}

// Blame returns a named document's latest lines, each with the version that last changed
// it. Its cost is the latest text plus one delta header a version (at most, it stops once
// every line is found), read in read transactions of a snapshot's worth of versions each,
// as Log reads; its memory is the latest text and a run a change. A version kept whole
// that was written before blame (an older file) is diffed against the one after it.
func (s *Store) Blame(ctx context.Context, name string) (Blame, error) {
	var names spaces.Names
	d, err := ReadIn(ctx, s, func(r *Reader) (Document, error) { names = r.Names(); return r.Find(name) })
	if err != nil {
		return Blame{}, err
	}
	bl := Blame{Document: d, Versions: map[int]Version{}, Names: names}
	var (
		lin   lineage
		owner []int32 // the version that made each latest line; 0 while not known
		left  int     // latest lines not yet known
		hdr   Version // the header of version k, the one being stepped from
	)
	// What a range did, to undo it when its View runs again (chunks): the runs of owner it
	// set and the versions it added. Undoing costs what the range did; copying owner and
	// Versions at every range instead cost the whole document's a range, and made a blame
	// of 50,000 versions quadratic (issue 34).
	var (
		set   [][2]int // runs (at, n) of owner set in this range
		added []int    // versions first named in this range
	)
	made := func(at, n int) {
		for i := at; i < at+n; i++ {
			owner[i] = int32(hdr.Number)
		}
		left -= n
		set = append(set, [2]int{at, n})
		if _, ok := bl.Versions[hdr.Number]; n > 0 && !ok {
			bl.Versions[hdr.Number] = hdr
			added = append(added, hdr.Number)
		}
	}
	k := d.Version
	// What a range starts from, to start it again when its View runs again.
	type state struct {
		k, left int
		hdr     Version
		segs    []seg
	}
	var at state
	err = s.chunks(ctx, d, d.Version, func(b *buckets, lo, hi int, again bool) error {
		if again {
			for _, r := range set {
				clear(owner[r[0] : r[0]+r[1]])
			}
			for _, n := range added {
				delete(bl.Versions, n)
			}
			k, left, hdr = at.k, at.left, at.hdr
			lin.segs = slices.Clone(at.segs)
		} else {
			at = state{k, left, hdr, slices.Clone(lin.segs)}
		}
		set, added = set[:0], added[:0]
		if left == 0 && k < d.Version {
			return nil // every line is known: the older chunks have nothing to say
		}
		if hi == d.Version {
			latest, err := b.version(d.ID, d.Version)
			if err != nil {
				return err
			}
			lines := blameLines(latest.Text)
			bl.Lines = lines
			owner, left = make([]int32, len(lines)), len(lines)
			lin.segs = []seg{{n: len(lines)}}
			latest.Text = ""
			hdr = latest
		}
		if k <= 1 || left == 0 {
			return nil
		}
		// The records of versions k-1 down to lo-1 (or 1), read at once.
		from := max(lo-1, 1)
		_, raws, err := b.records(d.ID, from, k-1)
		if err != nil {
			return err
		}
		for ; k > lo-1 && k > 1 && left > 0; k-- {
			ops, prev, err := b.backOps(d.ID, k, raws[k-1-from])
			if err != nil {
				return err
			}
			if err := lin.back(ops, made); err != nil {
				return fmt.Errorf("following the lines of %s from version %d to %d: %w", d.ID, k, k-1, err)
			}
			hdr = prev
		}
		return nil
	})
	if err != nil {
		return Blame{}, err
	}
	bl.finish(owner, left > 0, hdr)
	return bl, nil
}

// finish makes bl's runs of the version that made each latest line (owner); when some are
// not known (unknown), the oldest version reached, oldest, made them.
func (bl *Blame) finish(owner []int32, unknown bool, oldest Version) {
	if unknown {
		for i := range owner {
			if owner[i] == 0 {
				owner[i] = int32(oldest.Number)
			}
		}
		bl.Versions[oldest.Number] = oldest
	}
	for i, o := range owner {
		if n := len(bl.Runs); n > 0 && bl.Runs[n-1].Version == int(o) {
			bl.Runs[n-1].Count++
			continue
		}
		bl.Runs = append(bl.Runs, Run{Version: int(o), First: i + 1, Count: 1})
	}
}

// blameLines are a text's lines as Blame shows them, without their line ends.
func blameLines(text string) []string {
	lines := linediff.Lines(eol(text))
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
	}
	return lines
}

// backOps returns the ops that build version k-1's lines from version k's, and k-1's
// header, given k-1's record as stored (raw; nil: not found): a delta's ops, a whole
// record's Next, or, for a whole record without Next (an older file), the diff of the two
// texts.
func (b *buckets) backOps(id string, k int, raw []byte) ([]deltaOp, Version, error) {
	r, err := recordOf(id, k-1, raw, false)
	if err != nil {
		return nil, Version{}, err
	}
	hdr := r.Version
	hdr.Text = ""
	switch {
	case r.Delta:
		return r.Ops, hdr, nil
	case r.Next != nil:
		return r.Next, hdr, nil
	}
	older, err := b.version(id, k-1)
	if err != nil {
		return nil, Version{}, err
	}
	newer, err := b.version(id, k)
	if err != nil {
		return nil, Version{}, err
	}
	return diffTexts(older.Text, newer.Text).shape(), hdr, nil
}

// seg is a run of n lines of a version: the latest version's lines at, at+1, ... when at
// ≥ 0, or, when at < 0, lines the latest version doesn't have.
type seg struct{ n, at int }

// lineage is a version's lines as runs of the latest's (and of lines gone since): as it
// steps down the history it costs a run a change, whatever the text's length.
type lineage struct {
	segs   []seg
	spare  []seg // the runs of the step before, reused
	starts []int // where each run starts, reused
}

// back makes l the lineage of the version before, given the ops that build that version's
// lines from this one's, and calls made with each run of latest lines (at, n) that this
// version has and the one before doesn't: this version made them.
func (l *lineage) back(ops []deltaOp, made func(at, n int)) error {
	starts := append(l.starts[:0], 0)
	for i, sg := range l.segs {
		starts = append(starts, starts[i]+sg.n)
	}
	l.starts = starts
	total := starts[len(l.segs)]
	kept := make([][2]int, 0, len(ops)+1)
	for _, op := range ops {
		if op.C == nil {
			continue
		}
		if len(op.C) != 2 || op.C[0] < 0 || op.C[0] > op.C[1] || op.C[1] > total {
			return fmt.Errorf("a delta copies lines %v of %d", op.C, total)
		}
		if op.C[0] < op.C[1] {
			kept = append(kept, [2]int{op.C[0], op.C[1]})
		}
	}
	slices.SortFunc(kept, func(x, y [2]int) int { return x[0] - y[0] })
	// The lines no op keeps are the ones this version made.
	from := 0
	for _, r := range append(kept, [2]int{total, total}) {
		if r[0] > from {
			l.each(starts, from, r[0], func(sg seg) {
				if sg.at >= 0 {
					made(sg.at, sg.n)
				}
			})
		}
		from = max(from, r[1])
	}
	out := l.spare[:0]
	add := func(sg seg) {
		if sg.n == 0 {
			return
		}
		if n := len(out); n > 0 {
			last := &out[n-1]
			if (last.at < 0 && sg.at < 0) || (last.at >= 0 && sg.at == last.at+last.n) {
				last.n += sg.n
				return
			}
		}
		out = append(out, sg)
	}
	for _, op := range ops {
		switch {
		case op.C != nil:
			l.each(starts, op.C[0], op.C[1], add)
		default:
			add(seg{n: op.lines(), at: -1})
		}
	}
	l.segs, l.spare = out, l.segs
	return nil
}

// each calls fn with the parts of l's runs that cover lines [from, to), in order.
func (l *lineage) each(starts []int, from, to int, fn func(seg)) {
	i, _ := slices.BinarySearch(starts, from+1)
	for i--; i < len(l.segs) && starts[i] < to; i++ {
		sg := l.segs[i]
		lo, hi := max(from, starts[i]), min(to, starts[i+1])
		if lo >= hi {
			continue
		}
		part := seg{n: hi - lo, at: -1}
		if sg.at >= 0 {
			part.at = sg.at + lo - starts[i]
		}
		fn(part)
	}
}
