package docstore

import (
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
	total := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
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
		i := strings.IndexByte(rest, '\n')
		rest, n = rest[i+1:], n+1
	}
	for ; n <= to; n++ {
		line, after, _ := strings.Cut(rest, "\n")
		p.Lines = append(p.Lines, strings.TrimSuffix(line, "\r"))
		rest = after
	}
	return p, nil
}
