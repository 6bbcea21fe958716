package linediff

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// checkOps verifies that ops are a well-formed diff of a and b and that
// applying them to a yields b.
func checkOps(a, b []string, ops []Op) error {
	pa, pb := 0, 0
	var got []string
	for i, op := range ops {
		if op.A0 != pa || op.B0 != pb {
			return fmt.Errorf("op %d %+v not adjacent to (%d,%d)", i, op, pa, pb)
		}
		if i > 0 && ops[i-1].Kind == op.Kind {
			return fmt.Errorf("op %d repeats kind %v", i, op.Kind)
		}
		switch op.Kind {
		case Equal:
			if op.A1-op.A0 != op.B1-op.B0 || op.A1 <= op.A0 {
				return fmt.Errorf("bad equal op %+v", op)
			}
			for k := 0; k < op.A1-op.A0; k++ {
				if a[op.A0+k] != b[op.B0+k] {
					return fmt.Errorf("equal op %+v: %q != %q", op, a[op.A0+k], b[op.B0+k])
				}
			}
			got = append(got, a[op.A0:op.A1]...)
		case Delete:
			if op.B0 != op.B1 || op.A1 <= op.A0 {
				return fmt.Errorf("bad delete op %+v", op)
			}
		case Insert:
			if op.A0 != op.A1 || op.B1 <= op.B0 {
				return fmt.Errorf("bad insert op %+v", op)
			}
			if i > 0 && ops[i-1].Kind == Delete && i+1 < len(ops) && ops[i+1].Kind == Delete {
				return fmt.Errorf("insert between deletes at op %d", i)
			}
			got = append(got, b[op.B0:op.B1]...)
		default:
			return fmt.Errorf("bad kind %v", op.Kind)
		}
		pa, pb = op.A1, op.B1
	}
	if pa != len(a) || pb != len(b) {
		return fmt.Errorf("ops end at (%d,%d), want (%d,%d)", pa, pb, len(a), len(b))
	}
	if strings.Join(got, "") != strings.Join(b, "") {
		return fmt.Errorf("applying ops gives %q, want %q", strings.Join(got, ""), strings.Join(b, ""))
	}
	return nil
}

func countOps(ops []Op) (added, removed int) {
	for _, op := range ops {
		switch op.Kind {
		case Insert:
			added += op.B1 - op.B0
		case Delete:
			removed += op.A1 - op.A0
		}
	}
	return added, removed
}

