package filesync

import (
	"strings"
	"testing"
)

// fileFor's names: each one a name the scan reads (not taken for an editor's temp file),
// none a part NTFS or HFS+ reads as .git or Windows as a device, and the same title's
// file otherwise.
func TestFileForSafeNames(t *testing.T) {
	for _, tc := range []struct{ title, file string }{
		{"Plans/Q3", "Plans/Q3.md"},
		{"#tags", "_tags.md"},
		{"notes~", "notes-.md"},
		{"4913", "4913_.md"},
		{"draft.tmp", "draft.tmp_.md"},
		{"CON", "_CON.md"},
		{"aux", "_aux.md"},
		{"Lpt1.notes", "_Lpt1.notes.md"},
		{"nul/x", "_nul/x.md"},
		{"GIT~1/config", "_GIT~1/config.md"},
		{"git~1 ./hooks", "_git~1/hooks.md"},
		{"\u200c.git\u200d/x", "_\u200c.git\u200d/x.md"},
		{".git/config", "_git/config.md"},
		{"git~1", "git~1.md"},     // a file named git~1.md is no .git
		{"console", "console.md"}, // not a device
		{"a. /b", "a/b.md"},
	} {
		got := fileFor(tc.title)
		if got != tc.file {
			t.Errorf("fileFor(%q) = %q, want %q", tc.title, got, tc.file)
		}
		if (ignorer{}).ignoredPath(got) {
			t.Errorf("fileFor(%q) = %q, which the scan ignores", tc.title, got)
		}
		for part := range strings.SplitSeq(got, "/") {
			if ntfsDotGit(part) || hfsDotGit(part) || windowsDevice(part) || strings.HasSuffix(part, ".") || strings.HasSuffix(part, " ") {
				t.Errorf("fileFor(%q) = %q has the part %q", tc.title, got, part)
			}
		}
	}
}
