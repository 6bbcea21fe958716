package mdscan

import "strings"

// table reads text[start:end], a paragraph, as GFM reads tables (goldmark's extension): the
// first line after the first that is a delimiter row (|---|:--:|), if the line before it has
// as many cells, makes the rest of the paragraph a table from that line on. The lines
// before stay a paragraph; each cell is read inline on its own, split at each | not after a
// backslash (so that a [[Title|shown]] in a table is two cells, and [[Title\|shown]] one);
// a row's cells past the header's are dropped. It reports whether there was a table.
func (w *walker) table(start, end int) bool {
	first := strings.IndexByte(w.text[start:end], '\n')
	if first < 0 || !strings.ContainsAny(w.text[start+first:end], "|:") {
		return false // a delimiter row, after the first line, has one or the other
	}
	type line struct{ start, end int } // without block quote markers or white space around
	var lines []line
	for pos := start; ; {
		e := strings.IndexByte(w.text[pos:end], '\n')
		if e < 0 {
			e = end
		} else {
			e += pos
		}
		s, off := w.text[pos:e], pos
		for {
			t := strings.TrimLeft(s, " \t")
			off, s = off+len(s)-len(t), t
			if !strings.HasPrefix(s, ">") {
				break
			}
			s, off = s[1:], off+1
		}
		s = strings.TrimRight(s, " \t\r")
		lines = append(lines, line{off, off + len(s)})
		if e == end {
			break
		}
		pos = e + 1
	}
	for i := 1; i < len(lines); i++ {
		cols := delimiterRow(w.text[lines[i].start:lines[i].end])
		if cols == 0 {
			continue
		}
		header := w.cells(lines[i-1].start, lines[i-1].end)
		if len(header) != cols {
			return false
		}
		if i >= 2 {
			w.scan(start, lines[i-2].end)
		}
		for _, c := range header {
			w.scan(c[0], c[1])
		}
		for _, l := range lines[i+1:] {
			for k, c := range w.cells(l.start, l.end) {
				if k < cols {
					w.scan(c[0], c[1])
				}
			}
		}
		return true
	}
	return false
}

// cells are the ranges of the cells of the row text[start:end].
func (w *walker) cells(start, end int) [][2]int {
	if start < end && w.text[start] == '|' {
		start++
	}
	if end > start && w.text[end-1] == '|' {
		end--
	}
	var out [][2]int
	for pos := start; pos < end; {
		c := pos
		for c < end && !(w.text[c] == '|' && (c == 0 || w.text[c-1] != '\\')) {
			c++
		}
		out = append(out, [2]int{pos, c})
		pos = c + 1
	}
	return out
}

// delimiterRow is how many columns a GFM delimiter row has (| :--- | ---: |), or 0 when s
// is none.
func delimiterRow(s string) int {
	if indent, _ := indentOf(s); indent > 3 || strings.Trim(s, "-") == "" {
		return 0
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != ' ' && c != '\t' && c != '-' && c != '|' && c != ':' {
			return 0
		}
	}
	cols := strings.Split(s, "|")
	if strings.TrimSpace(cols[0]) == "" {
		cols = cols[1:]
	}
	if len(cols) > 0 && strings.TrimSpace(cols[len(cols)-1]) == "" {
		cols = cols[:len(cols)-1]
	}
	for _, c := range cols {
		c = strings.TrimSpace(c)
		c = strings.TrimPrefix(c, ":")
		c = strings.TrimSuffix(c, ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return 0
		}
	}
	return len(cols)
}
