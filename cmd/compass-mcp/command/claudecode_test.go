package command

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/mark3labs/mcp-go/client"
)

const (
	ccTrailer = "3f2b9e14-8a6c-4d21-b7e0-5c9a1d3f6e02"
	ccPricing = "7c1d0a52-5b8e-4f7a-9d3c-2e6f1a8b4c07"
	ccNotes   = "e91a7b40-2c3d-4e5f-8a9b-0c1d2e3f4a05"
)

var ccFixtures = filepath.Join("..", "..", "..", "testdata", "import", "claude-code")

// The hand-written Claude Code transcripts, imported, read as the model reads them: the
// golden answers are in testdata/sessions/claude-code.txtar. The agent in session
// ccPricing (its --thread) doesn't see its own session listed. A second import adds nothing.
func TestClaudeCodeSessions(t *testing.T) {
	t.Parallel()
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	out := cli(t, data, "import", "--claude-code", ccFixtures)
	if want := "Imported 3 conversations and 27 messages from 4 transcripts into space personal; 0 messages already there.\nSkipped 1 line: not JSON.\n"; out != want {
		t.Errorf("import said %q, want %q", out, want)
	}
	if again := cli(t, data, "import", "--claude-code", ccFixtures); !strings.HasPrefix(again, "Imported 0 conversations and 0 messages from 0 transcripts") {
		t.Errorf("a second import said %q", again)
	}
	steps := []step{
		{"list_conversations", map[string]any{}},
		{"read_conversation", map[string]any{"conversation": ccTrailer}},
		{"read_conversation", map[string]any{"conversation": ccPricing}},
		{"read_conversation", map[string]any{"conversation": ccNotes}},
	}
	transcript := runSession(t, stdioClient(t, data, "--thread", ccPricing), steps[:1])
	if strings.Contains(transcript, ccPricing) {
		t.Errorf("the agent's own session is listed:\n%s", transcript)
	}
	// Started by Claude Code, which says its session in the environment.
	inCC, err := client.NewStdioMCPClient(testbin.Path, testEnv(data, "CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID="+ccPricing), "serve")
	if err != nil {
		t.Fatal(err)
	}
	defer inCC.Close()
	initialize(t, inCC, "claude-code")
	if a := callTool(t, inCC, "list_conversations", nil); strings.Contains(a.text, ccPricing) || !strings.Contains(a.text, ccNotes) {
		t.Errorf("started by Claude Code in session %s, the server lists:\n%s", ccPricing, a.text)
	}
	transcript = runSession(t, stdioClient(t, data), steps)
	golden(t, "claude-code.txtar", transcript)
	for _, private := range []string{"tool_use", "tool_result", "thinking", "Caveat", "<command-name>", "being continued", "Read plan.md", "Pricng\n"} {
		if strings.Contains(transcript, private) {
			t.Errorf("the agent was shown %q", private)
		}
	}
}

