package command

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testtool"
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
