package command

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// docs blame prints every line with the version that last changed it, its kind, author
// and time, as the person reads them.
func TestBlameOnTheCommandLine(t *testing.T) {
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	cli(t, data, "call", "--agent", "north", "write_document", "title=Launch plan", "text=# Launch plan\n\nRecord the trailer.\nReview the page.\n")
	cli(t, data, "call", "--agent", "north", "edit_document", "document=launch", "old=Review the page.", "new=Review the course page.")
	if _, err := cliResult(data, "# Launch plan\n\nRecord the trailer on Tuesday.\nReview the course page.\n", "docs", "save", "launch"); err != nil {
		t.Fatal(err)
	}
	got := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d`).ReplaceAllString(cli(t, data, "docs", "blame", "launch"), "<time>")
	want := `Launch plan (<id>), version 3, 4 lines, each with the version that last changed it:
1  v1 write north for Ana <time> | # Launch plan
2  v1 write north for Ana <time> | 
3  v3 save  Ana           <time> | Record the trailer on Tuesday.
4  v2 edit  north for Ana <time> | Review the course page.
`
	got = ulidRE.ReplaceAllString(got, "<id>")
	if got != want {
		t.Errorf("docs blame (-want +got):\n%s", lineDiff(want, got))
	}
	if out, err := cliResult(data, "", "docs", "blame"); err == nil || !strings.Contains(out, "docs blame takes a document") {
		t.Errorf("docs blame without a document: %v, %q", err, out)
	}
	if out, err := cliResult(data, "", "docs", "blame", "nothing"); err == nil || !strings.Contains(out, `no document "nothing"`) {
		t.Errorf("docs blame of nothing: %v, %q", err, out)
	}
}

// reviewStep is one step of a review-mode session: an agent's tool call, or (cli set) a
// command the person runs.
type reviewStep struct {
	tool  string
	args  map[string]any
	cli   []string
	stdin string
}

// The review session: in review mode (serve --review) the agent's changes are proposals;
// the person accepts, declines and merges them on the command line; the agent's reads say
// what waits and what became of its own; then comments on lines, from both sides, carried
// through a change and resolved. The exact answers are testdata/sessions/review.txtar.
var reviewSteps = []reviewStep{
	{tool: "write_document", args: map[string]any{"title": "Launch plan", "text": "# Launch plan\n\nRecord the trailer.\nReview the course page.\n\nBook the studio.\n"}},
	{tool: "edit_document", args: map[string]any{"document": "Launch plan", "old": "Record the trailer.", "new": "Record the trailer on Monday."}},
	{tool: "append_document", args: map[string]any{"document": "Launch plan", "text": "- Send the invitations."}},
	{tool: "read_document", args: map[string]any{"document": "Launch plan"}},
	{tool: "read_document", args: map[string]any{"document": "Launch plan", "proposal": 1}},
	{cli: []string{"docs", "proposals"}},
	{cli: []string{"docs", "accept", "Launch plan", "1"}},
	{cli: []string{"docs", "decline", "Launch plan", "2", "--why", "The invitations go out after the trailer."}},
	{tool: "read_document", args: map[string]any{"document": "Launch plan"}},
	{cli: []string{"docs", "save", "Launch plan"}, stdin: "# Launch plan for May\n\nRecord the trailer on Monday.\nReview the course page.\n\nBook the studio.\n"},
	{tool: "write_document", args: map[string]any{"document": "Launch plan", "version": 2, "text": "# Launch plan\n\nRecord the trailer on Monday.\nReview the course page.\n\nBook the big studio.\n"}},
	{cli: []string{"docs", "accept", "Launch plan", "3"}},
	{tool: "read_document", args: map[string]any{"document": "Launch plan"}},
	{tool: "read_document", args: map[string]any{"document": "Launch plan", "proposal": 2}},
	{tool: "read_document", args: map[string]any{"document": "Launch plan", "proposal": 9}},
	{tool: "append_document", args: map[string]any{"document": "Launch plan", "text": "- Tell Ben."}},
	{cli: []string{"docs", "accept", "Launch plan", "3"}},
	{cli: []string{"docs", "save", "Launch plan"}, stdin: "# Launch plan for May\n\nRecord the trailer on Monday.\nReview the course page.\n\nBook the big studio at noon.\n"},
	{cli: []string{"docs", "accept", "Launch plan", "4"}},
	{tool: "read_document", args: map[string]any{"document": "Launch plan"}},
	{cli: []string{"docs", "accept", "Launch plan", "4", "--edit", "--base", "5"}, stdin: "# Launch plan for May\n\nRecord the trailer on Monday.\nReview the course page.\n\nBook the big studio at noon.\n\n- Tell Ben.\n"},
	{tool: "read_document", args: map[string]any{"document": "Launch plan"}},
	{cli: []string{"docs", "history", "Launch plan"}},
	{cli: []string{"docs", "blame", "Launch plan"}},
	// Comments on lines.
	{cli: []string{"docs", "comment", "Launch plan", "--lines", "3", "Monday, or Tuesday?"}},
	{tool: "read_document", args: map[string]any{"document": "Launch plan"}},
	{tool: "comment_document", args: map[string]any{"document": "Launch plan", "reply_to": 1, "text": "Monday: the studio is free then."}},
	{tool: "comment_document", args: map[string]any{"document": "Launch plan", "lines": "6", "text": "At noon, or after lunch?"}},
	{cli: []string{"docs", "comment", "Launch plan", "--reply", "3", "After lunch."}},
	{cli: []string{"docs", "comments", "Launch plan"}},
	{tool: "edit_document", args: map[string]any{"document": "Launch plan", "old": "Book the big studio at noon.", "new": "Book the big studio after lunch."}},
	{cli: []string{"docs", "accept", "Launch plan", "5"}},
	{tool: "read_document", args: map[string]any{"document": "Launch plan"}},
	{tool: "comment_document", args: map[string]any{"document": "Launch plan", "resolve": 3, "text": "Done: after lunch."}},
	{tool: "comment_document", args: map[string]any{"document": "Launch plan", "resolve": 1}},
	{tool: "comment_document", args: map[string]any{"document": "Launch plan", "reply_to": 1, "text": "One more thing."}},
	{tool: "read_document", args: map[string]any{"document": "Launch plan", "version": 6}},
	// Words that can't be read backwards: accept's old --mine is refused with the new names,
	// and an empty stdin saves nothing without --empty.
	{tool: "edit_document", args: map[string]any{"document": "Launch plan", "old": "- Tell Ben.", "new": "- Tell Ben and Cy."}},
	{cli: []string{"docs", "accept", "Launch plan", "6", "--mine"}},
	{cli: []string{"docs", "accept", "Launch plan", "6", "--keep-agent"}},
	{cli: []string{"docs", "save", "Launch plan"}, stdin: ""},
	{cli: []string{"docs", "save", "Launch plan", "--empty"}, stdin: ""},
}

func TestReviewSessionOverStdio(t *testing.T) {
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	c := stdioClient(t, data, "--agent", "north", "--review")
	m := masker{}
	var b strings.Builder
	for i, s := range reviewSteps {
		if s.cli != nil {
			out, err := cliResult(data, s.stdin, s.cli...)
			mark := ""
			if err != nil {
				mark = " (failed)"
			}
			fmt.Fprintf(&b, "-- %02d person: compass-mcp %s%s --\n%s", i+1, m.mask(strings.Join(s.cli, " ")), mark, m.mask(out))
			continue
		}
		args, _ := json.Marshal(s.args)
		a := callTool(t, c, s.tool, s.args)
		mark := ""
		if a.isError {
			mark = " (isError)"
		}
		fmt.Fprintf(&b, "-- %02d %s %s%s --\n%s\n", i+1, s.tool, m.mask(string(args)), mark, m.mask(a.text))
	}
	golden(t, "review.txtar", b.String())
}

// A token made with tokens add --review makes its agent's changes proposals on a server
// that is not in review mode; another token's agent saves as before; Ben, a member of
// launch, decides the proposal there.
func TestReviewToken(t *testing.T) {
	tm := newTeam(t)
	tm.addToken(t, "reviewed", "--for", "ana", "--agent", "north", "--review")
	tm.addToken(t, "free", "--for", "ana", "--agent", "south")
	if list := cli(t, tm.data, "tokens", "list"); strings.Count(list, "changes reviewed") != 1 {
		t.Errorf("tokens list:\n%s", list)
	}
	url, _ := httpServer(t, tm.data)
	launch := strings.TrimSuffix(url, "/mcp") + "/spaces/launch/mcp"
	reviewed := tokenClient(t, launch, tm.tokens["reviewed"], "test-client")
	free := tokenClient(t, launch, tm.tokens["free"], "test-client")
	if a := callTool(t, free, "write_document", map[string]any{"document": "Launch plan", "text": "# Launch\n\nmarker-launch\n\nthe end\n"}); a.isError || !strings.HasPrefix(a.text, "Saved [Launch plan](") {
		t.Fatalf("the other token's write: %+v", a)
	}
	if a := callTool(t, reviewed, "append_document", map[string]any{"document": "Launch plan", "text": "- north's"}); a.isError || !strings.HasPrefix(a.text, "Proposed [Launch plan](") || !strings.HasSuffix(a.text, "waiting for Ana's review.") {
		t.Fatalf("the review token's append: %+v", a)
	}
	if a := callTool(t, free, "edit_document", map[string]any{"document": "Launch plan", "old": "# Launch", "new": "# Launch in May"}); a.isError || !strings.HasPrefix(a.text, "Saved [Launch plan](") {
		t.Fatalf("the other token's edit: %+v", a)
	}
	if out := cli(t, tm.data, "docs", "accept", "Launch plan", "1", "--space", "launch", "--for", "ben"); !strings.Contains(out, "Accepted change 1") {
		t.Fatalf("Ben accepting: %s", out)
	}
	if a := callTool(t, reviewed, "read_document", map[string]any{"document": "Launch plan"}); !strings.Contains(a.text, "saved by north for Ana, accepted by Ben") || !strings.Contains(a.text, "- change 1 was merged with the changes made since, by Ben ") {
		t.Errorf("north's read after Ben accepted:\n%s", a.text)
	}
}
