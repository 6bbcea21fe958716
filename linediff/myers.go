package linediff

import "math"

// maxWork caps the search work of one Diff call (see the package
// documentation). It is set so that the xdiff heuristics alone finish
// every benchmark input, even a shuffled 1 MB document (24M units), and
// the budget only bites on inputs built to be pathological.
const maxWork = 1 << 25

// Constants of git's xdiff (xdiffi.c), whose heuristics this search
// follows so that large diffs look like git's.
const (
	minCost  = 256 // cost at which a region's search is cut short, at least
	heurMin  = 256 // cost after which a long snake may end the search early
	snakeCnt = 20  // lines that make a snake "long"
	kHeur    = 4   // how far ahead of its cost a snake must be to be taken
)

// myers is a linear-space Myers search over interned lines. ca and cb
// collect the lines found changed.
type myers struct {
	a, b   []int32
	ca, cb []bool
	kf, kb []int // furthest reach per diagonal, forward and backward
	koff   int   // index of diagonal 0 in kf and kb
	mxcost int
	work   int
	budget int
}

func newMyers(a, b []int32, budget int) *myers {
	nd := len(a) + len(b) + 3
	mx := int(math.Sqrt(float64(nd)))
	if mx < minCost {
		mx = minCost
	}
	return &myers{
		a: a, b: b,
		ca: make([]bool, len(a)), cb: make([]bool, len(b)),
		kf: make([]int, nd), kb: make([]int, nd),
		koff:   len(b) + 1,
		mxcost: mx,
		budget: budget,
	}
}

// compare marks the changed lines of a[off1:lim1] against b[off2:lim2].
// needMin asks for a minimal result; it is set only on regions whose cost
// is already known to be small, so it does not undo the bounds.
func (m *myers) compare(off1, lim1, off2, lim2 int, needMin bool) {
	// The upper half is handled by the loop rather than recursion so that
	// a long chain of heuristic splits cannot grow the stack.
	for {
		start1, start2 := off1, off2
		for off1 < lim1 && off2 < lim2 && m.a[off1] == m.b[off2] {
			off1++
			off2++
		}
		for off1 < lim1 && off2 < lim2 && m.a[lim1-1] == m.b[lim2-1] {
			lim1--
			lim2--
		}
		m.work += off1 - start1 + off2 - start2
		if off1 == lim1 || off2 == lim2 || m.work >= m.budget {
			m.markAll(off1, lim1, off2, lim2)
			return
		}
		s, ok := m.split(off1, lim1, off2, lim2, needMin)
		if !ok {
			m.markAll(off1, lim1, off2, lim2)
			return
		}
		m.compare(off1, s.i1, off2, s.i2, s.minLo)
		off1, off2, needMin = s.i1, s.i2, s.minHi
	}
}

// markAll reports a region as wholly replaced.
func (m *myers) markAll(off1, lim1, off2, lim2 int) {
	for i := off1; i < lim1; i++ {
		m.ca[i] = true
	}
	for j := off2; j < lim2; j++ {
		m.cb[j] = true
	}
}

type splitPoint struct {
	i1, i2       int
	minLo, minHi bool // whether each half must be diffed minimally
}

// search is one split's state: its region, the diagonals the region spans,
// and the band of diagonals each direction has reached so far. It is kept in
// one value so that each step of the search can be a method of its own.
type search struct {
	off1, lim1, off2, lim2 int
	dmin, dmax             int  // the region's diagonals
	fmid, bmid             int  // the diagonals the forward and backward searches start on
	fmin, fmax             int  // the forward band
	bmin, bmax             int  // the backward band
	odd                    bool // whether the searches meet on a forward step (fmid-bmid is odd)
}

// step is what one step of the search came to.
type step uint8

const (
	stepOn    step = iota // the searches have not met: go on
	stepMet               // the searches met: the split is on the middle snake
	stepSpent             // the work budget ran out
)

