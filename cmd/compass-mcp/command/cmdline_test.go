package command

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
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
	out, err := cliResult(other, "", "--space", "personal", "call", "list_documents", "--space", "launch")
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

// A data file that isn't there is refused by a command that reads, naming it, and nothing
// is made; a command that writes makes it and says so; data shaped like a URL with one
// slash is refused.
func TestAMissingDataFileIsNotAnEmptyStore(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "x.db")
	for _, args := range [][]string{
		{"call", "list_documents"}, {"call", "read_document", "document=x"}, {"docs", "list"}, {"docs", "show", "x"},
		{"conversations", "list"}, {"people", "list"}, {"members", "list"}, {"tokens", "list"}, {"backup", filepath.Join(dir, "b.db")},
		{"--data", missing, "call", "list_documents"},
	} {
		out, err := cliResult(missing, "", append(args, "--data", missing)...)
		if code := exitOf(err); code != 2 || !strings.Contains(out, "no data file at "+missing) || !strings.Contains(out, "compass-mcp serve --data") {
			t.Errorf("%q: exit %d\n%s", args, code, out)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("commands that read made %v", ents)
	}
	for _, data := range []string{"postgres:/bad", "sqlite:/x.db"} {
		t.Chdir(dir)
		out, err := cliResult(data, "", "call", "list_documents")
		if exitOf(err) != 2 || !strings.Contains(out, "is not one. Nothing was created") {
			t.Errorf("%s: %v\n%s", data, err, out)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("%s made %v", data, ents)
		}
	}
	cmd := exec.Command(testbin.Path, "call", "write_document", "title=First", "text=x")
	cmd.Env = append(os.Environ(), testEnv(missing)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || !strings.Contains(stderr.String(), "no data file at "+missing+": made a new, empty one") {
		t.Fatalf("a write: %v\n%s", err, stderr.String())
	}
	if out := cli(t, missing, "docs", "list"); !strings.Contains(out, "First") {
		t.Errorf("after the write:\n%s", out)
	}
}

func exitOf(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
