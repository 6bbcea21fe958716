package filesync

import (
	"fmt"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// derivedBase's rules, one row each: the version a changed file's text is saved from.
func TestDerivedBase(t *testing.T) {
	// Version 1 "a b c", 2 adds the agent's line, 3 another; 4 is the latest.
	texts := map[int]string{
		1: "a\nb\nc\n",
		2: "a\nb\nc\nagent 2\n",
		3: "a\nb\nc\nagent 2\nagent 3\n",
		4: "a\nb\nc\nagent 2\nagent 3\nagent 4\n",
	}
	read := func(n int) (docstore.Version, error) {
		if n == 0 {
			n = 4
		}
		if _, ok := texts[n]; !ok {
			return docstore.Version{}, fmt.Errorf("no version %d", n)
		}
		return docstore.Version{Number: n, Text: texts[n]}, nil
	}
	for _, c := range []struct {
		rule string
		base int
		held []int
		text string
		n    int
	}{
		{"nothing held: the version the file was in step with", 3, nil, "a\nb\nc\nagent 2\nagent 3\nmine\n", 3},
		{"nearer the last: the last", 3, []int{1, 2}, "a\nb\nc\nagent 2\nagent 3\nmine\n", 3},
		{"nearer a version held (an editor's old buffer): that one", 3, []int{1, 2}, "a\nb\nc\nmine\n", 1},
		{"a tie (two lines from each): the newer", 3, []int{1}, "a\nb\nc\nagent 2\nZ\n", 3},
		{"the text is a later version (a killed write): that version", 2, []int{1}, texts[4], 4},
		{"a first run's join (base 0): base 0", 0, []int{1}, "x\n", 0},
		{"a held version past the base is not a candidate", 2, []int{3}, "a\nb\nc\nagent 2\nagent 3\nmine\n", 2},
	} {
		got, err := derivedBase(read, c.base, c.held, c.text)
		if err != nil || got != c.n {
			t.Errorf("%s: %d, %v; want %d", c.rule, got, err, c.n)
		}
	}
}

// The window's rules: the peak is the largest size in the last deleteWindow, and what is
// older is forgotten.
func TestDeleteWindow(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	var w Window
	w.since(at)
	w.sized(at, 100)
	w.sized(at.Add(time.Minute), 40)
	if w.peak() != 100 {
		t.Errorf("peak %d, want 100", w.peak())
	}
	w.Deleted = note(w.Deleted, at.Add(time.Minute), 3)
	if !tooMany(18, len(w.Deleted), w.peak()) || tooMany(17, len(w.Deleted), w.peak()) {
		t.Errorf("18 with 3 before are more than a fifth of 100, 17 are not")
	}
	later := at.Add(deleteWindow + 2*time.Minute)
	w.since(later)
	w.sized(later, 40)
	if w.peak() != 40 || len(w.Deleted) != 0 {
		t.Errorf("after the window: peak %d, %d deletes remembered; want 40, 0", w.peak(), len(w.Deleted))
	}
	if tooMany(1, 0, 3) || !tooMany(2, 0, 3) || tooMany(0, 5, 3) {
		t.Errorf("one delete is never too many; a pass with none never stops")
	}
	for range 1000 {
		w.sized(later, 40)
	}
	if len(w.Sizes) != 1 {
		t.Errorf("%d sizes kept for one size said again, want 1", len(w.Sizes))
	}
}
