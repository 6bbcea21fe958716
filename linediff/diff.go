package linediff

import "strings"

// Lines splits text into lines, each keeping its "\n" (the last may lack it). "" -> nil.
func Lines(text string) []string {
	if text == "" {
		return nil
	}
	n := strings.Count(text, "\n")
	if text[len(text)-1] != '\n' {
		n++
	}
	lines := make([]string, 0, n)
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i+1])
		text = text[i+1:]
	}
	return lines
}

// OpKind says what a run of a diff does.
type OpKind int

const (
	Equal  OpKind = iota // the lines are in both a and b
	Delete               // the lines of a are removed
	Insert               // the lines of b are added
)

func (k OpKind) String() string {
	switch k {
	case Equal:
		return "Equal"
	case Delete:
		return "Delete"
	case Insert:
		return "Insert"
	}
	return "OpKind(?)"
}

// Op is one run of a diff: Kind is Equal, Delete or Insert; A and B are the half-open line ranges [A0,A1) in a and [B0,B1) in b.
//
// A Delete has B0 == B1 (the position in b it happens at) and an Insert
// has A0 == A1. Where a region is replaced, its Delete comes before its
// Insert.
type Op struct {
	Kind           OpKind
	A0, A1, B0, B1 int
}

// Diff returns the runs that turn a into b (adjacent, covering both slices fully, in order).
//
// No run is empty, and two runs of the same kind never follow each other.
// The work is bounded; see the package documentation.
func Diff(a, b []string) []Op {
	return opsFromEdits(len(a), len(b), diffEdits(a, b))
}

// Stats counts lines added and removed from a to b (text form; used for "+1 −1 lines").
func Stats(a, b string) (added, removed int) {
	if a == b {
		return 0, 0
	}
	for _, e := range diffEdits(Lines(a), Lines(b)) {
		removed += e.a1 - e.a0
		added += e.b1 - e.b0
	}
	return added, removed
}

// edit replaces a[a0:a1] with b[b0:b1]. Edits are kept sorted and
// separated by at least one equal line, which makes merging, sliding and
// hunk building simple index arithmetic.
type edit struct{ a0, a1, b0, b1 int }

func diffEdits(a, b []string) []edit {
	return diffEditsWithin(a, b, maxWork)
}

// diffEditsWithin is diffEdits with the search budget as a parameter, so
// that tests can exhaust it on small inputs.
func diffEditsWithin(a, b []string, budget int) []edit {
	// Trimming first makes the common case (a small edit in a large
	// document) cost one linear scan and no allocation beyond the result.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	var es []edit
	switch {
	case len(ma) == 0 && len(mb) == 0:
		return nil
	case len(ma) == 0 || len(mb) == 0:
		es = []edit{{0, len(ma), 0, len(mb)}}
	default:
		es = diffMiddle(ma, mb, budget)
	}
	for i := range es {
		es[i].a0 += pre
		es[i].a1 += pre
		es[i].b0 += pre
		es[i].b1 += pre
	}
	return slide(a, b, es)
}