// split finds where to cut a region in two: on the middle snake if it is
// found within the cost limit, else at the furthest point reached. It
// reports false when the work budget runs out first. This is xdl_split of
// git's xdiff, written with diagonals k = i1 - i2.
func (m *myers) split(off1, lim1, off2, lim2 int, needMin bool) (splitPoint, bool) {
	fmid, bmid := off1-off2, lim1-lim2
	s := search{
		off1: off1, lim1: lim1, off2: off2, lim2: lim2,
		dmin: off1 - lim2, dmax: lim1 - off2,
		fmid: fmid, bmid: bmid,
		fmin: fmid, fmax: fmid,
		bmin: bmid, bmax: bmid,
		odd: (fmid-bmid)&1 != 0,
	}
	m.kf[m.koff+fmid] = off1
	m.kb[m.koff+bmid] = lim1

	for ec := 1; ; ec++ {
		p, r, fsnake := m.forward(&s)
		if r != stepOn {
			return p, r == stepMet
		}
		p, r, bsnake := m.backward(&s)
		if r != stepOn {
			return p, r == stepMet
		}

		if needMin {
			continue
		}

		// A path well ahead of its cost that ends in a long snake is very
		// likely on a good diff; cut there rather than search on.
		if (fsnake || bsnake) && ec > heurMin {
			if p, ok := m.snakeForward(off1, lim1, off2, lim2, s.fmin, s.fmax, fmid, ec); ok {
				return p, true
			}
			if p, ok := m.snakeBackward(off1, lim1, off2, lim2, s.bmin, s.bmax, bmid, ec); ok {
				return p, true
			}
		}

		// Too expensive: cut at the point that got furthest, so the part
		// already explored is diffed exactly and the rest starts afresh.
		if ec >= m.mxcost {
			return m.furthest(&s), true
		}
	}
}

// forward takes one edit-cost step of the forward search: it widens the band
// by a diagonal each side (or narrows it at the region's edge), extends each
// diagonal by one edit and then along its snake, and stops where it meets the
// backward search. It reports whether a snake longer than snakeCnt was
// followed, for split's heuristic.
func (m *myers) forward(s *search) (p splitPoint, r step, snake bool) {
	a, b := m.a, m.b
	kf, kb, o := m.kf, m.kb, m.koff
	if s.fmin > s.dmin {
		s.fmin--
		kf[o+s.fmin-1] = -1
	} else {
		s.fmin++
	}
	if s.fmax < s.dmax {
		s.fmax++
		kf[o+s.fmax+1] = -1
	} else {
		s.fmax--
	}
	lim1, lim2 := s.lim1, s.lim2
	bmin, bmax, odd := s.bmin, s.bmax, s.odd
	for k := s.fmax; k >= s.fmin; k -= 2 {
		var i1 int
		if kf[o+k-1] >= kf[o+k+1] {
			i1 = kf[o+k-1] + 1
		} else {
			i1 = kf[o+k+1]
		}
		prev := i1
		i2 := i1 - k
		for i1 < lim1 && i2 < lim2 && a[i1] == b[i2] {
			i1++
			i2++
		}
		// Checked per diagonal, not per cost step, because one step
		// can follow a snake on every diagonal.
		if m.work += 1 + i1 - prev; m.work >= m.budget {
			return splitPoint{}, stepSpent, snake
		}
		if i1-prev > snakeCnt {
			snake = true
		}
		kf[o+k] = i1
		if odd && bmin <= k && k <= bmax && kb[o+k] <= i1 {
			return splitPoint{i1, i2, true, true}, stepMet, snake
		}
	}
	return splitPoint{}, stepOn, snake
}

