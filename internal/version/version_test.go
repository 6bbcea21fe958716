package version

import (
	"runtime/debug"
	"testing"
)

// The version is the release builder's when it stamped one, else the module's version the
// go command recorded, else this source's release marked +devel; a v is dropped, so that a
// release and go install of its tag say the same.
func TestNumber(t *testing.T) {
	mod := func(v string) *debug.BuildInfo { return &debug.BuildInfo{Main: debug.Module{Version: v}} }
	for _, c := range []struct {
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{
		{"0.2.0", mod("v9.9.9"), "0.2.0"},
		{"", mod("v0.1.0"), "0.1.0"},
		{"", mod("v0.1.1-0.20261201093000-0123456789ab"), "0.1.1-0.20261201093000-0123456789ab"},
		{"", mod("(devel)"), Release + "+devel"},
		{"", nil, Release + "+devel"},
	} {
		if got := number(c.stamped, c.bi); got != c.want {
			t.Errorf("number(%q, %v) = %q, want %q", c.stamped, c.bi, got, c.want)
		}
	}
}

func TestCommit(t *testing.T) {
	bi := &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}}
	if got := commitOf("", bi); got != "abc with uncommitted changes" {
		t.Errorf("commitOf from the build info = %q", got)
	}
	if got := commitOf("def", bi); got != "def" {
		t.Errorf("commitOf stamped = %q", got)
	}
	if got := commitOf("", &debug.BuildInfo{}); got != "unknown" {
		t.Errorf("commitOf of nothing = %q", got)
	}
}
