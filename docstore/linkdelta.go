package docstore

import (
	"math"
	"slices"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/mdscan"
)

// A save that changes a link costs what it changed, not the text's links: the line diff
// says which lines changed; around each run of them, the lines up to a cut (mdscan.Cut:
// where the text's reading can begin afresh) are read before and after, and the links they
// had and have give, target by target, how many more or fewer times the text names each.
// Only the targets whose count changes are read from out/, and only those that come (from
// none) or go (to none) are resolved and counted in in/ or broken/, as the whole text's
// reading would have done. A target that stays keeps what it was resolved to, and, when
// broken, how it was written where it first came, though that line may have gone and
// another write it otherwise ([[Budget]] and [[budget]]), as a save that reads the whole
// text does too.
//
// A cut must be outside every code fence, in both texts: the old text's fences are found
// line by line (mdscan.Fence) from its lines that may be a fence's, and those of the lines
// read are followed as they are read. Whatever could make the lines around a change read
// otherwise than alone falls to the whole text's reading: a line before the last one read
// that may be a fence's but isn't at the margin (a fence in a list item or a quote), a
// change with no cut near it (maxContext: a change inside a long code block, or one that
// opens a fence no line closes), a text whose targets are more than are kept (which ones
// are kept depends on their order), and an index that doesn't have what the change was
// made against.

// maxContext is how many bytes of unchanged lines a save reads around its changes, in
// all, before it reads the whole text instead.
const maxContext = 64 << 10

// linkDelta is how a change changed a text's links: what it adds to their digest (mod
// 2^64), and each target whose count it changed, with the change (n, not 0) and, when the
// lines read after the change have it, how they first write it.
type linkDelta struct {
	digest  uint64
	targets []target
}

// linkDeltaOf is the change c (from oldText to text) makes to the text's links, read from
// the lines around its runs of changed lines alone; false when those can't be read alone
// (see above), or when reading them would cost as much as reading text.
func linkDeltaOf(oldText, text string, c change) (*linkDelta, bool) {
	if c.ops == nil {
		return nil, false
	}
	fences := fencesOf(oldText)
	runs := changedRuns(c.ops)
	d := &linkDelta{}
	count := d.counter()
	context, read := 0, 0
	for i := 0; i < len(runs); i++ {
		a0, a1, b0, b1, ok := widen(c, fences, runs, &i, &context)
		if !ok {
			return nil, false
		}
		before, after := strings.Join(c.old[a0:a1], ""), strings.Join(c.new[b0:b1], "")
		if read += len(before) + len(after); read > len(text) {
			return nil, false
		}
		if mayLink(before) {
			mdscan.Links(before, count(-1))
		}
		if mayLink(after) {
			mdscan.Links(after, count(1))
		}
	}
	kept := d.targets[:0]
	for _, t := range d.targets {
		if t.n != 0 {
			kept = append(kept, t)
		}
	}
	d.targets = kept
	return d, true
}

// run is a run of changed lines: old lines [a0, a1) became new lines [b0, b1).
type run struct{ a0, a1, b0, b1 int }

// changedRuns are the runs of lines ops change, next ones joined.
func changedRuns(ops []linediff.Op) []run {
	var runs []run
	for _, op := range ops {
		switch {
		case op.Kind == linediff.Equal:
		case len(runs) > 0 && runs[len(runs)-1].a1 == op.A0 && runs[len(runs)-1].b1 == op.B0:
			runs[len(runs)-1].a1, runs[len(runs)-1].b1 = op.A1, op.B1
		default:
			runs = append(runs, run{op.A0, op.A1, op.B0, op.B1})
		}
	}
	return runs
}

// counter returns what counts a link read into d: with sign -1 a link the change took
// away, with 1 one it brought.
func (d *linkDelta) counter() func(sign int) func(mdscan.Link) bool {
	at := map[string]int{}
	return func(sign int) func(mdscan.Link) bool {
		return func(l mdscan.Link) bool {
			d.digest += uint64(sign) * linkHash(l)
			key := linkKey(l)
			i, ok := at[key]
			if !ok {
				i = len(d.targets)
				at[key] = i
				d.targets = append(d.targets, target{key: key})
			}
			t := &d.targets[i]
			t.n += sign
			if sign > 0 && t.written == "" {
				t.written = l.ID + l.Title // as scanLinks has it: one of them is ""
			}
			return true
		}
	}
}

// cutAt tells whether the reading of lines can begin afresh at line k.
func cutAt(lines []string, k int) bool {
	return k == 0 || k == len(lines) || mdscan.Cut(lines[k-1], lines[k])
}

