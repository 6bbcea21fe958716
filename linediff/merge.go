package linediff

import "strings"

// Conflict is a region that both sides changed differently, or changed
// next to each other.
//
// A side whose part of the region is empty (a pure insertion by the other
// side, say) has no lines, and its Start is the number its next line would
// have, so the region lies just before line Start. Lines are quoted
// without their "\n", so a last line that lacks one looks like one that
// has it.
type Conflict struct {
	// 1-based line numbers and the lines (without trailing "\n") of each side in the clashing region.
	BaseStart   int
	Base        []string
	TheirsStart int
	Theirs      []string
	MineStart   int
	Mine        []string
}

// Merge3 is a three-way line merge: base is the common ancestor, theirs the latest saved text, mine the text made from base.
// It returns the merged text, or Conflicts (non-empty) and merged == "".
//
// A change made on one side only is taken; the same change made on both
// sides is taken once. Changes by both sides that overlap, or that merely
// touch (both insert at one spot, or one side changes a line and the other
// its neighbour), are a conflict, as in diff3: the two edits were made
// without sight of each other, and lines next to each other are too likely
// to be related for a silent merge to be safe.
func Merge3(base, theirs, mine string) (merged string, conflicts []Conflict) {
	return merge3(base, theirs, mine, Clash)
}

// Prefer says whose lines a merge keeps where both sides changed the same lines.
type Prefer int

const (
	Clash        Prefer = iota // keep neither: report the region as a Conflict
	PreferMine                 // keep mine's lines there
	PreferTheirs               // keep theirs' lines there
)

// MergePrefer is Merge3 that settles every conflict by taking one side's lines for that
// region; changes elsewhere are merged as Merge3 merges them. prefer must not be Clash.
func MergePrefer(base, theirs, mine string, prefer Prefer) string {
	if prefer == Clash {
		panic("linediff: MergePrefer needs PreferMine or PreferTheirs")
	}
	merged, _ := merge3(base, theirs, mine, prefer)
	return merged
}

func merge3(base, theirs, mine string, prefer Prefer) (merged string, conflicts []Conflict) {
	// Shortcuts that also make the basic identities hold by construction.
	switch {
	case theirs == mine || base == mine:
		return theirs, nil
	case base == theirs:
		return mine, nil
	}
	bl, tl, ml := Lines(base), Lines(theirs), Lines(mine)
	te, me := diffEdits(bl, tl), diffEdits(bl, ml)

	var out []string
	pos := 0     // base lines before pos have been emitted
	tdelta := 0  // line offset of theirs against base, before the region
	mdelta := 0  // likewise for mine
	i, j := 0, 0 // next edit of theirs and of mine
	for i < len(te) || j < len(me) {
		// A region starts with the earliest edit and grabs every edit of
		// either side that overlaps or touches it, transitively.
		var lo int
		if j >= len(me) || (i < len(te) && te[i].a0 <= me[j].a0) {
			lo = te[i].a0
		} else {
			lo = me[j].a0
		}
		hi := lo
		i0, j0 := i, j
		for {
			if i < len(te) && te[i].a0 <= hi {
				hi = max(hi, te[i].a1)
				i++
			} else if j < len(me) && me[j].a0 <= hi {
				hi = max(hi, me[j].a1)
				j++
			} else {
				break
			}
		}
		out = append(out, bl[pos:lo]...)
		pos = hi
		tpart, tnext := apply(bl, tl, te[i0:i], lo, hi)
		mpart, mnext := apply(bl, ml, me[j0:j], lo, hi)
		switch {
		case j == j0:
			out = append(out, tpart...)
		case i == i0, equalLines(tpart, mpart):
			out = append(out, mpart...)
		case prefer == PreferMine:
			out = append(out, mpart...)
		case prefer == PreferTheirs:
			out = append(out, tpart...)
		default:
			conflicts = append(conflicts, Conflict{
				BaseStart:   lo + 1,
				Base:        trimNL(bl[lo:hi]),
				TheirsStart: lo + tdelta + 1,
				Theirs:      trimNL(tpart),
				MineStart:   lo + mdelta + 1,
				Mine:        trimNL(mpart),
			})
		}
		tdelta += tnext
		mdelta += mnext
	}
	if len(conflicts) > 0 {
		return "", conflicts
	}
	out = append(out, bl[pos:]...)
	return strings.Join(out, ""), nil
}

// apply returns base[lo:hi] as the side's edits within it turn it, and by
// how many lines they lengthen it.
func apply(base, side []string, es []edit, lo, hi int) ([]string, int) {
	if len(es) == 0 {
		return base[lo:hi], 0
	}
	// The edits are in order and separated by equal lines, so the side's
	// text for the region is one contiguous slice of it.
	first, last := es[0], es[len(es)-1]
	s0 := first.b0 - (first.a0 - lo)
	s1 := last.b1 + (hi - last.a1)
	return side[s0:s1], (s1 - s0) - (hi - lo)
}

func equalLines(x, y []string) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func trimNL(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = strings.TrimSuffix(l, "\n")
	}
	return out
}
