package command

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/internal/version"
	"github.com/mark3labs/mcp-go/client"
)

var versionRE = regexp.MustCompile(`^compass-mcp (\S+) \(commit ([^,]+), go\S+\)\n$`)

// One version everywhere: --version (and version) and what the server tells clients in
// initialize say the same, for the binary the tests built (no -ldflags: what the go command
// recorded, here nothing, so the source's release +devel) and for one stamped as the release
// builder stamps (-ldflags -X, set explicitly: GOFLAGS=-buildvcs=false on these machines).
// Before, the server said 0.1.0 while --version said devel or a pseudo-version.
func TestOneVersion(t *testing.T) {
	stamped := filepath.Join(t.TempDir(), "compass-mcp")
	build := exec.Command("go", "build", "-o", stamped, "-ldflags",
		"-X github.com/compass-mcp/compass-mcp/internal/version.stamped=9.9.9-test -X github.com/compass-mcp/compass-mcp/internal/version.commit=0123abc", "..") // cmd/compass-mcp, the main package
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for bin, want := range map[string]string{testbin.Path: version.Release + "+devel", stamped: "9.9.9-test"} {
		data := t.TempDir() + "/never-opened.db"
		long := runBin(t, bin, data, "--version")
		if short := runBin(t, bin, data, "version"); short != long {
			t.Errorf("%s: version says %q, --version %q", bin, short, long)
		}
		m := versionRE.FindStringSubmatch(long)
		if m == nil {
			t.Fatalf("--version printed %q, not \"compass-mcp VERSION (commit HASH, GOVERSION)\"", long)
		}
		c, err := client.NewStdioMCPClient(bin, testEnv(newData(t)), "serve")
		if err != nil {
			t.Fatal(err)
		}
		told := initialize(t, c, "test").ServerInfo.Version
		c.Close()
		if m[1] != want || told != want {
			t.Errorf("%s: --version says %q, the server tells clients %q; want %q for both", filepath.Base(filepath.Dir(bin)), m[1], told, want)
		}
		if bin == stamped && m[2] != "0123abc" {
			t.Errorf("the stamped binary's commit is %q", m[2])
		}
	}
}

func runBin(t *testing.T, bin, data string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), testEnv(data)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	return string(out)
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
