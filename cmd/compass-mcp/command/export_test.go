package command

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testtool"
)

// TestExportIntoExisting: export --git into a repository of the person's own is refused,
// the message naming --into-existing; with it, the space's branch is added.
func TestExportIntoExisting(t *testing.T) {
	testtool.Find(t, "git", "apt-get install -y git")
	data := newData(t)
	run := func(args ...string) (string, error) { return cliResult(data, "", append(args, "--for", "ana")...) }
	if _, err := run("call", "--agent", "north", "write_document", "title=Notes", "text=notes\n"); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "--initial-branch=main"},
		{"-c", "user.name=ana", "-c", "user.email=ana@example.com", "commit", "-q", "--allow-empty", "-m", "mine"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	out, err := run("export", "--git", repo)
	if err == nil || !strings.Contains(out, "give --into-existing to write into it anyway") {
		t.Fatalf("export --git into a repository of its own: %v %q", err, out)
	}
	if out, err := run("export", "--git", repo, "--into-existing"); err != nil || out != "Exported 1 version to refs/heads/personal in "+repo+".\n" {
		t.Fatalf("export --git --into-existing: %v %q", err, out)
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", "compass-export.lock")); err != nil {
		t.Errorf("the export's lock: %v", err)
	}
}
