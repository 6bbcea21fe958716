// Package version says which compass-mcp a binary is: the one version the server tells
// clients in initialize, --version prints, and a release's archives and bundle carry.
package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Release is the version this source is released as: to release a new one, change it
// here, commit, and tag the commit v<Release>. The release builder (go run
// ./internal/cmd/release) stamps it into the binaries it builds.
const Release = "0.2.0"

// stamped and commit are set by the release builder with -ldflags
// "-X github.com/compass-mcp/compass-mcp/internal/version.stamped=... -X ...version.commit=...". In
// a binary built any other way (go build, go install, go run) they are empty, and Number
// and Commit ask what the go command recorded instead.
var stamped, commit string

// Number is this binary's version: the release builder's; else the module's version the go
// command recorded (0.1.0 for go install ...@v0.1.0, a pseudo-version for a build in a clone
// of a commit after a tag); else, when it recorded none (-buildvcs=false, a git worktree, no
// git), Release+"+devel": this source's release, built from source.
func Number() string {
	bi, _ := debug.ReadBuildInfo()
	return number(stamped, bi)
}

func number(stamped string, bi *debug.BuildInfo) string {
	v := stamped
	if v == "" && bi != nil && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if v = strings.TrimPrefix(v, "v"); v == "" {
		v = Release + "+devel"
	}
	return v
}

// Commit is the commit this binary was built from (with " with uncommitted changes" when
// the go command says so), or "unknown".
func Commit() string {
	bi, _ := debug.ReadBuildInfo()
	return commitOf(commit, bi)
}

func commitOf(c string, bi *debug.BuildInfo) string {
	if c == "" && bi != nil {
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				c = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if c != "" && modified {
			c += " with uncommitted changes"
		}
	}
	if c == "" {
		return "unknown"
	}
	return c
}

// Line is "compass-mcp VERSION (commit HASH, GOVERSION)", what --version prints.
func Line() string {
	goVersion := "go version unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
	}
	return fmt.Sprintf("compass-mcp %s (commit %s, %s)", Number(), Commit(), goVersion)
}
