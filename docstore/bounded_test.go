package docstore_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// An old that occurs very often used to be searched for every overlapping occurrence, each
// line number counted from the start: "aa" in 2 MiB of "a" took 41 s and answered 6.3 MB,
// inside the shared commit. 256 KB shows the shape; the fuzz target checks the budget too.
func TestEditOfAnOftenRepeatedTextIsLinearAndShort(t *testing.T) {
	for _, tc := range []struct{ name, text, old string }{
		{"aa in a's", strings.Repeat("a", 256<<10), "aa"},
		{"a space in notes", strings.Repeat("some notes here and there\n", 10<<10), " "},
		{"a line in lines", strings.Repeat("- [ ] task\n", 24<<10), "- [ ] task"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := docstore.ReplaceOnce(tc.text, tc.old, "x")
			took := time.Since(start)
			var many *docstore.EditManyError
			if !errors.As(err, &many) {
				t.Fatalf("ReplaceOnce = %v, want an EditManyError", err)
			}
			if many.Count != strings.Count(tc.text, tc.old) || len(many.Lines) > docstore.MaxManyLines {
				t.Errorf("count %d, %d lines; want %d, at most %d lines", many.Count, len(many.Lines), strings.Count(tc.text, tc.old), docstore.MaxManyLines)
			}
			if took > time.Second {
				t.Errorf("took %s on %d KB, want well under 1 s", took, len(tc.text)>>10)
			}
		})
	}
}

// The origin system counts occurrences that don't overlap; one that repeats only by
// overlapping itself is still ambiguous, and no line is given twice.
func TestEditCountsOccurrencesThatDontOverlap(t *testing.T) {
	for _, tc := range []struct {
		text, old string
		count     int
		lines     string
	}{
		{"aaa", "aa", 1, "[1]"},
		{"aaaa", "aa", 2, "[1]"},
		{"x aa\ny\naa aa\n", "aa", 3, "[1 3]"},
		{"ababa", "aba", 1, "[1]"},
		{"abab\nabab\n", "bab", 2, "[1 2]"},
	} {
		_, err := docstore.ReplaceOnce(tc.text, tc.old, "z")
		var many *docstore.EditManyError
		if !errors.As(err, &many) || many.Count != tc.count || fmt.Sprint(many.Lines) != tc.lines {
			t.Errorf("ReplaceOnce(%q, %q) = %#v, want count %d on lines %s", tc.text, tc.old, err, tc.count, tc.lines)
		}
	}
	if got, err := docstore.ReplaceOnce("aab", "ab", "x"); err != nil || got != "ax" {
		t.Errorf("ReplaceOnce(aab, ab) = %q, %v; want ax", got, err)
	}
}

// A near match on a line of megabytes gives the match, cut, not the whole line.
func TestNearMatchOnAHugeLineIsCut(t *testing.T) {
	text := strings.Repeat("word  ", 1<<20)
	_, err := docstore.ReplaceOnce(text, strings.Repeat("word ", 1000), "x")
	var miss *docstore.EditMissError
	if !errors.As(err, &miss) || len(miss.Near) == 0 {
		t.Fatalf("ReplaceOnce = %v, want near matches", err)
	}
	for _, n := range miss.Near {
		if len(n.Text) > docstore.MaxNear || !n.Cut {
			t.Errorf("near match of %d bytes (cut %v), want at most %d, cut", len(n.Text), n.Cut, docstore.MaxNear)
		}
	}
}

// A name longer than any title is refused at once: an 8 MB name of "e e e ..." was
// matched word by word against every title inside the write transaction (24 s).
func TestLongNameIsRefusedAtOnce(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	var d docstore.Document
	for i := range 200 {
		d = mustCreate(t, s, fmt.Sprintf("Notes of meeting %d e", i), "a\n")
	}
	name := strings.Repeat("e ", 4<<20)
	start := time.Now()
	for _, call := range []func() error{
		func() error { _, err := find(t, s, name); return err },
		func() error { _, _, err := read(t, s, name, 0); return err },
		func() error { _, err := s.Append(ctx, name, "x", north); return err },
	} {
		if err := call(); !errors.Is(err, docstore.ErrNotFound) {
			t.Errorf("a name of 8 MiB = %v, want ErrNotFound", err)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("three calls with an 8 MiB name took %s", took)
	}
	// A title of 200 characters still names its document.
	long := strings.Repeat("é", docstore.MaxTitle)
	if _, err := s.Write(ctx, d.ID, long, "b\n", 0, north); err != nil {
		t.Fatal(err)
	}
	if got, err := find(t, s, long); err != nil || got.ID != d.ID {
		t.Errorf("Find(a title of %d characters) = %v, %v", docstore.MaxTitle, got.ID, err)
	}
}

// A refused edit never enters the shared commit, and another writer's append is answered
// while one edit's search runs: the search is done before the commit.
func TestRefusedEditDoesNotHoldUpOtherWriters(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	big := mustCreate(t, s, "Big", strings.Repeat("a", 8<<20))
	small := mustCreate(t, s, "Small", "a\n")
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 3 {
			if _, err := s.Edit(ctx, big.ID, "aa", "b", north); err == nil {
				t.Error("an ambiguous edit was saved")
			}
		}
	})
	var worst time.Duration
	for range 20 {
		start := time.Now()
		if _, err := s.Append(ctx, small.ID, "b", north); err != nil {
			t.Fatal(err)
		}
		worst = max(worst, time.Since(start))
	}
	wg.Wait()
	t.Logf("slowest of 20 appends beside refused edits of 8 MiB: %s", worst)
	if got, _ := find(t, s, big.ID); got.Version != 1 {
		t.Errorf("refused edits made versions: %d", got.Version)
	}
}
