package command

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/stores"
	"github.com/compass-mcp/compass-mcp/tools"
)

// run runs the binary with env (and no other environment but PATH, HOME and GORACE, see
// testbin.Main) and gives its exit code, stdout and stderr.
func runEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(testbin.Path, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TZ=UTC", "GORACE=" + os.Getenv("GORACE")}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// The first things a new user types: help exits 0, call lists the tools it can call, people
// can be listed, and the docs commands say what they need in words.
func TestFirstSteps(t *testing.T) {
	t.Parallel()
	data := newData(t)
	env := testEnv(data)
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"serve", "-h"}, {"docs", "list", "-h"}} {
		if code, _, errs := runEnv(t, env, args...); code != 0 || errs == "" || strings.Contains(errs, "help requested") {
			t.Errorf("compass-mcp %s: exit %d, stderr %q; want exit 0 and the usage", strings.Join(args, " "), code, errs)
		}
	}
	every := strings.Join(tools.Names(), ", ")
	for _, args := range [][]string{{"call"}, {"call", "list_document"}} {
		code, _, errs := runEnv(t, env, args...)
		if code != 2 || !strings.Contains(errs, every) {
			t.Errorf("compass-mcp %s: exit %d, stderr %q; want exit 2 and the tools (%s)", strings.Join(args, " "), code, errs, every)
		}
	}

	if !stores.IsURL(data) { // a file that isn't there yet: reading refuses it, the first write makes it
		if code, out, errs := runEnv(t, env, "people", "list"); code != 2 || out != "" || !strings.Contains(errs, "no data file at "+data) {
			t.Errorf("people list before there is a store: exit %d, %q, %q", code, out, errs)
		}
		if code, out, errs := runEnv(t, env, "call", "write_document", "title=First", "text=x"); code != 0 || !strings.Contains(errs, "made a new, empty one") {
			t.Fatalf("the first write: exit %d, %q, %q", code, out, errs)
		}
	}
	if code, out, errs := runEnv(t, env, "people", "list"); code != 0 || out != "" || !strings.Contains(errs, "No one has a display name yet") {
		t.Errorf("people list of no one: exit %d, %q, %q", code, out, errs)
	}
	cli(t, data, "people", "set", "bo", "Bo Lindqvist")
	cli(t, data, "people", "set", "ana", "Ana")
	if out := cli(t, data, "people", "list"); out != "person:ana\tAna\nperson:bo\tBo Lindqvist\n" {
		t.Errorf("people list = %q", out)
	}

	if out, err := cliResult(data, "Record the trailer.\n", "docs", "save", "--new", "Launch plan"); err != nil {
		t.Fatal(out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"docs", "restore", "launch"}, "docs restore takes a document and a version (docs restore DOC N); got 1 argument"},
		{[]string{"docs", "rename"}, "docs rename takes a document and its new title (docs rename DOC TITLE); got 0 arguments"},
		{[]string{"docs", "purge", "launch"}, `"Launch plan" (`},
		{[]string{"docs", "purge", "launch"}, "isn't deleted, and purge removes only deleted documents: docs delete"},
	} {
		out, err := cliResult(data, "", c.args...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("compass-mcp %s: %v, said %q; want a refusal with %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
	if out := cli(t, data, "docs", "history", "launch"); !strings.Contains(out, ", 1 version, newest first") {
		t.Errorf("docs history of one version: %q", out)
	}
	if out := cli(t, data, "docs", "delete", "launch"); !strings.Contains(out, "Its 1 version is kept") {
		t.Errorf("docs delete of one version: %q", out)
	}
	if out := cli(t, data, "docs", "list", "--deleted"); !strings.Contains(out, "· 1 version · deleted by Ana") {
		t.Errorf("docs list --deleted: %q", out)
	}
	if out := cli(t, data, "docs", "purge", "Launch plan"); !strings.Contains(out, "and its 1 version.") {
		t.Errorf("docs purge: %q", out)
	}
}

// Without $USER (a service, a container) the person is the system account's, and the
// server says so; never a made-up one.
func TestForWithoutUser(t *testing.T) {
	t.Parallel()
	data := newData(t)
	env := []string{"COMPASS_DATA=" + data, "COMPASS_LOG=info", "USER=", "USERNAME="}
	code, out, errs := runEnv(t, env, "call", "write_document", "title=Plan", "text=one")
	if code != 0 || !strings.Contains(out, "Saved") {
		t.Fatalf("call without $USER: exit %d, %q, %q", code, out, errs)
	}
	if !strings.Contains(errs, "$USER is empty") || !strings.Contains(errs, "person=person:") {
		t.Errorf("without $USER, stderr doesn't say who is used: %q", errs)
	}
	if strings.Contains(cli(t, data, "docs", "history", "Plan"), "for me") {
		t.Errorf("a version was saved for a made-up person \"me\"")
	}
}

// Without $USER, the fallback is said once, and only by the commands that act as a person:
// not by those that list people, members, tokens or documents.
func TestForWithoutUserSaidOnce(t *testing.T) {
	data := newData(t)
	env := []string{"COMPASS_DATA=" + data, "COMPASS_LOG=info", "USER=", "USERNAME="}
	for _, c := range []struct {
		args []string
		n    int
	}{
		{[]string{"members", "list"}, 0},
		{[]string{"tokens", "list"}, 0},
		{[]string{"people", "list"}, 0},
		{[]string{"docs", "list"}, 0},
		{[]string{"call", "list_documents"}, 1},
		{[]string{"say", "pricing", "12 a month."}, 1},
	} {
		_, _, errs := runEnv(t, env, c.args...)
		if n := strings.Count(errs, "$USER is empty"); n != c.n {
			t.Errorf("compass-mcp %s without $USER said the fallback %d times, want %d:\n%s", strings.Join(c.args, " "), n, c.n, errs)
		}
	}
	// A server: said once, though it opens the data more than once as it starts.
	cmd := exec.Command(testbin.Path, "serve", "--http", "127.0.0.1:0")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	errb := newProcessLog()
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // if await fails
	errb.await(t, 20*time.Second, "serving MCP over streamable HTTP")
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	if n := strings.Count(errb.String(), "$USER is empty"); n != 1 {
		t.Errorf("serve --http without $USER said the fallback %d times, want once:\n%s", n, errb.String())
	}
}

// processLog is what a process writes to its log (stderr), kept a line at a time, for a
// test to wait on: a line the process writes when it is ready, or when it has done
// something, is the event to wait for, not a time.
type processLog struct {
	mu    sync.Mutex
	part  []byte // the start of a line not yet ended
	lines []string
	next  int           // the first line await has not yet looked at
	more  chan struct{} // closed, and replaced, when a line ends
}

func newProcessLog() *processLog { return &processLog{more: make(chan struct{})} }

func (l *processLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	ended := false
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, string(l.part[:i]))
		l.part = l.part[i+1:]
		ended = true
	}
	if ended {
		close(l.more)
		l.more = make(chan struct{})
	}
	return len(p), nil
}

