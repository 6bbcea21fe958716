package filesync

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testtool"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// gitPathTests: each title's file, as the export commits it; every one passes
// checkGitPath, and none is .git to NTFS or HFS+ or a device on Windows.
var gitPathTests = []struct{ title, file string }{
	{"Ok/notes", "Ok/notes.md"},
	{".git/config", "_git/config.md"},
	{"GIT~1/config", "_GIT~1/config.md"},
	{"git~1/hooks/post-checkout", "_git~1/hooks/post-checkout.md"},
	{"Git~2 . ./x", "_Git~2/x.md"},
	{".GIT. ./y", "_GIT/y.md"},
	{"GIT~1::$INDEX_ALLOCATION/u", "GIT~1--$INDEX_ALLOCATION/u.md"},
	{`a\.git/t`, "a-.git/t.md"},
	{"\u200c.git/config", "_\u200c.git/config.md"},
	{"\u200d.GiT\ufeff/w", "_\u200d.GiT\ufeff/w.md"},
	{"\u206a.g\u202ait\u200e/v", "_\u206a.g\u202ait\u200e/v.md"},
	{".g\u200cit/z", "_g\u200cit/z.md"},
	{"CON/x", "_CON/x.md"},
	{"aux", "_aux.md"},
	{"nul.txt", "_nul.txt.md"},
	{"Lpt1 /y", "_Lpt1/y.md"},
	{"com\u00b9", "_com\u00b9.md"},
	{"console/x", "console/x.md"},
	{"ends with a space ./q", "ends with a space/q.md"},
	{"..", "_.md"},
	{"../../up", "_/_/up.md"},
	{"a/./b", "a/_/b.md"},
	{"gitx/git~/git~a", "gitx/git~/git~a.md"},
	{".gitmodules", "_gitmodules.md"},
}

func TestGitFileFor(t *testing.T) {
	for _, tc := range gitPathTests {
		got := gitFileFor(tc.title)
		if got != tc.file {
			t.Errorf("gitFileFor(%q) = %q, want %q", tc.title, got, tc.file)
		}
		if err := checkGitPath(got); err != nil {
			t.Errorf("gitFileFor(%q): %v", tc.title, err)
		}
		for part := range strings.SplitSeq(got, "/") {
			if ntfsDotGit(part) || hfsDotGit(part) || windowsDevice(part) {
				t.Errorf("gitFileFor(%q) has the part %q", tc.title, part)
			}
		}
	}
}

// Paths git would refuse to check out (or Git for Windows could not) are refused, each
// for its reason; the paths it checks out pass.
func TestCheckGitPath(t *testing.T) {
	for _, p := range []string{
		"", "/a.md", "a.md/", "a//b.md", "./a.md", "a/../b.md", ".git/config", ".GIT/x.md",
		".git./x.md", ".git ./x.md", "git~1/config", "GIT~1/x.md", "Git~1 ./x.md", "git~3/x.md",
		"git~1:stream/x.md", ".git::$INDEX_ALLOCATION/x.md", `a\.git\config`, "C:/x.md",
		"\u200c.git/x.md", ".gi\u200dt/x.md", "\ufeff.GIT/x.md", "\u202e.git\u206f/x.md",
		"CON.md", "x/aux.md", "NUL", "com1.md", "LPT9/a.md", "conin$.md", "a /b.md", "a./b.md",
		".hidden.md", "a\nb.md", "a\x00b.md",
	} {
		if err := checkGitPath(p); err == nil {
			t.Errorf("checkGitPath(%q) passed", p)
		}
	}
	for _, p := range []string{
		"a.md", "Plans/Launch.md", "_git/config.md", "_GIT~1/config.md", "git~1x/a.md", "gitx.md",
		"x.git/a.md", "git~/a.md", "console.md", "com10.md", "auxiliary/a.md", "wide\u00b7dot é.md",
		"\u200c_git/x.md", "a (01M8PGKZD91FPDJN4QQFFR0WBP).md",
	} {
		if err := checkGitPath(p); err != nil {
			t.Errorf("checkGitPath(%q): %v", p, err)
		}
	}
}

// An export before paths were checked committed GIT~1/config.md, which no checkout takes;
// the next export moves it where it can be checked out (a commit of its own, even with no
// new version), and the branch checks out again.
func TestExportGitMovesAnUncheckableFile(t *testing.T) {
	testtool.Find(t, "git", "apt-get install -y git")
	ctx := context.Background()
	s := docstore.New(kvtest.Open(t), "personal")
	if _, err := s.Create(ctx, "GIT~1/config", "x\n", docstore.KindWrite, docstore.Author{By: "agent:north"}); err != nil {
		t.Fatal(err)
	}
	var id string
	if err := s.View(ctx, func(r *docstore.Reader) error { d, err := r.Find("GIT~1/config"); id = d.ID; return err }); err != nil {
		t.Fatal(err)
	}
	// The repository as an export before made it: the file, and its state.
	dir := filepath.Join(t.TempDir(), "history")
	git := func(stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.MkdirAll(dir, 0o755)
	git("", "init", "-q", "--initial-branch=personal")
	state := `{"space":"personal","docs":{"` + id + `":{"version":1,"path":"GIT~1/config.md"}}}`
	git("commit refs/heads/personal\ncommitter north <agent:north> 1793696401 +0000\ndata 6\nwrite\n"+
		"M 100644 inline \"GIT~1/config.md\"\ndata 2\nx\n\n"+
		"commit refs/compass/personal\ncommitter compass-mcp <export@compass> 1793696401 +0000\ndata 6\nstate\n"+
		"M 100644 inline state.json\ndata "+strconv.Itoa(len(state))+"\n"+state+"\n\ndone\n", "fast-import", "--quiet", "--done")
	if out, err := exec.Command("git", "-C", dir, "read-tree", "-m", "-u", "personal").CombinedOutput(); err == nil || !strings.Contains(string(out), "invalid path") {
		t.Fatalf("the branch as before checks out: %v %s", err, out)
	}
	ex, err := ExportGit(ctx, s, dir, GitOptions{})
	if err != nil || ex.Moves != 1 || ex.Versions != 0 {
		t.Fatalf("the export after: %+v, %v", ex, err)
	}
	out, err := exec.Command("git", "-C", dir, "ls-files").CombinedOutput()
	if err != nil || string(out) != "_GIT~1/config.md\n" {
		t.Errorf("git ls-files: %v %s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "_GIT~1", "config.md")); err != nil || string(b) != "x\n" {
		t.Errorf("the moved file: %q, %v", b, err)
	}
	if ex, err := ExportGit(ctx, s, dir, GitOptions{}); err != nil || ex.Moves+ex.Versions != 0 {
		t.Errorf("a run again: %+v, %v", ex, err)
	}
}
