package command

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testtool"
	"github.com/compass-mcp/compass-mcp/kv/stores"
)

// TestSyncAndExportCommands: sync --once and export --git through the binary, as a person
// types them: what they print, and the usage errors.
func TestSyncAndExportCommands(t *testing.T) {
	testtool.Find(t, "git", "apt-get install -y git")
	data := newData(t)
	run := func(args ...string) (string, error) { return cliResult(data, "", append(args, "--for", "ana")...) }
	vault := filepath.Join(t.TempDir(), "vault")
	os.MkdirAll(filepath.Join(vault, "Projects"), 0o755)
	os.WriteFile(filepath.Join(vault, "Projects", "Plan.md"), []byte("---\ntags: [x]\n---\n# Plan\n"), 0o644)
	if _, err := run("call", "--agent", "north", "write_document", "title=Agent notes", "text=notes\n"); err != nil {
		t.Fatal(err)
	}
	out, err := run("sync", vault, "--once")
	if err != nil || out != "Synced: 1 made, 0 joined, 0 saved (0 clashes kept as proposals), 1 written, 0 renamed, 0 deleted, 0 removed, 0 skipped.\n" {
		t.Fatalf("sync --once: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "Agent notes.md")); string(b) != "notes\n" {
		t.Errorf("Agent notes.md is %q", b)
	}
	if out, err := run("docs", "show", "Projects/Plan"); err != nil || out != "---\ntags: [x]\n---\n# Plan\n" {
		t.Errorf("docs show Projects/Plan: %v %q", err, out)
	}
	if out, err := run("sync", vault, "--once"); err != nil || out != "In step: nothing to do.\n" {
		t.Errorf("sync --once again: %v %q", err, out)
	}
	repo := filepath.Join(t.TempDir(), "history")
	if out, err := run("export", "--git", repo); err != nil || out != "Exported 2 versions to refs/heads/personal in "+repo+".\n" {
		t.Errorf("export --git: %v %q", err, out)
	}
	if out, err := run("export", "--git", repo); err != nil || !strings.HasPrefix(out, "Nothing new since the last export") {
		t.Errorf("export --git again: %v %q", err, out)
	}
	if out, err := exec.Command("git", "-C", repo, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v %s", err, out)
	}
	for args, want := range map[string]string{
		"export " + repo:          "export writes a git repository: export --git " + repo,
		"sync":                    "sync takes DIR",
		"sync " + vault + "/nope": "the folder is missing",
		"sync " + vault + " --server ftp://127.0.0.1:1":                     "--server: the URL of a compass-mcp serve --http",
		"sync " + vault + " --server http://127.0.0.1:1 --data " + data:     "--server and --data",
		"sync " + vault + " --server http://127.0.0.1:1 --once":             "the server at http://127.0.0.1:1 did not answer",
		"sync " + vault + " --server http://127.0.0.1:1 --once --poll 10ms": "--poll is at least 1s",
	} {
		out, err := run(strings.Fields(args)...)
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("%s: %v %q, want %q", args, err, out, want)
		}
	}
}

// TestSyncSaysWhatHappened: a failed pass printed "In step: nothing to do." on stdout
// before its error; now stdout says nothing when nothing happened. A continuous sync
// printed nothing at its start; now one line, with its time, says the folder, the space
// and the store, and so does each line after.
func TestSyncSaysWhatHappened(t *testing.T) {
	data := newData(t)
	cli(t, data, "call", "--agent", "north", "write_document", "title=Agent notes", "text=notes\n", "--for", "ana")
	vault := filepath.Join(t.TempDir(), "vault")
	os.MkdirAll(filepath.Join(vault, ".compass"), 0o755)
	os.WriteFile(filepath.Join(vault, ".compass", "sync-personal.json"), []byte("{not json"), 0o644)
	cmd := exec.Command(testbin.Path, "sync", vault, "--once", "--for", "ana")
	cmd.Env = append(os.Environ(), testEnv(data)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err == nil || out.Len() != 0 || !strings.Contains(errb.String(), "reading the sync's state") {
		t.Errorf("a failed pass: %v, stdout %q, stderr %q", err, out.String(), errb.String())
	}
	os.Remove(filepath.Join(vault, ".compass", "sync-personal.json"))

	cmd = exec.Command(testbin.Path, "sync", vault, "--for", "ana")
	cmd.Env = append(os.Environ(), testEnv(data)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var first string
	select {
	case first = <-lines:
	case <-time.After(30 * time.Second):
	}
	cmd.Process.Signal(os.Interrupt)
	for range lines {
	}
	waitExit(t, cmd, 30*time.Second, "sync")
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d sync: keeping `)
	if !stamp.MatchString(first) || !strings.Contains(first, vault) || !strings.Contains(first, `"personal"`) || !strings.Contains(first, stores.Redact(data)) {
		// A PostgreSQL URL is shown with its password hidden (stores.Redact), a path as it is.
		t.Errorf("the start line: %q, want the time, the folder, the space and the data", first)
	}
}
