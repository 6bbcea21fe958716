package command

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

// Claude Code, as a new user of a terminal meets compass-mcp: claude mcp add of the stdio
// server, of an HTTP server with a bearer token, and of an HTTP server with --public-url
// (which closes it to all but OAuth's tokens); then claude mcp list, which starts or calls
// each, says Connected, Connected, and Needs authentication (it found the 401's OAuth
// metadata). Then the bearer server stops, and claude mcp list must say so: the check
// tells a server that answers from one that doesn't.
//
// COMPASS_TEST_CLAUDE is the claude to run (.ci/claude.sh prints it: @anthropic-ai/claude-code
// pinned in .ci/npm/package-lock.json). It runs offline, with HOME in a temporary folder and
// no login (FACTS.md): claude mcp add and list need neither.
func TestClaudeCodeConnects(t *testing.T) {
	claude := os.Getenv("COMPASS_TEST_CLAUDE")
	if claude == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI runs this with a real claude: COMPASS_TEST_CLAUDE is not set (.ci/claude.sh prints it)")
		}
		t.Skip("COMPASS_TEST_CLAUDE (a claude binary) is not set: .ci/claude.sh installs one and prints its path")
	}
	t.Parallel()
	home := t.TempDir()
	env := []string{
		"HOME=" + home,
		"PATH=" + filepath.Dir(claude) + string(os.PathListSeparator) + os.Getenv("PATH"),
		// Nothing but the servers: no update check, no telemetry, no error reports.
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1",
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "TMPDIR" || k == "LANG" || k == "TZ" {
			env = append(env, kv)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, claude, args...)
		cmd.Env, cmd.Dir = env, home
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("claude %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.String()
	}

	stdioData := newData(t)
	// --env (and --header) take every word up to the next option: --scope ends them.
	run("mcp", "add", "--env", "COMPASS_DATA="+stdioData, "--env", "COMPASS_ME=ana", "--env", "COMPASS_WEB=off",
		"--scope", "user", "stdio-compass", "--", testbin.Path, "serve")

	const token = "cmp_claude-code-test-token"
	bearer, stopBearer := httpServer(t, newData(t), "--token", token)
	run("mcp", "add", "--header", "Authorization: Bearer "+token, "--scope", "user", "--transport", "http", "bearer-compass", bearer)

	// --public-url is this address, so that the metadata the 401 points to is here too,
	// and nothing looks up a name.
	addr := freeLoopbackAddr(t)
	oauth, _ := httpServer(t, newData(t), "--http", addr, "--public-url", "http://"+addr, "--web", "")
	run("mcp", "add", "--scope", "user", "--transport", "http", "oauth-compass", oauth)

	list := run("mcp", "list")
	for _, want := range []string{
		"stdio-compass: " + testbin.Path + " serve - ✔ Connected",
		"bearer-compass: " + bearer + " (HTTP) - ✔ Connected",
		"oauth-compass: " + oauth + " (HTTP) - ! Needs authentication",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("claude mcp list has no line %q:\n%s", want, list)
		}
	}

	stopBearer()
	list = run("mcp", "list")
	if line := lineOf(list, "bearer-compass: "); line == "" || strings.Contains(line, "Connected") {
		t.Errorf("with the bearer server stopped, claude mcp list says %q:\n%s", line, list)
	}
	if !strings.Contains(list, "stdio-compass: "+testbin.Path+" serve - ✔ Connected") {
		t.Errorf("the stdio server, after the HTTP one stopped:\n%s", list)
	}
}

// freeLoopbackAddr is a 127.0.0.1 address whose port was free a moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr())
}

// lineOf is the first line of s that starts with prefix, or "".
func lineOf(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