// widen widens runs[*i] to cuts in both texts outside a fence: back while the lines before
// it can't be read alone, then on, taking in the runs met on the way (*i moves past them).
// The unchanged lines taken in are added to *context; false when they pass maxContext, or
// when a line's fence can't be told, or a fence no line closes runs to the end.
func widen(c change, fences fenceMap, runs []run, i *int, context *int) (a0, a1, b0, b1 int, ok bool) {
	r := runs[*i]
	// Back to a cut in both texts outside a fence: the lines before r are the same in
	// both, and so are their fences.
	a0, b0 = r.a0, r.b0
	for !cutAt(c.old, a0) || !cutAt(c.new, b0) || !fences.closed(a0) {
		a0, b0 = a0-1, b0-1
		if *context += len(c.old[a0]); *context > maxContext {
			return 0, 0, 0, 0, false
		}
	}
	// On to a cut in both outside a fence, taking in the runs met on the way.
	var oldFence, newFence mdscan.Fence
	ok = true // false once a line's fence can't be told
	follow := func(f *mdscan.Fence, lines []string) {
		for _, l := range lines {
			if !ok {
				return
			}
			*f, ok = f.Next(l)
		}
	}
	follow(&oldFence, c.old[a0:r.a1])
	follow(&newFence, c.new[b0:r.b1])
	a1, b1 = r.a1, r.b1
	for ok && (!cutAt(c.old, a1) || !cutAt(c.new, b1) || oldFence.Open() || newFence.Open()) {
		if *i+1 < len(runs) && runs[*i+1].a0 == a1 {
			*i++
			follow(&oldFence, c.old[a1:runs[*i].a1])
			follow(&newFence, c.new[b1:runs[*i].b1])
			a1, b1 = runs[*i].a1, runs[*i].b1
			continue
		}
		if a1 == len(c.old) { // a fence no line closes: the rest of the text is its
			return 0, 0, 0, 0, false
		}
		if *context += len(c.old[a1]); *context > maxContext {
			return 0, 0, 0, 0, false
		}
		follow(&oldFence, c.old[a1:a1+1])
		follow(&newFence, c.new[b1:b1+1])
		a1, b1 = a1+1, b1+1
	}
	return a0, a1, b0, b1, ok
}

// maxFences is how many lines that open or close a fence fencesOf keeps track of.
const maxFences = 4096

// fenceMap is where a text's code fences are: the lines that open or close one, in
// order, as mdscan.Fence follows them; from line unknown on, that can't be told line by
// line.
type fenceMap struct {
	toggles []int
	unknown int
}

// fencesOf finds text's fences from its lines that may be a fence's alone: a text without
// any costs a search for ``` and ~~~.
func fencesOf(text string) fenceMap {
	m := fenceMap{unknown: math.MaxInt}
	var f mdscan.Fence
	// Where the next ``` and ~~~ are (-1: none after pos), each searched for again only
	// once passed, so that a text of many of one and none of the other is read once.
	next := [2]int{-2, -2}
	find := func(k, pos int) int {
		if next[k] == -2 || next[k] >= 0 && next[k] < pos {
			next[k] = strings.Index(text[pos:], [2]string{"```", "~~~"}[k])
			if next[k] >= 0 {
				next[k] += pos
			}
		}
		return next[k]
	}
	line, pos := 0, 0 // pos begins line
	for pos < len(text) {
		at, tilde := find(0, pos), find(1, pos)
		if at < 0 || tilde >= 0 && tilde < at {
			at = tilde
		}
		if at < 0 {
			break
		}
		start := pos + strings.LastIndexByte(text[pos:at], '\n') + 1
		line += strings.Count(text[pos:start], "\n")
		end := len(text)
		if j := strings.IndexByte(text[at:], '\n'); j >= 0 {
			end = at + j + 1
		}
		next, ok := f.Next(text[start:end])
		if !ok {
			m.unknown = line
			break
		}
		if next.Open() != f.Open() {
			if len(m.toggles) == maxFences {
				m.unknown = line // past so many fences, a save reads the whole text
				break
			}
			m.toggles = append(m.toggles, line)
		}
		f, line, pos = next, line+1, end
	}
	return m
}

// closed tells whether no fence is open before line k, as far as the map can tell.
func (m fenceMap) closed(k int) bool {
	if k > m.unknown {
		return false
	}
	n, _ := slices.BinarySearch(m.toggles, k) // how many toggle before k
	return n%2 == 0
}

// applyDelta changes document id's links by d: false, with nothing written, when the index
// isn't what d was made against (a target it removes isn't kept, or isn't kept as many
// times; the document's targets aren't all kept) or when the change would name more
// targets than are kept: then the whole text is to be read.
func (b *buckets) applyDelta(x linkIndex, id string, d *linkDelta) (bool, error) {
	sum, ok := x.sum(id)
	if !ok || sum.distinct > MaxLinks {
		return false, nil
	}
	ks := make([][]byte, len(d.targets))
	for i, t := range d.targets {
		ks[i] = outKey(id, t.key)
	}
	kept := kv.GetAll(x.out, ks)
	var gone, changed, came []target
	distinct := sum.distinct
	for i, dt := range d.targets {
		v := kept[i]
		if v == nil {
			if dt.n < 0 {
				return false, nil
			}
			came = append(came, dt)
			distinct++
			continue
		}
		t := decodeTarget([]byte(dt.key), v)
		switch n := t.n + dt.n; {
		case t.n <= 0 || n < 0:
			return false, nil
		case n == 0:
			gone = append(gone, t)
			distinct--
		default:
			t.n = n
			changed = append(changed, t)
		}
	}
	if distinct > MaxLinks {
		return false, nil
	}
	if err := b.writeTargets(x, id, gone, changed, came, false); err != nil {
		return false, err
	}
	if next := (linkSum{digest: sum.digest + d.digest, distinct: distinct}); next != sum {
		if err := x.sums.Put([]byte(id), next.value()); err != nil {
			return false, err
		}
	}
	return true, nil
}
