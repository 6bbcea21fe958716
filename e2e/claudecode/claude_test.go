package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/charter"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/internal/testkit/toolcalls"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/tools"
)

var update = flag.Bool("update", false, "write testdata's transcripts from this run")

func TestMain(m *testing.M) { testbin.Main(m) }

// calls are toolcalls.Each: an answer and a refusal of each of the eight tools, on seed's
// space, in an order that leaves each answer the same whatever came before.
var calls = toolcalls.Each

// script is the model's side: ToolSearch loads the eight tools' schemas (Claude Code
// defers every MCP tool), then each call in turn, then a last word.
func script() []step {
	var names []string
	for _, n := range tools.Names() {
		names = append(names, "mcp__compass__"+n)
	}
	steps := []step{{tool: "ToolSearch", input: map[string]any{"query": "select:" + strings.Join(names, ",")}}}
	for _, c := range calls {
		steps = append(steps, step{tool: "mcp__compass__" + c.Tool, input: c.Args})
	}
	return steps
}

// How long one Claude Code run may take: some 10 s here; a -race binary on a busy machine
// is several times slower.
const runTimeout = 4 * time.Minute

// Claude Code, pinned in .ci/npm, reads each tool's answer and refusal as the golden
// transcripts in testdata say, over stdio (where it negotiates 2026-07-28) and over
// streamable HTTP with the protocol held to 2025-11-25 (MCP_PROTOCOL_NEGOTIATION=legacy,
// Claude Code's own switch): one Claude Code process a transport, its model scripted
// through all sixteen calls. The transcripts hold the system text's part naming compass
// (the server's instructions, which must be there whole), the deferred tools' names, the
// schemas ToolSearch loads, and every tool result as the next request carries it; ids,
// the times of versions made during the run and ports are masked.
func TestWhatTheModelReads(t *testing.T) {
	claude := os.Getenv("COMPASS_TEST_CLAUDE")
	if claude == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI runs this with the pinned Claude Code: COMPASS_TEST_CLAUDE is not set (.ci/claude.sh prints it)")
		}
		t.Skip("COMPASS_TEST_CLAUDE (a claude binary) is not set: .ci/claude.sh installs the pinned one and prints its path")
	}
	for _, tr := range []struct{ name, protocol string }{{"stdio", "2026-07-28"}, {"http", "2025-11-25"}} {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			data := kvtest.Data(t, dir, "compass.db")
			seed(t, data)
			serverLog, sent := filepath.Join(dir, "server.log"), filepath.Join(dir, "sent.jsonl")
			var server map[string]any
			env := []string{}
			if tr.name == "stdio" {
				// Claude Code starts the server; what it sends the server is kept too (the
				// stdio server's log doesn't name the protocol of a request).
				server = map[string]any{"command": "/bin/sh", "args": []string{"-c", `tee -a "$2" | "$0" serve 2>>"$1"`, testbin.Path, serverLog, sent}, "env": envMap(serverEnv(data))}
			} else {
				server = map[string]any{"type": "http", "url": serveHTTP(t, data, serverLog)}
				env = append(env, "MCP_PROTOCOL_NEGOTIATION=legacy")
			}
			api := newFakeAPI(script())
			fake := httptest.NewServer(api)
			defer fake.Close()
			start := time.Now()
			runClaude(t, claude, dir, fake.URL, server, env)
			t.Logf("Claude Code over %s: %d tool calls in %v", tr.name, len(calls)+1, time.Since(start).Round(100*time.Millisecond))
			if o := api.others(); o != "" {
				t.Logf("requests besides the conversation's: %s", o)
			}
			got := protocols(t, serverLog)
			if tr.name == "stdio" {
				got = protocolsSent(t, sent)
			}
			if got != tr.protocol {
				t.Errorf("the server served Claude Code's tools/call in protocol %s, want %s", got, tr.protocol)
			}
			golden(t, tr.name+".txtar", transcript(t, api, tr.name, tr.protocol))
		})
	}
}

func serverEnv(data string) []string {
	return []string{"COMPASS_DATA=" + data, "COMPASS_ME=ana", "COMPASS_SPACE=personal", "COMPASS_LOG=debug", "COMPASS_WEB=off", "COMPASS_LINK_BASE=/", "TZ=UTC"}
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// seed makes data's space as a person would: testdata's conversations imported, and a
// document of three versions.
func seed(t *testing.T, data string) {
	t.Helper()
	for _, args := range [][]string{
		{"import", "../../testdata/import/pricing.jsonl"},
		{"call", "write_document", "title=Launch plan", "text=# Launch plan\n\nRecord the trailer on Tuesday.\nReview the course page.\nBook the studio for the voice-over.\n"},
		{"call", "append_document", "document=Launch plan", "text=Ask Ben for the music."},
		{"call", "edit_document", "document=Launch plan", "old=on Tuesday", "new=on Wednesday"},
	} {
		cmd := exec.Command(testbin.Path, args...)
		cmd.Env = append(os.Environ(), serverEnv(data)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("compass-mcp %s: %v\n%s", args[0], err, out)
		}
	}
}

// serveHTTP serves data over streamable HTTP on a free loopback port until the test ends,
// its log in logFile, and returns its /mcp URL.
func serveHTTP(t *testing.T, data, logFile string) string {
	t.Helper()
	cmd := exec.Command(testbin.Path, "serve", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), serverEnv(data)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if m := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Errorf("the HTTP server did not stop within 15 s of SIGINT")
		}
		<-scanned
		log.Close()
	})
	select {
	case url := <-urls:
		return url
	case <-time.After(30 * time.Second):
		t.Fatal("the HTTP server said no URL within 30 s")
	}
	return ""
}