// diffMiddle diffs two non-empty slices that share no first or last line.
func diffMiddle(a, b []string, budget int) []edit {
	ids := make(map[string]int32, len(a))
	xa := make([]int32, len(a))
	for i, l := range a {
		id, ok := ids[l]
		if !ok {
			id = int32(len(ids))
			ids[l] = id
		}
		xa[i] = id
	}
	inA := len(ids)
	xb := make([]int32, len(b))
	for i, l := range b {
		id, ok := ids[l]
		if !ok {
			// A line new in b can never match; give it an id past
			// every line of a so the discard below recognises it.
			id = int32(len(ids))
			ids[l] = id
		}
		xb[i] = id
	}
	inB := make([]bool, len(ids))
	for _, id := range xb {
		inB[id] = true
	}

	// Lines found on one side only are certainly changed. Leaving them
	// out of the search keeps its result just as minimal (they cannot be
	// part of any common subsequence) and makes rewrites and edits that
	// introduce new text nearly free.
	ca := make([]bool, len(a))
	cb := make([]bool, len(b))
	ra := make([]int, 0, len(a))
	ha := make([]int32, 0, len(a))
	for i, id := range xa {
		if inB[id] {
			ra = append(ra, i)
			ha = append(ha, id)
		} else {
			ca[i] = true
		}
	}
	rb := make([]int, 0, len(b))
	hb := make([]int32, 0, len(b))
	for j, id := range xb {
		if int(id) < inA {
			rb = append(rb, j)
			hb = append(hb, id)
		} else {
			cb[j] = true
		}
	}

	if len(ha) > 0 && len(hb) > 0 {
		m := newMyers(ha, hb, budget)
		m.compare(0, len(ha), 0, len(hb), false)
		for i, c := range m.ca {
			if c {
				ca[ra[i]] = true
			}
		}
		for j, c := range m.cb {
			if c {
				cb[rb[j]] = true
			}
		}
	} else {
		for _, i := range ra {
			ca[i] = true
		}
		for _, j := range rb {
			cb[j] = true
		}
	}
	return editsFromMarks(ca, cb)
}

// editsFromMarks pairs the unchanged lines of both sides in order; the
// search guarantees there are as many on each side and that they match.
func editsFromMarks(ca, cb []bool) []edit {
	var es []edit
	i, j := 0, 0
	for i < len(ca) || j < len(cb) {
		if i < len(ca) && j < len(cb) && !ca[i] && !cb[j] {
			i++
			j++
			continue
		}
		i0, j0 := i, j
		for i < len(ca) && ca[i] {
			i++
		}
		for j < len(cb) && cb[j] {
			j++
		}
		if i == i0 && j == j0 {
			// Unequal counts of unchanged lines would be a bug in the
			// search; degrade to replacing the rest rather than loop.
			i, j = len(ca), len(cb)
		}
		es = append(es, edit{i0, i, j0, j})
	}
	return es
}

// slide moves each pure insertion or deletion down past equal lines that
// repeat it, the way git does, so that the same edit is always shown (and
// merged) the same way regardless of where the search happened to place
// it; a block that reaches the next edit joins it.
func slide(a, b []string, es []edit) []edit {
	out := es[:0]
	for i := 0; i < len(es); i++ {
		e := es[i]
		for {
			nextA, nextB := len(a), len(b)
			if i+1 < len(es) {
				nextA, nextB = es[i+1].a0, es[i+1].b0
			}
			switch {
			case e.b0 == e.b1:
				for e.a1 < nextA && a[e.a0] == a[e.a1] {
					e.a0, e.a1, e.b0, e.b1 = e.a0+1, e.a1+1, e.b0+1, e.b1+1
				}
			case e.a0 == e.a1:
				for e.b1 < nextB && b[e.b0] == b[e.b1] {
					e.a0, e.a1, e.b0, e.b1 = e.a0+1, e.a1+1, e.b0+1, e.b1+1
				}
			}
			if i+1 < len(es) && e.a1 == nextA {
				e.a1, e.b1 = es[i+1].a1, es[i+1].b1
				i++
				continue
			}
			break
		}
		out = append(out, e)
	}
	return out
}

func opsFromEdits(n, m int, es []edit) []Op {
	if len(es) == 0 {
		if n == 0 {
			return nil
		}
		return []Op{{Equal, 0, n, 0, m}}
	}
	ops := make([]Op, 0, 3*len(es)+1)
	pa, pb := 0, 0
	for _, e := range es {
		if e.a0 > pa {
			ops = append(ops, Op{Equal, pa, e.a0, pb, e.b0})
		}
		if e.a1 > e.a0 {
			ops = append(ops, Op{Delete, e.a0, e.a1, e.b0, e.b0})
		}
		if e.b1 > e.b0 {
			ops = append(ops, Op{Insert, e.a1, e.a1, e.b0, e.b1})
		}
		pa, pb = e.a1, e.b1
	}
	if pa < n {
		ops = append(ops, Op{Equal, pa, n, pb, m})
	}
	return ops
}
