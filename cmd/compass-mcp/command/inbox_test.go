package command

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

// docs inbox prints what waits for the person: a reviewed agent's open changes and the
// comments it left asking them, newest first, each with its first lines, a page at a time.
func TestDocsInbox(t *testing.T) {
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	if out, _ := cliResult(data, "", "docs", "inbox"); strings.TrimSpace(out) != "" {
		t.Errorf("an empty inbox printed on stdout: %q", out)
	}
	c := stdioClient(t, data, "--agent", "north", "--review")
	callTool(t, c, "write_document", map[string]any{"title": "Launch plan", "text": "# Launch plan\n\nRecord the trailer.\n"})
	callTool(t, c, "edit_document", map[string]any{"document": "Launch plan", "old": "Record the trailer.", "new": "Record the trailer on Monday."})
	callTool(t, c, "comment_document", map[string]any{"document": "Launch plan", "lines": "3", "text": "Monday, or Tuesday?"})
	callTool(t, c, "append_document", map[string]any{"document": "Launch plan", "text": "- Send the invitations."})

	out := cli(t, data, "docs", "inbox")
	ids := regexp.MustCompile(`\(([0-9A-Z]{26})\)`)
	out = ids.ReplaceAllString(out, "(ID)")
	out = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d`).ReplaceAllString(out, "TIME")
	want := `3 items wait for Ana, newest first:
Launch plan (ID)  change 2  append by north for Ana  TIME  +2 −0
    | - Send the invitations.
Launch plan (ID)  comment 1 on lines 3-3  by north for Ana  TIME
    | Monday, or Tuesday?
Launch plan (ID)  change 1  edit by north for Ana  TIME  +1 −1
    | Record the trailer on Monday.
`
	if out != want {
		t.Errorf("docs inbox:\n%s\nwant:\n%s", out, want)
	}
	first := cli(t, data, "docs", "inbox", "--limit", "2")
	m := regexp.MustCompile(`docs inbox --after ([0-9a-f]+)\n$`).FindStringSubmatch(first)
	if m == nil || strings.Count(first, "\n    | ") != 2 {
		t.Fatalf("the first page of two:\n%s", first)
	}
	rest := cli(t, data, "docs", "inbox", "--limit", "2", "--after", m[1])
	if !strings.Contains(rest, "change 1  edit") || strings.Contains(rest, "--after") || strings.Contains(rest, "wait for") {
		t.Errorf("the second page:\n%s", rest)
	}
	for _, bad := range [][]string{{"--after", "zz"}, {"--limit", "0"}, {"--limit", "1000"}, {"Launch plan"}} {
		if out, err := cliResult(data, "", append([]string{"docs", "inbox"}, bad...)...); err == nil {
			t.Errorf("docs inbox %v: no refusal\n%s", bad, out)
		}
	}
}

// On a store without members the person sees every space of it: docs inbox lists what
// waits in space launch though --space is personal, each item naming its space. Once the
// store has a member (a team's), the person sees the spaces they are a member of only.
func TestDocsInboxEverySpaceOfAOnePersonStore(t *testing.T) {
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	c := stdioClient(t, data, "--agent", "north", "--review", "--space", "launch")
	callTool(t, c, "write_document", map[string]any{"title": "Launch plan", "text": "# Launch plan\n\nRecord the trailer.\n"})
	callTool(t, c, "edit_document", map[string]any{"document": "Launch plan", "old": "Record the trailer.", "new": "Record the trailer on Monday."})
	callTool(t, c, "append_document", map[string]any{"document": "Launch plan", "text": "- Send the invitations."})
	cli(t, data, "docs", "save", "--new", "Diary", "--empty") // something of space personal too

	out := cli(t, data, "docs", "inbox")
	out = regexp.MustCompile(`\(([0-9A-Z]{26})\)`).ReplaceAllString(out, "(ID)")
	out = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d`).ReplaceAllString(out, "TIME")
	want := `2 items wait for Ana, newest first:
launch: Launch plan (ID)  change 2  append by north for Ana  TIME  +2 −0
    | - Send the invitations.
launch: Launch plan (ID)  change 1  edit by north for Ana  TIME  +1 −1
    | Record the trailer on Monday.
`
	if out != want {
		t.Errorf("docs inbox of a one-person store, --space personal:\n%s\nwant:\n%s", out, want)
	}

	// A team's store: ana is a member of personal only, and launch's items are not hers.
	cli(t, data, "members", "add", "personal", "ana")
	if out, err := cliResult(data, "", "docs", "inbox"); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("docs inbox on a team's store listed another space's items: %v\n%s", err, out)
	}
}

// The server's start line says when review mode is on (and says nothing of it when off).
func TestStartLineSaysReview(t *testing.T) {
	if got := terminalLine("personal", "ana", "d.db", "", true); !strings.Contains(got, "review mode: every change an agent makes is a proposal for you") {
		t.Errorf("the terminal's start line with --review: %s", got)
	}
	if got := terminalLine("personal", "ana", "d.db", "", false); strings.Contains(got, "review") {
		t.Errorf("the terminal's start line without --review: %s", got)
	}
	data := newData(t)
	for _, review := range []bool{true, false} {
		args := []string{"serve", "--http", "127.0.0.1:0"}
		if review {
			args = append(args, "--review")
		}
		cmd := exec.Command(testbin.Path, args...)
		cmd.Env = append(os.Environ(), testEnv(data, "COMPASS_LOG=info", "HOME="+t.TempDir())...)
		errb := newProcessLog()
		cmd.Stderr = errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line := errb.await(t, 20*time.Second, "serving MCP over streamable HTTP")
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if said := strings.Contains(line, "review="); said != review {
			t.Errorf("serve --http (review %v) start line: %s", review, line)
		}
	}
}
