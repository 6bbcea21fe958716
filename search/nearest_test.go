package search

import (
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	names := []string{"from", "private", "expires", "version", "members"}
	for in, want := range map[string]string{
		"pivate": "private", "expire": "expires", "vesion": "version", "memebrs": "members", // one edit, a swap
		"VERSION": "version", "xyz": "", "": "", "fr": "", strings.Repeat("a", 1000): "",
	} {
		if got := Nearest(in, names); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}