// await returns the first line after those an earlier await returned that holds every one
// of words, once the process has written it; if it hasn't within the given time, the test
// fails, showing the log.
func (l *processLog) await(t *testing.T, within time.Duration, words ...string) string {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		for ; l.next < len(l.lines); l.next++ {
			if line := l.lines[l.next]; holdsAll(line, words) {
				l.next++
				l.mu.Unlock()
				return line
			}
		}
		more := l.more
		l.mu.Unlock()
		select {
		case <-more:
		case <-deadline.C:
			t.Fatalf("no line of the log says %q within %v:\n%s", words, within, l)
		}
	}
}

// has reports whether a line written so far holds every one of words.
func (l *processLog) has(words ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if holdsAll(line, words) {
			return true
		}
	}
	return false
}

func holdsAll(line string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(line, w) {
			return false
		}
	}
	return true
}

// String is the log so far.
func (l *processLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n") + "\n" + string(l.part)
}

// -h prints no secret the environment holds: not COMPASS_TOKEN (serve, web and open took
// it as their --token flag's default, which the flag package prints), not a database URL's
// password in COMPASS_DATA (shown as the URL without it), for any command.
func TestHelpHidesSecrets(t *testing.T) {
	env := []string{"COMPASS_TOKEN=tok-s3cret-7", "COMPASS_DATA=postgres://ana:pw-s3cret-9@127.0.0.1:1/compass", "COMPASS_ME=ana"}
	var names [][]string
	for _, c := range commands {
		if c.name != "help" {
			names = append(names, []string{c.name, "-h"})
		}
	}
	names = append(names, []string{"tokens", "add", "-h"}, []string{"docs", "show", "-h"})
	shown := false
	for _, args := range names {
		_, out, errs := runEnv(t, env, args...)
		if strings.Contains(out+errs, "s3cret") {
			t.Errorf("compass-mcp %s printed a secret of the environment:\n%s", strings.Join(args, " "), errs)
		}
		shown = shown || strings.Contains(errs, "postgres://ana@127.0.0.1:1/compass")
	}
	if !shown {
		t.Error("no command's help shows which database COMPASS_DATA names (without its password)")
	}
}