// runClaude runs claude -p in dir (its HOME a fresh folder there, offline, a dummy key),
// with the one MCP server and the eight tools allowed, against the Messages API at api.
func runClaude(t *testing.T, claude, dir, api string, server map[string]any, env []string) {
	t.Helper()
	config, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"compass": server}})
	configFile := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(configFile, config, 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	var allowed []string
	for _, n := range tools.Names() {
		allowed = append(allowed, "mcp__compass__"+n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Work on the launch plan with me.", "--strict-mcp-config", "--mcp-config", configFile,
		"--allowedTools", strings.Join(allowed, ","), "--output-format", "stream-json", "--verbose")
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TZ=UTC",
		"ANTHROPIC_BASE_URL=" + api, "ANTHROPIC_API_KEY=dummy", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("claude: %v\nstderr: %s\nstdout (end): %s", err, tail(errOut.String()), tail(out.String()))
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// protocols is the protocol version the server's log gives its tools/call requests, or
// what they disagree on.
func protocols(t *testing.T, logFile string) string {
	t.Helper()
	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, m := range regexp.MustCompile(`mcp\.method=tools/call .*mcp\.protocol\.version=(\S+)`).FindAllStringSubmatch(string(raw), -1) {
		seen[m[1]]++
	}
	if len(seen) != 1 {
		return fmt.Sprintf("%v", seen)
	}
	for v, n := range seen {
		if n != len(calls) {
			return fmt.Sprintf("%s for %d calls of %d", v, n, len(calls))
		}
		return v
	}
	return ""
}

// protocolsSent is the protocol version of the tools/call requests a client sent (JSON
// Lines): the one in their _meta (2026-07-28 on), else initialize's; or what they
// disagree on.
func protocolsSent(t *testing.T, file string) string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	seen, legacy := map[string]int{}, ""
	for line := range strings.Lines(string(raw)) {
		var m struct {
			Method string
			Params struct {
				ProtocolVersion string
				Meta            map[string]any `json:"_meta"`
			}
		}
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			legacy = m.Params.ProtocolVersion
		case "tools/call":
			v, _ := m.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string)
			if v == "" {
				v = legacy
			}
			seen[v]++
		}
	}
	if len(seen) != 1 {
		return fmt.Sprintf("%v", seen)
	}
	for v, n := range seen {
		if n != len(calls) {
			return fmt.Sprintf("%s for %d calls of %d", v, n, len(calls))
		}
		return v
	}
	return ""
}

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./e2e/claudecode -update makes it, with COMPASS_TEST_CLAUDE set)", err)
	}
	if string(want) != got {
		t.Errorf("what the model reads differs from %s (-want +got; -update writes it):\n%s", path, linediff.Unified("want", "got", string(want), got, 3))
	}
}

// instructionsSection is the part of Claude Code's system text that holds compass's
// instructions: from its heading for MCP servers' instructions to the next part.
var nextPart = regexp.MustCompile(`\n\n(The following |# )`)

