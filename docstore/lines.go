package docstore

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/compass-mcp/compass-mcp/linediff"
)

// LineRange is a part of a text by its lines: From to To, 1-based and both included; 0
// for From means the first line, 0 for To the last.
type LineRange struct{ From, To int }

// ErrBadRange is returned (wrapped, with the reason) by ParseLineRange.
var ErrBadRange = errors.New("bad line range")

// ParseLineRange reads "120-180", "120-" (to the end), "-40" (the first 40) or "7" (that
// line alone).
func ParseLineRange(s string) (LineRange, error) {
	s = strings.TrimSpace(s)
	from, to, dash := strings.Cut(s, "-")
	num := func(part string) (int, error) {
		part = strings.TrimSpace(part)
		if part == "" {
			return 0, nil
		}
		n, err := strconv.Atoi(part)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%w: %q is not a line number (1 or more)", ErrBadRange, part)
		}
		return n, nil
	}
	var (
		r   LineRange
		err error
	)
	if r.From, err = num(from); err != nil {
		return r, err
	}
	if !dash {
		if r.From == 0 {
			return r, fmt.Errorf("%w: it is empty", ErrBadRange)
		}
		return LineRange{From: r.From, To: r.From}, nil
	}
	if r.To, err = num(to); err != nil {
		return r, err
	}
	if r.From == 0 && r.To == 0 {
		return r, fmt.Errorf("%w: give a line number on at least one side of -", ErrBadRange)
	}
	if r.To != 0 && r.From > r.To {
		return r, fmt.Errorf("%w: %d comes after %d", ErrBadRange, r.From, r.To)
	}
	return r, nil
}

// Part is some of a text's lines.
type Part struct {
	Lines       []string // without their line breaks
	First, Last int      // the line numbers of the first and last of Lines
	Total       int      // how many lines the text has
}

// NoLinesError is returned by Lines when the range begins after the text's last line.
type NoLinesError struct {
	Total, Asked int
}

func (e *NoLinesError) Error() string {
	return fmt.Sprintf("the text has %d lines, so no line %d", e.Total, e.Asked)
}

// Lines cuts r out of text. A text's lines are what its line breaks end (a last line
// without one counts too); a range that runs past the end stops at the last line, one that
// begins after it is a *NoLinesError. It reads only as far as the range goes, and counts
// the rest's line breaks.
func Lines(text string, r LineRange) (Part, error) {
	return cutLines(text, r, strings.Count, strings.IndexByte)
}