// -h after any command prints its usage, its arguments and flags, exit 0; call TOOL -h the
// tool's arguments as tools/list gives them; a mistyped flag or command is refused once,
// naming the close one, without the flag list. Before, version -h printed everything and
// exited 2, import -h left out --claude-code, people -h, members -h and backup -h said
// nothing of their arguments, and a mistyped flag printed its error twice around the list.
func TestHelp(t *testing.T) {
	env := testEnv(newData(t))
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"version", "-h"}, []string{"Usage: compass-mcp version\n"}},
		{[]string{"import", "-h"}, []string{"Usage: compass-mcp import FILE", "-claude-code", "-project", "-follow", "-poll"}},
		{[]string{"people", "-h"}, []string{"Usage: compass-mcp people list | set ID NAME"}},
		{[]string{"members", "-h"}, []string{"Usage: compass-mcp members add|remove SPACE PERSON", "members list [SPACE]"}},
		{[]string{"backup", "-h"}, []string{"Usage: compass-mcp backup FILE", "-data"}},
		{[]string{"sync", "-h"}, []string{"Usage: compass-mcp sync DIR [--once]", "-once", "-allow-deletes", "-every", "docs/SYNC.md"}},
		{[]string{"export", "-h"}, []string{"Usage: compass-mcp export --git DIR", "-git", "refs/compass/SPACE"}},
		{[]string{"tokens", "add", "-h"}, []string{"Usage: compass-mcp tokens add --for PERSON", "-new-person", "-expires"}},
		{[]string{"docs", "show", "-h"}, []string{"Usage: compass-mcp docs show DOC [--version N]", "-version"}},
		{[]string{"copy", "-h"}, []string{"Usage: compass-mcp copy --from A --to B", "all or nothing", "-timeout"}},
		{[]string{"install", "-h"}, []string{"Usage: compass-mcp install [CLIENT]", "-print"}},
		{[]string{"open", "-h"}, []string{"Usage: compass-mcp open [DOC] [--serve]", "-serve"}},
		{[]string{"say", "-h"}, []string{"Usage: compass-mcp say CONVERSATION TEXT", "-private"}},
		{[]string{"serve", "-h"}, []string{"Usage: compass-mcp serve", "-http", "-follow-claude-code"}},
		{[]string{"call", "-h"}, []string{"Usage: compass-mcp call TOOL", "read_document"}},
		{[]string{"call", "read_document", "-h"}, []string{"Usage: compass-mcp call read_document", "document (string, required)", "since (integer)"}},
	} {
		code, out, errs := runEnv(t, env, c.args...)
		if code != 0 || out != "" {
			t.Errorf("compass-mcp %s: exit %d, stdout %q; want exit 0 and the usage on stderr", strings.Join(c.args, " "), code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("compass-mcp %s doesn't say %q:\n%s", strings.Join(c.args, " "), w, errs)
			}
		}
		if strings.Count(errs, "Usage:") != 1 {
			t.Errorf("compass-mcp %s printed its usage %d times", strings.Join(c.args, " "), strings.Count(errs, "Usage:"))
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"say", "pricing", "hi", "--pivate"}, "say has no flag --pivate: did you mean --private?"},
		{[]string{"tokens", "add", "--for", "ana", "--expire", "3d"}, "did you mean --expires?"},
		{[]string{"vesion"}, `no command "vesion": did you mean version?`},
	} {
		code, _, errs := runEnv(t, env, c.args...)
		if code != 2 || strings.Count(errs, c.want) != 1 || strings.Contains(errs, "-data") || strings.Count(errs, "\n") != 1 {
			t.Errorf("compass-mcp %s: exit %d, %q; want exit 2 and one line saying %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
}
