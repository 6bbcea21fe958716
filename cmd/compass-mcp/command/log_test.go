package command

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs log prints what happened in every space the person sees, newest first, a line a
// session (who, through which door, when, what it did) with its events under it; its
// filters keep what they name; --space keeps one space.
func TestDocsLog(t *testing.T) {
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	north := stdioClient(t, data, "--agent", "north", "--space", "launch")
	callTool(t, north, "write_document", map[string]any{"title": "Launch plan", "text": "# Launch plan\n\nRecord the trailer.\n"})
	callTool(t, north, "append_document", map[string]any{"document": "Launch plan", "text": "- Book the studio."})
	callTool(t, north, "write_document", map[string]any{"title": "Guest list", "text": "- Ben\n"})
	callTool(t, north, "comment_document", map[string]any{"document": "Launch plan", "lines": "3", "text": "Monday?"})
	south := stdioClient(t, data, "--agent", "south", "--space", "launch", "--review")
	callTool(t, south, "edit_document", map[string]any{"document": "Guest list", "old": "- Ben", "new": "- Ben\n- Cyd"})
	cliResult(data, "today\n", "docs", "save", "--new", "Diary")

	out := cli(t, data, "docs", "log")
	mask := func(s string) string {
		s = regexp.MustCompile(`\(([0-9A-Z]{26})\)`).ReplaceAllString(s, "(ID)")
		s = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d(–\d\d:\d\d)?`).ReplaceAllString(s, "TIME")
		s = regexp.MustCompile(`(?m)^    \d\d:\d\d`).ReplaceAllString(s, "    HH:MM")
		return regexp.MustCompile(`session m[0-9a-f]{16}`).ReplaceAllString(s, "session ID")
	}
	want := `Ana via the command line, TIME: 1 change to 1 document
    HH:MM  personal: Diary: version 1, save +1 −0 (ID)
south for Ana via test-client, TIME: 1 proposal  [session ID]
    HH:MM  launch: Guest list: change 1 proposed, edit +1 −0 (ID)
north for Ana via test-client, TIME: 3 changes to 2 documents, 1 comment  [session ID]
    HH:MM  launch: Launch plan: comment 1 (ID)
    HH:MM  launch: Guest list: version 1, write +1 −0 (ID)
    HH:MM  launch: Launch plan: version 2, append +2 −0 (ID)
    HH:MM  launch: Launch plan: version 1, write +3 −0 (ID)
`
	if got := mask(out); got != want {
		t.Errorf("docs log:\n%s\nwant:\n%s", got, want)
	}
	for _, c := range []struct {
		args []string
		has  []string
		not  []string
	}{
		{[]string{"--agent", "south"}, []string{"Guest list: change 1 proposed"}, []string{"Launch plan", "Diary"}},
		{[]string{"--space", "personal"}, []string{"Diary"}, []string{"launch", "Launch plan"}},
		{[]string{"--document", "Launch plan"}, []string{"comment 1", "version 2"}, []string{"Guest list", "Diary"}},
		{[]string{"--since", "1h"}, []string{"Diary", "Launch plan"}, nil},
		{[]string{"--since", "2999-01-01"}, nil, []string{"Diary"}},
		{[]string{"--limit", "2"}, []string{"Diary", "… more: docs log --after "}, []string{"Launch plan"}},
	} {
		got, err := cliResult(data, "", append([]string{"docs", "log"}, c.args...)...)
		if err != nil {
			t.Errorf("docs log %v: %v\n%s", c.args, err, got)
			continue
		}
		for _, w := range c.has {
			if !strings.Contains(got, w) {
				t.Errorf("docs log %v lacks %q:\n%s", c.args, w, got)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("docs log %v has %q:\n%s", c.args, w, got)
			}
		}
	}
	first := cli(t, data, "docs", "log", "--limit", "3")
	m := regexp.MustCompile(`docs log --after ([0-9a-f]+)`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("the first page of three:\n%s", first)
	}
	if rest := cli(t, data, "docs", "log", "--limit", "3", "--after", m[1]); !strings.Contains(rest, "Guest list: version 1") || strings.Contains(rest, "Diary") || strings.Contains(rest, "comment 1") {
		t.Errorf("the second page:\n%s", rest)
	}
	for _, bad := range [][]string{{"--after", "zz"}, {"--limit", "0"}, {"--limit", "1000"}, {"--since", "soon"}, {"--agent", "a b"}, {"--agent", "person:"}, {"extra"}} {
		if out, err := cliResult(data, "", append([]string{"docs", "log"}, bad...)...); err == nil {
			t.Errorf("docs log %v: no refusal\n%s", bad, out)
		}
	}
}

// docs undo --session takes back what one MCP session did: its changes reverted as new
// versions by the person, merged with what changed since (a line changed since by someone
// else stays, and is shown as a clash); its open proposals declined "undone".
func TestDocsUndoSession(t *testing.T) {
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	cliResult(data, "1 intro\n2 alpha\n3 beta\n4 gamma\n5 delta\n6 eps\n7 zeta\n", "docs", "save", "--new", "Plan")
	north := stdioClient(t, data, "--agent", "north")
	callTool(t, north, "edit_document", map[string]any{"document": "Plan", "old": "2 alpha", "new": "2 ALPHA"})
	callTool(t, north, "edit_document", map[string]any{"document": "Plan", "old": "6 eps", "new": "6 EPS"})
	other := stdioClient(t, data, "--agent", "south")
	callTool(t, other, "edit_document", map[string]any{"document": "Plan", "old": "4 gamma", "new": "4 gamma (south)"})
	callTool(t, other, "edit_document", map[string]any{"document": "Plan", "old": "6 EPS", "new": "6 eps, south's"})
	reviewed := stdioClient(t, data, "--agent", "north", "--review")
	callTool(t, reviewed, "append_document", map[string]any{"document": "Plan", "text": "8 eta"})

	log := cli(t, data, "docs", "log", "--agent", "north")
	ids := regexp.MustCompile(`\[session (m[0-9a-f]{16})\]`).FindAllStringSubmatch(log, -1)
	if len(ids) != 2 {
		t.Fatalf("north's sessions:\n%s", log)
	}
	edits, proposing := ids[1][1], ids[0][1] // newest first
	out := cli(t, data, "docs", "undo", "--session", edits)
	for _, want := range []string{"Plan (", "versions 3, 2 taken back, as version 6", "clash: line 6 changed since by someone else, kept as they are:", "| 6 eps, south's"} {
		if !strings.Contains(out, want) {
			t.Errorf("docs undo lacks %q:\n%s", want, out)
		}
	}
	text := cli(t, data, "docs", "show", "Plan")
	if want := "1 intro\n2 alpha\n3 beta\n4 gamma (south)\n5 delta\n6 eps, south's\n7 zeta\n"; text != want {
		t.Errorf("Plan after the undo:\n%s\nwant:\n%s", text, want)
	}
	out = cli(t, data, "docs", "undo", "--session", proposing)
	if !strings.Contains(out, `change 1 declined, "undone"`) {
		t.Errorf("undoing the reviewed session:\n%s", out)
	}
	if out, err := cliResult(data, "", "docs", "undo", "--session", "m0000000000000000"); err == nil {
		t.Errorf("an unknown session: no refusal\n%s", out)
	}
	if out, err := cliResult(data, "", "docs", "undo"); err == nil {
		t.Errorf("no --session: no refusal\n%s", out)
	}
}

// A version made by a tool call in a Claude Code session imported into the same space
// says why: docs log names the conversation and the person's message that led to it,
// found by the tool's answer ("Saved [...] as version N") in the transcript, which came
// after the version. The same transcript imported into another space links nothing.
func TestDocsLogWhy(t *testing.T) {
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	c := stdioClient(t, data, "--agent", "north", "--space", "launch")
	callTool(t, c, "write_document", map[string]any{"title": "Launch plan", "text": "# Launch plan\n\nLaunch on the 2nd.\n"})
	saved := callTool(t, c, "edit_document", map[string]any{"document": "Launch plan", "old": "Launch on the 2nd.", "new": "Launch on the 9th."})
	if !strings.Contains(saved.text, "as version 2") {
		t.Fatalf("the edit's answer: %s", saved.text)
	}
	fixture, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "why", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := json.Marshal(saved.text)
	dir := filepath.Join(t.TempDir(), "projects", "-home-ana-launch")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "5d0c7e21-9a4b-4c3d-8e2f-1a6b7c8d9e01.jsonl"), bytes.ReplaceAll(fixture, []byte("ANSWER"), answer), 0o644); err != nil {
		t.Fatal(err)
	}
	// Before the transcript: no why.
	if out := cli(t, data, "docs", "log", "--space", "launch"); strings.Contains(out, "why:") {
		t.Errorf("a why before any transcript:\n%s", out)
	}
	cli(t, data, "import", "--claude-code", filepath.Dir(dir), "--space", "elsewhere")
	if out := cli(t, data, "docs", "log"); strings.Contains(out, "why:") {
		t.Errorf("another space's conversation named:\n%s", out)
	}
	cli(t, data, "import", "--claude-code", filepath.Dir(dir), "--space", "launch")
	out := cli(t, data, "docs", "log", "--space", "launch")
	want := regexp.MustCompile(`Launch plan: version 2, edit \+1 −1 \([0-9A-Z]{26}\)\n +why: from conversation “Launch date” \(5d0c7e21-9a4b-4c3d-8e2f-1a6b7c8d9e01\): Ana: Move the launch to the 9th, please\.\n`)
	if !want.MatchString(out) {
		t.Errorf("docs log lacks version 2's why:\n%s", out)
	}
	blame := cli(t, data, "docs", "blame", "Launch plan", "--space", "launch")
	if !strings.Contains(blame, "v2 why: from conversation “Launch date” (5d0c7e21-9a4b-4c3d-8e2f-1a6b7c8d9e01): Ana: Move the launch to the 9th, please.") || strings.Contains(blame, "v1 why") {
		t.Errorf("docs blame lacks version 2's why:\n%s", blame)
	}
	if strings.Count(out, "why:") != 1 {
		t.Errorf("docs log gives %d whys, want 1 (version 1 was not made in the conversation):\n%s", strings.Count(out, "why:"), out)
	}
}