// cutLines is Lines for a text as a string or as bytes (a version's, read in place from
// the data file: only the lines cut out are copied).
func cutLines[T string | []byte](text T, r LineRange, count func(s, sep T) int, index func(s T, c byte) int) (Part, error) {
	total := count(text, T("\n"))
	if len(text) > 0 && text[len(text)-1] != '\n' {
		total++
	}
	from, to := max(r.From, 1), r.To
	if to == 0 || to > total {
		to = total
	}
	if from > total {
		return Part{Total: total}, &NoLinesError{Total: total, Asked: from}
	}
	p := Part{First: from, Last: to, Total: total, Lines: make([]string, 0, to-from+1)}
	rest, n := text, 1
	for n < from {
		rest, n = rest[index(rest, '\n')+1:], n+1
	}
	for ; n <= to; n++ {
		line := rest
		if i := index(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		p.Lines = append(p.Lines, string(line))
	}
	return p, nil
}

// ReadLines reads lines r of a named document's version (0: the latest), cut out where
// the version is kept: a few lines of a large document cost the lines, not the document.
// The Version has no Text. It returns what Read returns, and a *NoLinesError.
func (r *Reader) ReadLines(name string, version int, lines LineRange) (Document, Version, Part, error) {
	var (
		d    Document
		v    Version
		part Part
	)
	b := r.b
	var err error
	if d, version, err = b.namedVersion(name, version); err != nil {
		return d, v, part, err
	}
	vb, raws, err := b.records(d.ID, version, version)
	if err != nil {
		return d, v, part, err
	}
	if raw := raws[0]; len(raw) > 0 && raw[0] == recordMark {
		rec, body, err := decodeHeader(raw)
		if err != nil {
			return d, v, part, fmt.Errorf("reading version %d of document %s: %w", version, d.ID, err)
		}
		if !rec.Delta {
			v = rec.Version
			part, err = cutLines(body, lines, bytes.Count, bytes.IndexByte)
			return d, v, part, err
		}
	}
	if v, part, ok, err := b.deltaLines(vb, d.ID, version, raws[0], lines); ok || err != nil {
		return d, v, part, err
	}
	if v, err = b.versionFrom(vb, d.ID, version, raws[0]); err != nil {
		return d, v, part, err
	}
	part, err = Lines(v.Text, lines)
	v.Text = ""
	return d, v, part, err
}

// deltaLines cuts lines want of version n of document id, kept as a delta (raw, its
// record as stored), without rebuilding its text: each line asked for is followed down
// the chain of deltas to the version kept whole after it, where it is cut out in place,
// or to the delta that holds it. A two-line read of an old version so holds the deltas'
// headers and the two lines, not the text (issue 51: it held five times the document).
// ok is false when the chain has a record of the layout before (JSON whole), which
// versionFrom reads instead.
func (b *buckets) deltaLines(vb versionKeys, id string, n int, raw []byte, want LineRange) (v Version, part Part, ok bool, err error) {
	rec, err := recordOf(id, n, raw, false)
	if err != nil || !rec.Delta || len(raw) == 0 || raw[0] != recordMark {
		return v, part, false, err
	}
	v = rec.Version
	v.Text = ""
	total := opLines(rec.Ops)
	from, to := max(want.From, 1), want.To
	if to == 0 || to > total {
		to = total
	}
	if from > total {
		return v, Part{Total: total}, true, &NoLinesError{Total: total, Asked: from}
	}
	// Each line asked for: its text once found, else its index in the version reached.
	type piece struct {
		at    int
		text  string
		found bool
	}
	pieces := make([]piece, to-from+1)
	for i := range pieces {
		pieces[i].at = from - 1 + i
	}
	var ahead [][]byte
	for k := n; ; k++ {
		// rec is version k's record, a delta: follow the lines not yet found to k+1.
		starts := make([]int, len(rec.Ops)+1)
		for i, op := range rec.Ops {
			starts[i+1] = starts[i] + opLines([]deltaOp{op})
		}
		inserted := map[int][]string{}
		left := 0
		for i := range pieces {
			p := &pieces[i]
			if p.found {
				continue
			}
			j := sort.SearchInts(starts, p.at+1) - 1
			if j < 0 || j >= len(rec.Ops) {
				return v, part, true, fmt.Errorf("the delta of version %d of document %s has no line %d", k, id, p.at+1)
			}
			op := rec.Ops[j]
			if op.C == nil {
				ls, ok := inserted[j]
				if !ok {
					ls = linediff.Lines(op.I)
					inserted[j] = ls
				}
				p.text, p.found = ls[p.at-starts[j]], true
				continue
			}
			if len(op.C) != 2 || op.C[0] < 0 || op.C[0] > op.C[1] {
				return v, part, true, fmt.Errorf("the delta of version %d copies lines %v", k, op.C)
			}
			p.at = op.C[0] + p.at - starts[j]
			left++
		}
		if left == 0 {
			break
		}
		if len(ahead) == 0 {
			ahead = vb.getAll(k+1, (k+snapshotEvery)/snapshotEvery*snapshotEvery)
		}
		next := ahead[0]
		ahead = ahead[1:]
		if rec, err = recordOf(id, k+1, next, false); err != nil {
			return v, part, true, err
		}
		if rec.Delta {
			if next[0] != recordMark {
				return Version{}, Part{}, false, nil
			}
			continue
		}
		if next[0] != recordMark {
			return Version{}, Part{}, false, nil
		}
		// Version k+1 is kept whole: the lines left are cut out of its text in place.
		_, body, err := decodeHeader(next)
		if err != nil {
			return v, part, true, fmt.Errorf("reading version %d of document %s: %w", k+1, id, err)
		}
		order := make([]int, 0, left)
		for i := range pieces {
			if !pieces[i].found {
				order = append(order, i)
			}
		}
		sort.SliceStable(order, func(x, y int) bool { return pieces[order[x]].at < pieces[order[y]].at })
		line, rest := 0, body
		for _, i := range order {
			p := &pieces[i]
			for line < p.at && len(rest) > 0 {
				nl := bytes.IndexByte(rest, '\n')
				if nl < 0 {
					rest = nil
					break
				}
				rest, line = rest[nl+1:], line+1
			}
			if line != p.at || len(rest) == 0 {
				return v, part, true, fmt.Errorf("the delta of version %d of document %s copies line %d of version %d, which has fewer", k, id, p.at+1, k+1)
			}
			end := bytes.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			p.text, p.found = string(rest[:end]), true
		}
		break
	}
	part = Part{First: from, Last: to, Total: total, Lines: make([]string, len(pieces))}
	for i, p := range pieces {
		l := strings.TrimSuffix(p.text, "\n")
		part.Lines[i] = strings.Clone(strings.TrimSuffix(l, "\r"))
	}
	return v, part, true, nil
}
