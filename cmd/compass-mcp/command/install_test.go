package command

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/clientconfig"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// installHome is a person's machine in a temporary folder: the environment install (and
// the client) run with, and the Env clientconfig computes the same places from.
type installHome struct {
	env  []string
	cc   clientconfig.Env
	dir  string // the project's folder, install's working folder
	data string
}

func newInstallHome(t *testing.T) *installHome {
	home := t.TempDir()
	vars := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "APPDATA": filepath.Join(home, "AppData", "Roaming")}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, mine := vars[k]; mine || strings.HasPrefix(k, "COMPASS_") && k != "COMPASS_WEB" || k == "CODEX_HOME" || k == "CLAUDE_CONFIG_DIR" || k == "USERPROFILE" {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	h := &installHome{env: env, dir: filepath.Join(home, "project"), data: newData(t)}
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h.cc = clientconfig.Env{OS: runtime.GOOS, Home: home, Getenv: func(k string) string { return vars[k] }, Dir: h.dir}
	return h
}

// run runs compass-mcp (bin) with args in the home, returning stdout, stderr, and the exit code.
func (h *installHome) run(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = h.env
	cmd.Dir = h.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func installFixture(t *testing.T, c *clientconfig.Client) []byte {
	t.Helper()
	name := filepath.Join("..", "..", "..", "internal", "clientconfig", "testdata", c.Name+".json")
	if c.Name == "codex" {
		name = filepath.Join("..", "..", "..", "internal", "clientconfig", "testdata", "codex.toml")
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func backups(t *testing.T, file string) []string {
	m, _ := filepath.Glob(file + ".bak-*")
	return m
}

// Each client's file, over a fixture with other servers and comments: --print shows what
// install then writes, the old file is kept, and the server the file names starts, over
// stdio, answers initialize, tools/list and a tool call, with the person's data and space.
func TestInstallEachClient(t *testing.T) {
	for _, c := range clientconfig.Clients {
		if c.Commands(clientconfig.Server{}, false, false) != nil {
			continue // Claude Code: TestInstallClaudeCode
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			h := newInstallHome(t)
			file := c.UserFile(h.cc)
			old := installFixture(t, c)
			os.MkdirAll(filepath.Dir(file), 0o755)
			if err := os.WriteFile(file, old, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"install", c.Name, "--for", "ana", "--space", "team", "--data", h.data}
			printed, stderr, code := h.run(t, testbin.Path, append(args, "--print")...)
			if code != 0 {
				t.Fatalf("--print: exit %d: %s", code, stderr)
			}
			if b, _ := os.ReadFile(file); !bytes.Equal(b, old) || len(backups(t, file)) > 0 {
				t.Fatal("--print wrote")
			}
			out, stderr, code := h.run(t, testbin.Path, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, stderr)
			}
			got, _ := os.ReadFile(file)
			if string(got) != printed {
				t.Errorf("install wrote\n%s\nwhere --print said\n%s", got, printed)
			}
			bak := backups(t, file)
			if len(bak) != 1 || !strings.Contains(out, bak[0]) {
				t.Fatalf("backups %v; install said %s", bak, out)
			}
			if b, _ := os.ReadFile(bak[0]); !bytes.Equal(b, old) {
				t.Error("the backup is not the old file")
			}
			servers, err := c.Servers(got)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := c.Servers(old)
			for name, s := range before {
				if !equalServer(servers[name], s) {
					t.Errorf("server %s changed", name)
				}
			}
			s := servers["compass"]
			if s.Command != testbin.Path || strings.Join(s.Args, " ") != "serve" {
				t.Errorf("compass is %+v", s)
			}
			startAsTheClientWould(t, s, h.data)

			// Again: the same entry is already set up (exit 0, nothing written); another
			// one is refused, saying what is there and how to replace it; --force replaces.
			out, stderr, code = h.run(t, testbin.Path, args...)
			if code != 0 || !strings.Contains(out, "already set up, nothing changed") {
				t.Errorf("the same install again: exit %d: %s%s", code, out, stderr)
			}
			if b, _ := os.ReadFile(file); !bytes.Equal(b, got) || len(backups(t, file)) != 1 {
				t.Error("the same install again wrote")
			}
			_, stderr, code = h.run(t, testbin.Path, "install", c.Name, "--for", "bo")
			if code != 1 || !strings.Contains(stderr, "already has a server named \"compass\"") || !strings.Contains(stderr, "--force") {
				t.Errorf("a second install: exit %d: %s", code, stderr)
			}
			if b, _ := os.ReadFile(file); !bytes.Equal(b, got) {
				t.Error("a refused install wrote")
			}
			_, stderr, code = h.run(t, testbin.Path, "install", c.Name, "--for", "bo", "--force")
			if code != 0 {
				t.Fatalf("--force: exit %d: %s", code, stderr)
			}
			again, _ := os.ReadFile(file)
			servers, _ = c.Servers(again)
			if e := servers["compass"].Env; len(e) != 1 || e["COMPASS_ME"] != "bo" {
				t.Errorf("after --force, compass's env is %v", e)
			}
		})
	}
}

func equalServer(a, b clientconfig.Server) bool {
	if a.Command != b.Command || strings.Join(a.Args, "\x00") != strings.Join(b.Args, "\x00") || len(a.Env) != len(b.Env) {
		return false
	}
	for k, v := range a.Env {
		if b.Env[k] != v {
			return false
		}
	}
	return true
}

// startAsTheClientWould starts s's command with its arguments and environment over stdio,
// as a client does, and checks the server works on data, in its space.
func startAsTheClientWould(t *testing.T, s clientconfig.Server, data string) {
	t.Helper()
	var env []string
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	c, err := client.NewStdioMCPClient(s.Command, append(env, "COMPASS_LOG=warn"), s.Args...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	initialize(t, c, "install-test")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	if !names["write_document"] || !names["read_document"] {
		t.Fatalf("tools %v", names)
	}
	if a := callTool(t, c, "write_document", map[string]any{"title": "Installed", "text": "# Installed\n\nBy install.\n"}); a.isError {
		t.Fatalf("write_document: %s", a.text)
	}
	c.Close()
	if list := cli(t, data, "docs", "list", "--space", s.Env["COMPASS_SPACE"]); !strings.Contains(list, "Installed") {
		t.Errorf("the document is not in the data's space %s:\n%s", s.Env["COMPASS_SPACE"], list)
	}
}

// A file the client couldn't read is left byte for byte as it was, with its line named.
func TestInstallLeavesABrokenFileAlone(t *testing.T) {
	for _, name := range []string{"vscode", "claude-desktop", "codex"} {
		c := clientconfig.Lookup(name)
		h := newInstallHome(t)
		file := c.UserFile(h.cc)
		lines := strings.SplitAfter(string(installFixture(t, c)), "\n")
		broken := strings.Join(lines[:3], "") + "]]\n" + strings.Join(lines[3:], "")
		os.MkdirAll(filepath.Dir(file), 0o755)
		os.WriteFile(file, []byte(broken), 0o644)
		for _, force := range []string{"--print", "--force"} {
			_, stderr, code := h.run(t, testbin.Path, "install", name, force)
			if code != 1 || !strings.Contains(stderr, file+": line 4") || !strings.Contains(stderr, "Nothing was written") ||
				!strings.Contains(stderr, "by hand") || !strings.Contains(stderr, testbin.Path) || strings.Contains(stderr, "could not read it") {
				t.Errorf("%s %s: exit %d: %s", name, force, code, stderr)
			}
		}
		if b, _ := os.ReadFile(file); string(b) != broken || len(backups(t, file)) > 0 {
			t.Errorf("%s: the broken file was touched", name)
		}
	}
}

// The client is given the binary itself: not a link to it, not a binary go run made and
// will remove.
func TestInstallBinary(t *testing.T) {
	h := newInstallHome(t)
	link := filepath.Join(t.TempDir(), "compass-link")
	if err := os.Symlink(testbin.Path, link); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := h.run(t, link, "install", "cursor", "--print")
	if code != 0 || !strings.Contains(out, `"command": "`+testbin.Path+`"`) {
		t.Errorf("through a link: exit %d: %s%s", code, out, stderr)
	}
	goRun := filepath.Join(t.TempDir(), "go-build2710533/b001/exe/compass-mcp")
	os.MkdirAll(filepath.Dir(goRun), 0o755)
	b, _ := os.ReadFile(testbin.Path)
	if err := os.WriteFile(goRun, b, 0o755); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = h.run(t, goRun, "install", "cursor")
	if code != 2 || !strings.Contains(stderr, "built by go run") || !strings.Contains(stderr, "go install") {
		t.Errorf("from go run: exit %d: %s", code, stderr)
	}
	_, stderr, code = h.run(t, testbin.Path, "install", "cursor", "--command", goRun)
	if code != 2 || !strings.Contains(stderr, "--command is a binary go run built") {
		t.Errorf("--command from go run: exit %d: %s", code, stderr)
	}
	out, _, code = h.run(t, goRun, "install", "cursor", "--print", "--command", link, "--data", "~/notes.db")
	if code != 0 || !strings.Contains(out, testbin.Path) || !strings.Contains(out, filepath.Join(h.cc.Home, "notes.db")) {
		t.Errorf("--command from a go run binary: exit %d: %s", code, out)
	}
	if _, err := os.Stat(clientconfig.Lookup("cursor").UserFile(h.cc)); err == nil {
		t.Error("a refused install wrote a file")
	}
	out, stderr, code = h.run(t, testbin.Path, "install", "vscode", "--project", "--print", "--data", "rel/compass.db")
	if code != 0 || !strings.Contains(out, `"${workspaceFolder}/rel/compass.db"`) || !strings.Contains(out, testbin.Path) || !strings.Contains(stderr, "not on PATH") {
		t.Errorf("a relative --data, in a project's file: %s%s", out, stderr)
	}
	out, _, code = h.run(t, testbin.Path, "install", "cursor", "--print", "--data", "rel/compass.db")
	if code != 0 || !strings.Contains(out, filepath.Join(h.dir, "rel", "compass.db")) {
		t.Errorf("a relative --data, in the person's file: %s", out)
	}
	_, stderr, code = h.run(t, testbin.Path, "install", "windsurf", "--project")
	if code != 2 || !strings.Contains(stderr, "no file of a project's own") {
		t.Errorf("windsurf --project: exit %d: %s", code, stderr)
	}
	out, _, code = h.run(t, testbin.Path, "install")
	if code != 0 || !strings.Contains(out, clientconfig.Lookup("zed").UserFile(h.cc)) || !strings.Contains(out, filepath.Join(h.dir, ".vscode", "mcp.json")) {
		t.Errorf("the list: %s", out)
	}
}

// Claude Code adds the server with its own command: printed with --print or without
// claude on PATH, run where it is. COMPASS_TEST_CLAUDE names a claude to run (.ci/claude.sh
// installs one); claude mcp list then connects to the server.
func TestInstallClaudeCode(t *testing.T) {
	h := newInstallHome(t)
	withoutClaude := append([]string{}, h.env...)
	for i, kv := range withoutClaude {
		if strings.HasPrefix(kv, "PATH=") {
			withoutClaude[i] = "PATH=" + filepath.Dir(testbin.Path)
		}
	}
	h2 := *h
	h2.env = withoutClaude
	out, stderr, code := h2.run(t, testbin.Path, "install", "claude-code", "--for", "ana", "--project")
	// PATH has this compass-mcp: the project's .mcp.json names it so.
	want := "claude mcp add --env COMPASS_ME=ana --scope project compass -- compass-mcp serve\n"
	if code != 1 || out != want || !strings.Contains(stderr, "not on PATH") || !strings.Contains(stderr, "nothing was installed") {
		t.Errorf("without claude: exit %d: %q %s", code, out, stderr)
	}
	claude := os.Getenv("COMPASS_TEST_CLAUDE")
	if claude == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI runs this with a real claude: COMPASS_TEST_CLAUDE is not set (.ci/claude.sh sets it)")
		}
		t.Skip("COMPASS_TEST_CLAUDE (a claude binary) is not set: .ci/claude.sh runs this test with one")
	}
	for i, kv := range h.env {
		if strings.HasPrefix(kv, "PATH=") {
			h.env[i] = "PATH=" + filepath.Dir(claude) + string(os.PathListSeparator) + kv[len("PATH="):]
		}
	}
	out, _, _ = h.run(t, testbin.Path, "install", "claude-code", "--print", "--force")
	if !strings.HasPrefix(out, "claude mcp remove --scope user compass\nclaude mcp add") {
		t.Errorf("--print: %s", out)
	}
	args := []string{"install", "claude-code", "--for", "ana", "--space", "team", "--data", h.data}
	if out, stderr, code := h.run(t, testbin.Path, args...); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	if _, stderr, code := h.run(t, testbin.Path, args...); code != 1 || !strings.Contains(stderr, "--force") {
		t.Errorf("again: exit %d: %s", code, stderr)
	}
	if out, stderr, code := h.run(t, testbin.Path, append(args, "--force")...); code != 0 {
		t.Fatalf("--force: exit %d: %s%s", code, out, stderr)
	}
	list, _, _ := h.run(t, claude, "mcp", "list")
	if !strings.Contains(list, "compass: "+testbin.Path+" serve - ✔ Connected") {
		t.Errorf("claude mcp list:\n%s", list)
	}
	b, err := os.ReadFile(filepath.Join(h.cc.Home, ".claude.json"))
	if err != nil || !bytes.Contains(b, []byte(`"COMPASS_DATA": "`+h.data+`"`)) {
		t.Errorf("~/.claude.json: %v\n%s", err, b)
	}
}

