package command

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/tools"
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

// A tool's arguments guide as flags do: a typo names the close one, a flag-shaped one
// says how they are written, and the list is what call TOOL -h shows.
func TestToolArgumentsGuide(t *testing.T) {
	for args, want := range map[string]string{
		"list_documents limt=5":      "list_documents has no argument limt: did you mean limit? (it takes limit, linked_from, links, links_to, query;",
		"list_documents --limit 5":   "tool arguments are written name=value: limit=5, not --limit",
		"list_documents -limit=5":    "tool arguments are written name=value: limit=5, not -limit=5",
		"read_document docment=x":    "read_document has no argument docment: did you mean document?",
		"read_document zzzzzzzzzz=1": "read_document has no argument zzzzzzzzzz (it takes document,",
		"list_documents limit":       `call takes arguments as name=value; got "limit"`,
	} {
		err := call(context.Background(), strings.Fields(args), strings.NewReader(""), io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) || exitCode(err) != 2 {
			t.Errorf("call %s: %v\nwant %q", args, err, want)
		}
	}
	for _, name := range tools.Names() {
		err := knownArgument(name, "zz")
		usage := tools.Usage(name, "x")
		listed := strings.TrimSuffix(strings.SplitN(err.Error(), "(it takes ", 2)[1], "; compass-mcp call "+name+" -h says what each is)")
		for _, a := range strings.Split(listed, ", ") {
			if !strings.Contains(usage, "\n  "+a+" (") {
				t.Errorf("%s: the refusal lists %s, which call %s -h doesn't show", name, a, name)
			}
		}
	}
	data := newData(t)
	cli(t, data, "call", "write_document", "title=A", "text=x")
	// sign_in, which call's server offers though -h leaves it out, reaches the tool.
	if out, err := cliResult(data, "", "call", "list_documents", "sign_in=/"); exitOf(err) == 2 || !strings.Contains(out, "sign-in link") {
		t.Errorf("sign_in: %v\n%s", err, out)
	}
}

// help lists every docs subcommand, and each one's -h shows its arguments.
func TestDocsSubcommandsInHelp(t *testing.T) {
	var b strings.Builder
	help(&b)
	var subs []string
	for _, d := range docsSubs {
		subs = append(subs, d.name)
	}
	for name := range reviewCommands {
		subs = append(subs, name)
	}
	env := testEnv(newData(t))
	for _, sub := range subs {
		if !regexp.MustCompile(`compass-mcp docs [^\n]*\b` + sub + `\b`).MatchString(b.String()) {
			t.Errorf("help doesn't list docs %s", sub)
		}
		code, _, errs := runEnv(t, env, "docs", sub, "-h")
		first, _, _ := strings.Cut(errs, "\n")
		if code != 0 || first == "Usage: compass-mcp docs "+sub || !strings.HasPrefix(first, "Usage: compass-mcp docs "+sub+" ") {
			t.Errorf("docs %s -h: exit %d, %q", sub, code, first)
		}
	}
	if code, _, errs := runEnv(t, env, "docs", "accept", "-h"); code != 0 || !strings.Contains(errs, "docs accept DOC N") {
		t.Errorf("docs accept -h: %s", errs)
	}
}
