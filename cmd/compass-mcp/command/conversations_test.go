package command

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

// The seed's scenario for conversations: the agent, in conversation "now", lists the other
// conversations of its space (not its own, not another space's), reads one with names in
// place of ids, never sees an agent's private step, and is refused another space's.
func TestConversationsScenario(t *testing.T) {
	t.Parallel()
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	cli(t, data, "import", filepath.Join("..", "..", "..", "testdata", "import", "pricing.jsonl"))
	cli(t, data, "say", "now", "What did we settle on pricing?", "--to", "agent:north", "--title", "Today")
	cli(t, data, "say", "--space", "launch", "elsewhere", "Launch only: the date is secret.")
	steps := []step{
		{"list_conversations", map[string]any{}},
		{"read_conversation", map[string]any{"conversation": "pricing"}},
		{"read_conversation", map[string]any{"conversation": "elsewhere"}},
		{"read_conversation", map[string]any{"conversation": "no-such-thing"}},
		{"read_conversation", map[string]any{"conversation": "pricing", "before": "not-an-id"}},
		{"list_conversations", map[string]any{"limit": 1}},
	}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			var transcript string
			if transport == "stdio" {
				transcript = runSession(t, stdioClient(t, data, "--agent", "north", "--thread", "now"), steps)
			} else {
				url, stop := httpServer(t, data, "--agent", "north", "--thread", "now")
				transcript = runSession(t, httpClient(t, url, "test"), steps)
				stop()
			}
			golden(t, "conversations.txtar", transcript)
			for _, secret := range []string{"list_documents →", "Launch only", "What did we settle"} {
				if strings.Contains(transcript, secret) {
					t.Errorf("the agent was shown %q", secret)
				}
			}
		})
	}
}

// A 45-message conversation read with the default limit shows the newest 30, oldest first,
// and the line that says how to read on; following it gives the other 15.
func TestConversationPaging(t *testing.T) {
	t.Parallel()
	data := newData(t)
	var lines strings.Builder
	for i := 1; i <= 45; i++ {
		fmt.Fprintf(&lines, `{"conversation":"long","at":"2026-11-08T10:%02d:00Z","from":"person:ana","text":"message %d"}`+"\n", i, i)
		fmt.Fprintf(&lines, `{"conversation":"long","at":"2026-11-08T10:%02d:30Z","from":"agent:north","text":"step %d","private":true}`+"\n", i, i)
	}
	out, err := cliResult(data, lines.String(), "import", "-")
	if err != nil || !strings.Contains(out, "90 messages") {
		t.Fatalf("import: %v %s", err, out)
	}
	c := stdioClient(t, data)
	first := callTool(t, c, "read_conversation", map[string]any{"conversation": "long"})
	got := regexp.MustCompile(`message (\d+)`).FindAllStringSubmatch(first.text, -1)
	if len(got) != 30 || got[0][1] != "16" || got[29][1] != "45" {
		t.Fatalf("first page has %d messages from %v: %s", len(got), got, first.text)
	}
	m := regexp.MustCompile(`before: "([0-9A-Z]{26})"`).FindStringSubmatch(first.text)
	if m == nil {
		t.Fatalf("the first page does not say how to read on:\n%s", first.text)
	}
	second := callTool(t, c, "read_conversation", map[string]any{"conversation": "long", "before": m[1]})
	got = regexp.MustCompile(`message (\d+)`).FindAllStringSubmatch(second.text, -1)
	if len(got) != 15 || got[0][1] != "1" || got[14][1] != "15" || strings.Contains(second.text, "before:") {
		t.Errorf("second page has %d messages from %v:\n%s", len(got), got, second.text)
	}
	if strings.Contains(first.text+second.text, "step ") {
		t.Errorf("a private step was shown")
	}
	list := callTool(t, c, "list_conversations", nil)
	if !strings.Contains(list.text, "· 45 messages ·") {
		t.Errorf("list_conversations counts private steps or misses messages: %s", list.text)
	}
}

// Importing: JSON Lines and a Claude export go in, a second import adds nothing, and a file
// with a bad line imports nothing and names the line.
func TestImport(t *testing.T) {
	t.Parallel()
	data := newData(t)
	fixtures := filepath.Join("..", "..", "..", "testdata", "import")
	for _, f := range []string{"pricing.jsonl", "claude-conversations.json"} {
		first := cli(t, data, "import", filepath.Join(fixtures, f))
		again := cli(t, data, "import", filepath.Join(fixtures, f))
		if !strings.Contains(again, "Imported 0 conversations and 0 messages") {
			t.Errorf("re-importing %s: %s (first: %s)", f, again, first)
		}
	}
	bad := `{"conversation":"x","from":"person:ana","text":"one"}
{"conversation":"x","from":"person:ana","text":"two"}
{"conversation":"x","from":"person:ana","text":3}
`
	out, err := cliResult(data, bad, "import", "-")
	if err == nil || !strings.Contains(out, "line 3") || !strings.Contains(out, "nothing was imported") {
		t.Errorf("a bad third line: %v %s", err, out)
	}
	c := stdioClient(t, data)
	if a := callTool(t, c, "read_conversation", map[string]any{"conversation": "x"}); !a.isError {
		t.Errorf("a file with a bad line was partly imported: %s", a.text)
	}
	list := callTool(t, c, "list_conversations", nil)
	t.Logf("after both imports:\n%s", list.text)
	if strings.Count(list.text, "\n- ") < 2 {
		t.Errorf("expected the fixtures' conversations listed: %s", list.text)
	}
}

// An import reading a pipe that is slow to fill doesn't hold the data file meanwhile: a
// server (here, another command) sharing it gets in while the import waits for its input.
func TestImportFromAPipeLetsOthersIn(t *testing.T) {
	t.Parallel()
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	cmd := exec.Command(testbin.Path, "import", "-")
	cmd.Env = append(os.Environ(), testEnv(data)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	// A first line larger than any pipe's buffer: once it is written, the import has opened
	// the store and read (most of) it, and then waits for the rest.
	fmt.Fprintf(in, `{"conversation":"slow","from":"person:ana","text":"The first line came at once.%s"}`+"\n", strings.Repeat(" ", 2<<20))
	if got, err := cliResult(data, "", "docs", "list"); err != nil {
		t.Errorf("while an import waited for its input, another command got: %v\n%s", err, got)
	}
	fmt.Fprintln(in, `{"conversation":"slow","from":"person:ana","text":"The second came later."}`)
	in.Close()
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "2 messages") {
		t.Fatalf("the import: %v\n%s", err, out.String())
	}
}