// Eight installs into one file at once each keep the others' servers: install locks the
// file's writers, and reads it again when it changed meanwhile.
func TestInstallConcurrently(t *testing.T) {
	h := newInstallHome(t)
	c := clientconfig.Lookup("cursor")
	file := c.UserFile(h.cc)
	os.MkdirAll(filepath.Dir(file), 0o755)
	if err := os.WriteFile(file, []byte(`{"theme":"dark","mcpServers":{"ws":{"command":"ws-mcp"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 8
	errs := make(chan string, n)
	for i := range n {
		go func() {
			cmd := exec.Command(testbin.Path, "install", "cursor", "--name", fmt.Sprintf("n%d", i), "--data", h.data)
			cmd.Env, cmd.Dir = h.env, h.dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs <- fmt.Sprintf("n%d: %v: %s", i, err, out)
				return
			}
			errs <- ""
		}()
	}
	for range n {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	b, _ := os.ReadFile(file)
	servers, err := c.Servers(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, ok := servers[fmt.Sprintf("n%d", i)]; !ok {
			t.Errorf("n%d is lost:\n%s", i, b)
		}
	}
	if _, ok := servers["ws"]; !ok || !bytes.Contains(b, []byte(`"theme":"dark"`)) {
		t.Errorf("what was there is lost:\n%s", b)
	}
}

// A client's name mistyped or cut short names the clients meant.
func TestInstallSuggestsAClient(t *testing.T) {
	for name, want := range map[string]string{
		"vscod":                 `no client "vscod": did you mean vscode?`,
		"claude":                `no client "claude": did you mean claude-desktop or claude-code?`,
		"Cursr":                 `did you mean cursor?`,
		"emacs":                 `no client "emacs": install takes one of claude-desktop, claude-code, vscode`,
		strings.Repeat("x", 99): `no client "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…"`,
	} {
		err := install(context.Background(), []string{name}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) || exitCode(err) != 2 {
			t.Errorf("%.10s: %v, want %q", name, err, want)
		}
	}
}
