package linediff

import "testing"

func TestMergePrefer(t *testing.T) {
	base := "a\nb\nc\nd\ne\n"
	theirs := "A\nb\nC-theirs\nd\ne\n" // changes a (alone) and c (clash)
	mine := "a\nb\nC-mine\nd\nE\n"     // changes c (clash) and e (alone)
	if _, conflicts := Merge3(base, theirs, mine); len(conflicts) != 1 {
		t.Fatalf("want one conflict, got %v", conflicts)
	}
	for _, tc := range []struct {
		prefer Prefer
		want   string
	}{
		{PreferMine, "A\nb\nC-mine\nd\nE\n"},
		{PreferTheirs, "A\nb\nC-theirs\nd\nE\n"},
	} {
		if got := MergePrefer(base, theirs, mine, tc.prefer); got != tc.want {
			t.Errorf("MergePrefer(%d) = %q, want %q", tc.prefer, got, tc.want)
		}
	}
	// Without a conflict, preferring changes nothing.
	if got, want := MergePrefer(base, "A\nb\nc\nd\ne\n", mine, PreferTheirs), "A\nb\nC-mine\nd\nE\n"; got != want {
		t.Errorf("clean merge with a preference = %q, want %q", got, want)
	}
}
