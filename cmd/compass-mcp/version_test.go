package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testbin"
)

// The binary the tests built carries no -ldflags, so --version must say what the go command
// recorded in it (go version -m shows the same): the module's version and the commit, or
// "devel" and "unknown" where it recorded none (GOFLAGS=-buildvcs=false, no git, a git
// worktree, which the go command does not stamp).
func TestVersionFromBuildInfo(t *testing.T) {
	t.Parallel()
	data := t.TempDir() + "/never-opened.db"
	long := cli(t, data, "--version")
	if got := cli(t, data, "version"); got != long {
		t.Errorf("compass-mcp version says %q, --version %q", got, long)
	}
	m := regexp.MustCompile(`^compass-mcp (\S+) \(commit ([^,]+), go\S+\)\n$`).FindStringSubmatch(long)
	if m == nil {
		t.Fatalf("--version printed %q, not \"compass-mcp VERSION (commit HASH, GOVERSION)\"", long)
	}
	out, err := exec.Command("go", "version", "-m", testbin.Path).Output()
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "mod" {
			recorded["mod"] = f[2]
		}
		if len(f) == 2 && f[0] == "build" {
			k, v, _ := strings.Cut(f[1], "=")
			recorded[k] = v
		}
	}
	wantVersion := strings.TrimPrefix(recorded["mod"], "v")
	if wantVersion == "(devel)" || wantVersion == "" {
		wantVersion = "devel"
	}
	wantCommit := "unknown"
	if rev := recorded["vcs.revision"]; rev != "" {
		wantCommit = rev
		if recorded["vcs.modified"] == "true" {
			wantCommit += " with uncommitted changes"
		}
	}
	if m[1] != wantVersion || m[2] != wantCommit {
		t.Errorf("--version says version %q, commit %q; go version -m recorded %q, %q:\n%s", m[1], m[2], wantVersion, wantCommit, out)
	}
}

func TestVersionLineFromLdflags(t *testing.T) {
	got := versionLine("0.2.0", "0123456789abcdef0123456789abcdef01234567")
	if !strings.HasPrefix(got, "compass-mcp 0.2.0 (commit 0123456789abcdef0123456789abcdef01234567, go") {
		t.Errorf("versionLine with the release builder's values = %q", got)
	}
	if got := versionLine("v1.0.0", "abc"); !strings.HasPrefix(got, "compass-mcp 1.0.0 (commit abc, ") {
		t.Errorf("a module version's v is dropped, so a release and go install say the same: got %q", got)
	}
}

// Only the flag alone asks for the version: anything else is left to the commands.
func TestVersionRequested(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		if !versionRequested(args) {
			t.Errorf("versionRequested(%q) = false", args)
		}
	}
	for _, args := range [][]string{nil, {"serve"}, {"--version", "x"}, {"call", "version"}} {
		if versionRequested(args) {
			t.Errorf("versionRequested(%q) = true", args)
		}
	}
}