// backward is forward's mirror: one edit-cost step of the search from the
// end of the region towards its start.
func (m *myers) backward(s *search) (p splitPoint, r step, snake bool) {
	a, b := m.a, m.b
	kf, kb, o := m.kf, m.kb, m.koff
	if s.bmin > s.dmin {
		s.bmin--
		kb[o+s.bmin-1] = math.MaxInt
	} else {
		s.bmin++
	}
	if s.bmax < s.dmax {
		s.bmax++
		kb[o+s.bmax+1] = math.MaxInt
	} else {
		s.bmax--
	}
	off1, off2 := s.off1, s.off2
	fmin, fmax, odd := s.fmin, s.fmax, s.odd
	for k := s.bmax; k >= s.bmin; k -= 2 {
		var i1 int
		if kb[o+k-1] < kb[o+k+1] {
			i1 = kb[o+k-1]
		} else {
			i1 = kb[o+k+1] - 1
		}
		prev := i1
		i2 := i1 - k
		for i1 > off1 && i2 > off2 && a[i1-1] == b[i2-1] {
			i1--
			i2--
		}
		if m.work += 1 + prev - i1; m.work >= m.budget {
			return splitPoint{}, stepSpent, snake
		}
		if prev-i1 > snakeCnt {
			snake = true
		}
		kb[o+k] = i1
		if !odd && fmin <= k && k <= fmax && i1 <= kf[o+k] {
			return splitPoint{i1, i2, true, true}, stepMet, snake
		}
	}
	return splitPoint{}, stepOn, snake
}

// furthest is where split cuts a region whose search got too expensive: the
// point, forward or backward, that got furthest along its diagonal (clipped
// to the region). The explored side is then diffed minimally, the other
// afresh.
func (m *myers) furthest(s *search) splitPoint {
	kf, kb, o := m.kf, m.kb, m.koff
	m.work += s.fmax - s.fmin + s.bmax - s.bmin
	fbest, fbest1 := -1, -1
	for k := s.fmax; k >= s.fmin; k -= 2 {
		i1 := min(kf[o+k], s.lim1)
		i2 := i1 - k
		if s.lim2 < i2 {
			i1, i2 = s.lim2+k, s.lim2
		}
		if fbest < i1+i2 {
			fbest, fbest1 = i1+i2, i1
		}
	}
	bbest, bbest1 := math.MaxInt, math.MaxInt
	for k := s.bmax; k >= s.bmin; k -= 2 {
		i1 := max(s.off1, kb[o+k])
		i2 := i1 - k
		if i2 < s.off2 {
			i1, i2 = s.off2+k, s.off2
		}
		if i1+i2 < bbest {
			bbest, bbest1 = i1+i2, i1
		}
	}
	if (s.lim1+s.lim2)-bbest < fbest-(s.off1+s.off2) {
		return splitPoint{fbest1, fbest - fbest1, true, false}
	}
	return splitPoint{bbest1, bbest - bbest1, false, true}
}

func (m *myers) snakeForward(off1, lim1, off2, lim2, fmin, fmax, fmid, ec int) (splitPoint, bool) {
	kf, o := m.kf, m.koff
	best := 0
	var s splitPoint
	for k := fmax; k >= fmin; k -= 2 {
		dd := k - fmid
		if dd < 0 {
			dd = -dd
		}
		i1 := kf[o+k]
		i2 := i1 - k
		v := (i1 - off1) + (i2 - off2) - dd
		if v > kHeur*ec && v > best &&
			off1+snakeCnt <= i1 && i1 < lim1 &&
			off2+snakeCnt <= i2 && i2 < lim2 {
			for n := 1; m.a[i1-n] == m.b[i2-n]; n++ {
				if n == snakeCnt {
					best = v
					s = splitPoint{i1, i2, true, false}
					break
				}
			}
			m.work += snakeCnt
		}
	}
	return s, best > 0
}

func (m *myers) snakeBackward(off1, lim1, off2, lim2, bmin, bmax, bmid, ec int) (splitPoint, bool) {
	kb, o := m.kb, m.koff
	best := 0
	var s splitPoint
	for k := bmax; k >= bmin; k -= 2 {
		dd := k - bmid
		if dd < 0 {
			dd = -dd
		}
		i1 := kb[o+k]
		i2 := i1 - k
		v := (lim1 - i1) + (lim2 - i2) - dd
		if v > kHeur*ec && v > best &&
			off1 < i1 && i1 <= lim1-snakeCnt &&
			off2 < i2 && i2 <= lim2-snakeCnt {
			for n := 0; m.a[i1+n] == m.b[i2+n]; n++ {
				if n == snakeCnt-1 {
					best = v
					s = splitPoint{i1, i2, false, true}
					break
				}
			}
			m.work += snakeCnt
		}
	}
	return s, best > 0
}