// lcs is the textbook dynamic programme, the reference for minimality.
func lcs(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// applyUnified applies a unified diff produced by Unified to a, insisting
// on exact line numbers and context, unlike patch(1) which would forgive
// small errors.
func applyUnified(a, diff string) (string, error) {
	if diff == "" {
		return a, nil
	}
	al := Lines(a)
	dl := strings.Split(diff, "\n")
	if len(dl) < 3 || !strings.HasPrefix(dl[0], "--- ") || !strings.HasPrefix(dl[1], "+++ ") || dl[len(dl)-1] != "" {
		return "", fmt.Errorf("bad header or ending")
	}
	dl = dl[2 : len(dl)-1]
	var out []string
	pa := 0
	for k := 0; k < len(dl); {
		var as, ac, bs, bc int
		if err := parseHunkHeader(dl[k], &as, &ac, &bs, &bc); err != nil {
			return "", err
		}
		k++
		start := as - 1
		if ac == 0 {
			start = as
		}
		if start < pa || start > len(al) {
			return "", fmt.Errorf("hunk at %d out of order", as)
		}
		out = append(out, al[pa:start]...)
		pa = start
		var olds, news []string
		for k < len(dl) && !strings.HasPrefix(dl[k], "@@") {
			l := dl[k]
			if l == "" {
				return "", fmt.Errorf("empty diff line")
			}
			text := l[1:] + "\n"
			if k+1 < len(dl) && dl[k+1] == `\ No newline at end of file` {
				text = l[1:]
				k++
			}
			switch l[0] {
			case ' ':
				olds = append(olds, text)
				news = append(news, text)
			case '-':
				olds = append(olds, text)
			case '+':
				news = append(news, text)
			default:
				return "", fmt.Errorf("bad line %q", l)
			}
			k++
		}
		if len(olds) != ac || len(news) != bc {
			return "", fmt.Errorf("hunk counts %d,%d, header says %d,%d", len(olds), len(news), ac, bc)
		}
		// An empty range is numbered by the line before it.
		want := len(out) + 1
		if bc == 0 {
			want = len(out)
		}
		if bs != want {
			return "", fmt.Errorf("new start %d, want %d", bs, want)
		}
		if pa+len(olds) > len(al) {
			return "", fmt.Errorf("hunk runs past end")
		}
		for i, l := range olds {
			if al[pa+i] != l {
				return "", fmt.Errorf("context mismatch at line %d: %q vs %q", pa+i+1, al[pa+i], l)
			}
		}
		out = append(out, news...)
		pa += len(olds)
	}
	out = append(out, al[pa:]...)
	return strings.Join(out, ""), nil
}

func parseHunkHeader(h string, as, ac, bs, bc *int) error {
	if !strings.HasPrefix(h, "@@ -") || !strings.HasSuffix(h, " @@") {
		return fmt.Errorf("bad hunk header %q", h)
	}
	parts := strings.Fields(h[3 : len(h)-3])
	if len(parts) != 2 || parts[0][0] != '-' || parts[1][0] != '+' {
		return fmt.Errorf("bad hunk header %q", h)
	}
	parse := func(s string, start, count *int) error {
		n, c, found := strings.Cut(s, ",")
		var err error
		if *start, err = strconv.Atoi(n); err != nil {
			return err
		}
		*count = 1
		if found {
			if *count, err = strconv.Atoi(c); err != nil {
				return err
			}
			if *count == 1 {
				return fmt.Errorf("count 1 written out in %q", h)
			}
		}
		return nil
	}
	if err := parse(parts[0][1:], as, ac); err != nil {
		return err
	}
	return parse(parts[1][1:], bs, bc)
}

// vocab is small so that random texts share many lines, which is where
// diffs and merges are hard.
var vocab = []string{"a\n", "b\n", "c\n", "\n", "# h\n", "- x\n", "a", "b"}

// randText returns n lines from vocab; a line lacking "\n" may only be last.
func randText(r *rand.Rand, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		l := vocab[r.IntN(len(vocab))]
		if !strings.HasSuffix(l, "\n") && i < n-1 {
			l += "\n"
		}
		sb.WriteString(l)
	}
	return sb.String()
}

// mutate applies a few random line edits to text.
func mutate(r *rand.Rand, text string) string {
	ls := Lines(text)
	for range r.IntN(4) + 1 {
		p := r.IntN(len(ls) + 1)
		switch r.IntN(3) {
		case 0:
			if p < len(ls) {
				ls = append(ls[:p:p], ls[p+1:]...)
			}
		case 1:
			ls = append(ls[:p:p], append([]string{vocab[r.IntN(6)]}, ls[p:]...)...)
		case 2:
			if p < len(ls) {
				ls = append(ls[:p:p], append([]string{vocab[r.IntN(6)]}, ls[p+1:]...)...)
			}
		}
	}
	// Sometimes drop the final "\n", the case most easily got wrong.
	ls = Lines(strings.Join(ls, ""))
	dropLast := r.IntN(3) == 0
	for i := range ls {
		if !strings.HasSuffix(ls[i], "\n") {
			ls[i] += "\n"
		}
	}
	if dropLast && len(ls) > 0 {
		ls[len(ls)-1] = strings.TrimSuffix(ls[len(ls)-1], "\n")
	}
	return strings.Join(ls, "")
}
