package docstore_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

const outline = `# Launch

Intro line.

## Pricing

Twelve a month.

### FAQ

Why twelve?

Course
======

` + "```" + `
# not a heading
` + "```" + `

FAQ
---

Course questions.

# **Budget**

Ten.
`

func TestReadSection(t *testing.T) {
	s := open(t, "personal")
	mustCreate(t, s, "Plan", outline)
	for _, tc := range []struct {
		section    string
		path       string
		first, end int
	}{
		{"Pricing", "Launch/Pricing", 5, 12},
		{"pricing", "Launch/Pricing", 5, 12},
		{"## Pricing", "Launch/Pricing", 5, 12},
		{"Launch/Pricing", "Launch/Pricing", 5, 12},
		{"Launch / Pricing/ faq", "Launch/Pricing/FAQ", 9, 12},
		{"Course/FAQ", "Course/FAQ", 20, 24},
		{"course", "Course", 13, 24},
		{"Launch", "Launch", 1, 12},
		{"budget", "Budget", 25, 27},
		{"**Budget**", "Budget", 25, 27},
	} {
		d, _, part, at, err := readSection(t, s, "Plan", 0, tc.section)
		if err != nil {
			t.Errorf("ReadSection(%q): %v", tc.section, err)
			continue
		}
		if at.Path != tc.path || part.First != tc.first || part.Last != tc.end || part.Total != 27 || d.Title != "Plan" {
			t.Errorf("ReadSection(%q) = %s at %d, lines %d-%d of %d; want %s, %d-%d of 27", tc.section, at.Path, at.Line, part.First, part.Last, part.Total, tc.path, tc.first, tc.end)
		}
	}
	_, _, part, _, _ := readSection(t, s, "Plan", 0, "Pricing")
	if got := strings.Join(part.Lines, "\n"); !strings.HasPrefix(got, "## Pricing\n\nTwelve a month.") || !strings.Contains(got, "Why twelve?") || strings.Contains(got, "Course") {
		t.Errorf("the Pricing section:\n%s", got)
	}

	var none *docstore.NoSectionError
	_, _, _, _, err := readSection(t, s, "Plan", 0, "FAQ")
	if !errors.As(err, &none) || none.Matched != 2 || len(none.Matches) != 2 || none.Matches[0].Path != "Launch/Pricing/FAQ" || none.Matches[1].Path != "Course/FAQ" {
		t.Errorf("an ambiguous section: %+v", err)
	}
	_, _, _, _, err = readSection(t, s, "Plan", 0, "Roadmap")
	if !errors.As(err, &none) || none.Matched != 0 || none.Total != 6 || len(none.Headings) != 6 || none.Headings[5].Path != "Budget" || none.Version != 1 {
		t.Errorf("an unknown section: %+v", err)
	}
	_, _, _, _, err = readSection(t, s, "Plan", 2, "Launch")
	var nover *docstore.NoVersionError
	if !errors.As(err, &nover) {
		t.Errorf("a section of a version that isn't: %v", err)
	}
}

// A text of two million headings (8 MiB; a quarter million with -short or -race) answers
// a section, or its refusal, in well under a second, naming only the first twenty.
func TestSectionOfManyHeadings(t *testing.T) {
	n := 2 << 20
	if testing.Short() || testbin.Race {
		n = 256 << 10
	}
	s := open(t, "personal")
	mustCreate(t, s, "Many", strings.Repeat("# a\n", n-1)+"# b\n")
	// The thread's CPU, not wall time: at load 13 on two cores the wall time was 21 s.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, c0 := time.Now(), threadCPU()
	_, _, part, _, err := readSection(t, s, "Many", 0, "b")
	if err != nil || part.First != n {
		t.Fatalf("the last heading's section: %+v, %v", part.First, err)
	}
	var none *docstore.NoSectionError
	_, _, _, _, err = readSection(t, s, "Many", 0, "a")
	if !errors.As(err, &none) || none.Matched != n-1 || len(none.Matches) != docstore.MaxNamedHeadings || len(none.Headings) != docstore.MaxNamedHeadings {
		t.Fatalf("the refusal: %v", err)
	}
	used := threadCPU() - c0
	t.Logf("two sections of %d KiB of headings: %v of CPU, %v", 4*n>>10, used, time.Since(start))
	if used > 3*time.Second {
		t.Errorf("two sections of %d KiB of headings took %v of CPU", 4*n>>10, used)
	}
}
