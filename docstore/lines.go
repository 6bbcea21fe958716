package docstore

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	if v, err = b.versionFrom(vb, d.ID, version, raws[0]); err != nil {
		return d, v, part, err
	}
	part, err = Lines(v.Text, lines)
	v.Text = ""
	return d, v, part, err
}
