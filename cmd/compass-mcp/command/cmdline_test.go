package command

import (
	"strings"
	"testing"
)

// The flags every command shares may come before the command: they reach it as if given
// after it. Another flag before a command is refused, saying to put it after.
func TestSharedFlagsBeforeTheCommand(t *testing.T) {
	data, other := newData(t), newData(t)
	cli(t, other, "call", "write_document", "title=Elsewhere", "text=x")
	for _, args := range [][]string{
		{"--data", other, "call", "list_documents"},
		{"--data=" + other, "--for", "bo", "call", "list_documents"},
		{"-data", other, "--space", "personal", "docs", "list"},
	} {
		out, err := cliResult(data, "", args...)
		if err != nil || !strings.Contains(out, "Elsewhere") {
			t.Errorf("%q: %v\n%s", args, err, out)
		}
	}
	out, err := cliResult(data, "", "--space", "launch", "call", "list_documents", "--space", "personal")
	if err != nil || !strings.Contains(out, "No documents") {
		t.Errorf("a flag after the command wins over one before: %v\n%s", err, out)
	}
	out, err = cliResult(data, "", "--data", other, "--review", "call", "list_documents")
	if err == nil || !strings.Contains(out, "put the other flags after it") {
		t.Errorf("--review before call: %v\n%s", err, out)
	}
	for args, want := range map[string][2]string{
		"call list_documents":           {"call", "list_documents"},
		"--data x call list_documents":  {"call", "list_documents --data x"},
		"--data=x docs list -- --a":     {"docs", "list --data=x -- --a"},
		"--data x docs list --data y":   {"docs", "list --data y"},
		"--data x":                      {"serve", "--data x"},
		"--data x --http :1":            {"serve", "--data x --http :1"},
		"--http :1 call":                {"serve", "--http :1 call"},
		"-h":                            {"-h", ""},
		"--for ana --space s install x": {"install", "x --for ana --space s"},
	} {
		cmd, rest := commandOf(strings.Fields(args))
		if cmd != want[0] || strings.Join(rest, " ") != want[1] {
			t.Errorf("%q: %s %q, want %s %q", args, cmd, rest, want[0], want[1])
		}
	}
}
