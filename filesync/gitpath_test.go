package filesync

import (
	"strings"
	"testing"
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