// Following, as a person runs it: compass-mcp import --claude-code --follow in its own
// process, an MCP server in another on the same data file, and lines appended to a
// transcript are imported, and show in read_conversation, within a second: the follower
// says on its log when it has imported a pass. Stopped and started again, the follower
// imports nothing twice.
func TestClaudeCodeFollowProcess(t *testing.T) {
	t.Parallel()
	data := newData(t)
	dir := t.TempDir()
	proj := filepath.Join(dir, "-home-ana-launch")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	session := "5a5a5a5a-1111-4222-8333-444444444444"
	file := filepath.Join(proj, session+".jsonl")
	write := func(i int, text string) {
		t.Helper()
		f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fmt.Fprintf(f, `{"type":"user","sessionId":%q,"uuid":"u-%d","timestamp":"2026-11-10T09:%02d:00Z","message":{"role":"user","content":%q}}`+"\n", session, i, i, text)
	}
	write(0, "Opening prompt.")

	var log *processLog // the running follower's
	follower := func() (stop func() string) {
		cmd := exec.Command(testbin.Path, "import", "--claude-code", dir, "--follow")
		cmd.Env = append(os.Environ(), testEnv(data, "COMPASS_LOG=info")...)
		log = newProcessLog()
		cmd.Stderr = log
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		first := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			first <- line
		}()
		var said string
		select {
		case said = <-first:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatal("the follower said nothing within 20 s")
		}
		return func() string {
			cmd.Process.Signal(os.Interrupt)
			if err := cmd.Wait(); err != nil {
				t.Errorf("the follower ended with %v", err)
			}
			return said
		}
	}
	stop := follower()
	c := stdioClient(t, data)
	for i := 1; i <= 3; i++ {
		text := fmt.Sprintf("Appended prompt %d.", i)
		start := time.Now()
		write(i, text)
		log.await(t, time.Second, "imported from Claude Code", "messages=1")
		a := callTool(t, c, "read_conversation", map[string]any{"conversation": session})
		if !strings.Contains(a.text, text) {
			t.Fatalf("the follower imported %q, and read_conversation doesn't show it:\n%s", text, a.text)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("%q read after %v, want within 1 s", text, took.Round(time.Millisecond))
		} else {
			t.Logf("%q read after %v", text, took.Round(time.Millisecond))
		}
	}
	if said := stop(); !strings.HasPrefix(said, "Imported 1 conversation and 1 message from 1 transcript") {
		t.Errorf("the follower's first pass said %q", said)
	}
	write(4, "While no follower ran.")
	if said := follower()(); !strings.HasPrefix(said, "Imported 1 conversation and 1 message from 1 transcript into space personal; 0 messages already there.") {
		t.Errorf("started again, the follower said %q", said)
	}
	a := callTool(t, c, "read_conversation", map[string]any{"conversation": session})
	if n := strings.Count(a.text, "\n["); n != 5 {
		t.Errorf("%d messages, want 5:\n%s", n, a.text)
	}
}

// The server follows Claude Code's sessions itself with --follow-claude-code: those there
// when it starts, and what is added while it serves.
func TestServeFollowClaudeCode(t *testing.T) {
	t.Parallel()
	data := newData(t)
	config := t.TempDir() // Claude Code's CLAUDE_CONFIG_DIR
	proj := filepath.Join(config, "projects", "-home-ana-launch")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	session := "6b6b6b6b-1111-4222-8333-444444444444"
	file := filepath.Join(proj, session+".jsonl")
	write := func(i int, text string) {
		t.Helper()
		f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fmt.Fprintf(f, `{"type":"assistant","sessionId":%q,"uuid":"s-%d","timestamp":"2026-11-10T09:%02d:00Z","message":{"role":"assistant","content":[{"type":"text","text":%q}]}}`+"\n", session, i, i, text)
	}
	write(0, "There before the server.")
	c, err := client.NewStdioMCPClient(testbin.Path, testEnv(data, "CLAUDE_CONFIG_DIR="+config, "COMPASS_LOG=info"), "serve", "--follow-claude-code")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	log := newProcessLog()
	stderr, _ := client.GetStderr(c)
	go io.Copy(log, stderr)
	initialize(t, c, "test")
	// Each pass of the follower that imports says so on the server's log.
	seen := func(text string) {
		t.Helper()
		log.await(t, 5*time.Second, "imported from Claude Code", "messages=1")
		if a := callTool(t, c, "read_conversation", map[string]any{"conversation": session}); !strings.Contains(a.text, text) {
			t.Fatalf("the follower imported %q, and read_conversation doesn't show it:\n%s", text, a.text)
		}
	}
	seen("There before the server.")
	write(1, "Added while it serves.")
	seen("Added while it serves.")
}

// --project naming no project of the folder (a typo) is refused, naming the folders there;
// before, it imported 0 with exit 0.
func TestClaudeCodeNoSuchProject(t *testing.T) {
	data := newData(t)
	out, err := cliResult(data, "", "import", "--claude-code", ccFixtures, "--project", "/nothere")
	if err == nil || !strings.Contains(out, "no project folder of /nothere") || !strings.Contains(out, "-home-ana-launch") {
		t.Errorf("import --project /nothere: %v, said %q", err, out)
	}
	if out := cli(t, data, "import", "--claude-code", ccFixtures, "--project", "/home/ana/notes"); !strings.HasPrefix(out, "Imported 1 conversation") {
		t.Errorf("import --project /home/ana/notes said %q", out)
	}
}
