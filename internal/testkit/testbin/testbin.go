// Package testbin builds the compass-mcp binary for tests that drive it as its users do:
// over stdio and HTTP, as a separate process.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Path is the binary Main built.
var Path string

// Race says the binary was built with -race (as the tests were): it then runs several
// times slower and takes several times the memory, so memory and time bounds don't hold.
const Race = raceEnabled

// Main builds compass-mcp (with -race when the tests run with it) into a temporary folder, sets Path, runs the tests and removes
// the folder: call it from TestMain.
//
// The binaries the tests start serve no person's page (COMPASS_WEB=off: many servers at
// once would all want 127.0.0.1:7411) and write links relative to the server
// (COMPASS_LINK_BASE=/), as the golden answers have them; a test that wants the page or
// the default links sets them again in its command's Env, where the last value wins.
//
// Built with -race, the binary would sleep a second before it exits (the race detector's
// atexit_sleep_ms, 1000 by default), every command and every server a test starts: the
// tests' children get GORACE=atexit_sleep_ms=0, unless GORACE already says otherwise.
func Main(m *testing.M) {
	os.Setenv("COMPASS_WEB", "off")
	os.Setenv("COMPASS_LINK_BASE", "/")
	if raceEnabled && !strings.Contains(os.Getenv("GORACE"), "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	dir, err := os.MkdirTemp("", "compass-mcp-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	Path = filepath.Join(dir, "compass-mcp")
	_, here, _, _ := runtime.Caller(0)
	args := []string{"build", "-o", Path}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "./cmd/compass-mcp")...)
	build.Dir = filepath.Join(filepath.Dir(here), "..", "..", "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building compass-mcp:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
