package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// version and commit are set by the release builder (go run ./internal/release) with
// -ldflags "-X main.version=... -X main.commit=...". In a binary built any other way
// (go build, go install, go run) they are empty, and versionLine asks what the go command
// recorded instead: the module's version (v1.2.3 for go install ...@v1.2.3, a pseudo-version
// for a build in a clone) and the commit it was built from.
var version, commit string

// versionRequested reports whether args ask for the version: "--version", "-version" or "version".
func versionRequested(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version")
}

// printVersion writes the line saying which version and commit this binary is.
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintln(w, versionLine(version, commit))
	return err
}

// versionLine is "compass-mcp VERSION (commit HASH, GOVERSION)", filling what v and c leave
// empty from the build information, else "devel" and "unknown".
func versionLine(v, c string) string {
	goVersion := "go version unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if v == "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		if c == "" {
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
	}
	if v = strings.TrimPrefix(v, "v"); v == "" {
		v = "devel"
	}
	if c == "" {
		c = "unknown"
	}
	return fmt.Sprintf("compass-mcp %s (commit %s, %s)", v, c, goVersion)
}