// transcript is what the model read, in the requests api kept: turn 0's system text naming
// compass and the deferred tools, the schemas ToolSearch loaded (turn 1), and each call's
// result (the request after it), masked.
func transcript(t *testing.T, api *fakeAPI, transport, protocol string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "What the model reads from compass-mcp in Claude Code (pinned in .ci/npm), over %s,\nprotocol %s: go test ./e2e/claudecode (-update writes this file).\n", transport, protocol)

	first := api.request(0)
	if first == nil {
		t.Fatal("Claude Code sent no request")
	}
	var system, deferred string
	for _, s := range stringsIn(first) {
		if i := strings.Index(s, "## compass\n"); i >= 0 && system == "" {
			start := strings.LastIndex(s[:i], "# MCP Server Instructions")
			if start < 0 {
				start = i
			}
			end := len(s)
			if m := nextPart.FindStringIndex(s[i:]); m != nil {
				end = i + m[0]
			}
			system = s[start:end]
		}
		if strings.Contains(s, "\nmcp__compass__") && deferred == "" {
			for line := range strings.Lines(s) {
				if strings.HasPrefix(line, "mcp__compass__") {
					deferred += line
				}
			}
		}
	}
	if !strings.Contains(system, charter.Instructions) {
		t.Errorf("the system text doesn't hold compass's instructions whole:\n%s", system)
	}
	for _, n := range tools.Names() {
		if !strings.Contains(deferred, "mcp__compass__"+n+"\n") {
			t.Errorf("turn 1 doesn't name the deferred tool mcp__compass__%s:\n%s", n, deferred)
		}
	}
	fmt.Fprintf(&b, "-- turn 1: the system text's part on MCP servers --\n%s\n", system)
	fmt.Fprintf(&b, "-- turn 1: the deferred tools it names (their schemas are not sent) --\n%s", deferred)

	var loaded struct {
		Tools []map[string]any
	}
	if err := json.Unmarshal(api.request(1), &loaded); err != nil {
		t.Fatalf("turn 2's request: %v", err)
	}
	b.WriteString("-- turn 2: the schemas ToolSearch loaded --\n")
	n := 0
	for _, tl := range loaded.Tools {
		if name, _ := tl["name"].(string); strings.HasPrefix(name, "mcp__compass__") {
			raw, _ := json.MarshalIndent(tl, "", "  ")
			b.Write(raw)
			b.WriteString("\n")
			n++
		}
	}
	if n != len(tools.Names()) {
		t.Errorf("ToolSearch loaded %d of compass's tools, want %d", n, len(tools.Names()))
	}

	for i, c := range calls {
		turn := i + 1
		args, _ := json.Marshal(c.Args)
		what := "answer"
		if c.Refuse {
			what = "refusal"
		}
		shape, text, isError := toolResult(t, api.request(turn+1), toolUseID(turn))
		if isError != c.Refuse {
			t.Errorf("%s %s: is_error %v, want %v: %s", c.Tool, args, isError, c.Refuse, text)
		}
		fmt.Fprintf(&b, "-- %02d %s %s (%s) --\n%s\n%s\n", turn, c.Tool, args, what, shape, text)
	}
	return mask(b.String())
}

// stringsIn is every string in the JSON document raw.
func stringsIn(raw []byte) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// toolResult finds the tool_result block for id in the request raw (in its last user
// message holding one: Claude Code may add words of its own after it): how it is shaped
// (a string, or blocks of which types; is_error), its text, and is_error. Only text ever
// reaches the model: a block of another type fails the test.
func toolResult(t *testing.T, raw []byte, id string) (shape, text string, isError bool) {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal(raw, &req); err != nil || len(req.Messages) == 0 {
		t.Fatalf("no request after tool call %s: %v", id, err)
	}
	var blocks []struct {
		Type      string
		ToolUseID string `json:"tool_use_id"`
		IsError   bool   `json:"is_error"`
		Content   json.RawMessage
	}
	for i := len(req.Messages) - 1; i >= 0 && blocks == nil; i-- {
		if req.Messages[i].Role == "user" && bytes.Contains(req.Messages[i].Content, []byte(`"`+id+`"`)) {
			if err := json.Unmarshal(req.Messages[i].Content, &blocks); err != nil {
				t.Fatalf("the message holding %s's result: %s", id, req.Messages[i].Content)
			}
		}
	}
	for _, bl := range blocks {
		if bl.Type != "tool_result" || bl.ToolUseID != id {
			continue
		}
		shape = "tool_result"
		if bl.IsError {
			shape += ", is_error"
		}
		var s string
		if json.Unmarshal(bl.Content, &s) == nil {
			return shape + ", its content a string:", s, bl.IsError
		}
		var parts []struct{ Type, Text string }
		if err := json.Unmarshal(bl.Content, &parts); err != nil {
			t.Fatalf("%s's content: %s", id, bl.Content)
		}
		var types []string
		for _, p := range parts {
			types = append(types, p.Type)
			if p.Type != "text" {
				t.Errorf("%s's result holds a %s block: the model reads text only", id, p.Type)
			}
			text += p.Text
		}
		return fmt.Sprintf("%s, its content blocks: %s", shape, strings.Join(types, ", ")) + ":", text, bl.IsError
	}
	t.Fatalf("the request after %s holds no tool_result for it: %.2000s", id, raw[max(0, len(raw)-2000):])
	return "", "", false
}

var (
	ulids = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
	times = regexp.MustCompile(`\b\d{4}-\d\d-\d\d \d\d:\d\d\b`)
	ports = regexp.MustCompile(`127\.0\.0\.1:\d+`)
)

// mask gives ids the names <id1>, <id2>, ... in the order they first appear, and masks
// ports and the times of what was saved during the run (within a day of now: the
// imported conversations' times are the fixture's, and stay).
func mask(s string) string {
	names := map[string]string{}
	s = ulids.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := names[id]; !ok {
			names[id] = fmt.Sprintf("<id%d>", len(names)+1)
		}
		return names[id]
	})
	now := time.Now().UTC()
	s = times.ReplaceAllStringFunc(s, func(at string) string {
		if tm, err := time.Parse("2006-01-02 15:04", at); err == nil && tm.Sub(now).Abs() < 24*time.Hour {
			return "<now>"
		}
		return at
	})
	return ports.ReplaceAllString(s, "127.0.0.1:<port>")
}
