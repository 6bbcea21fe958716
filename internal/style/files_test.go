package style

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testtool"
)

// maxTracked is the largest file git may hold: the biggest source here (a screenshot, a
// golden session) is a few hundred KiB, and a build output is tens of MiB.
const maxTracked = 1 << 20

// binaryMagic are the first bytes of the executables and objects a go build or a C
// compiler writes, on every system the project builds for.
var binaryMagic = []struct {
	name  string
	magic []byte
}{
	{"an ELF executable", []byte("\x7fELF")},
	{"a Windows executable", []byte("MZ")},
	{"a Mach-O executable", []byte("\xcf\xfa\xed\xfe")},
	{"a Mach-O executable", []byte("\xce\xfa\xed\xfe")},
	{"a universal Mach-O executable", []byte("\xca\xfe\xba\xbe")},
	{"a WebAssembly module", []byte("\x00asm")},
	{"an ar archive (a Go package archive)", []byte("!<arch>\n")},
}

// Git holds sources only: a build output that comes in with a merge (a 25 MB binary named
// bench did once) is caught here, not by a reviewer. Every tracked file is at most 1 MiB,
// none is an executable or an object, and a file with the executable bit is a script
// (#!).
func TestNoBuildOutputs(t *testing.T) {
	git := testtool.Find(t, "git", "apt-get install -y git")
	root := filepath.Join("..", "..")
	cmd := exec.Command(git, "ls-files", "-s", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	checked := 0
	for _, entry := range bytes.Split(out, []byte{0}) {
		if len(entry) == 0 {
			continue
		}
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(string(entry), "\t")
		if !ok {
			t.Fatalf("git ls-files -s gave %q", entry)
		}
		mode := strings.Fields(meta)[0]
		if mode == "120000" || mode == "160000" { // a symlink, a submodule: no content here
			continue
		}
		if problem := checkTracked(filepath.Join(root, path), mode == "100755"); problem != "" {
			t.Errorf("%s is tracked by git, and %s: git holds sources; remove it (git rm --cached) and, if a command builds it, ignore it in .gitignore", path, problem)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("git ls-files listed no file: the check checked nothing")
	}
}

// checkTracked says what is wrong with the file at path for git to hold it, or "".
func checkTracked(path string, executable bool) string {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return "" // deleted in the work tree, not yet in git: the commit decides
	}
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	if info.Size() > maxTracked {
		return fmt.Sprintf("is %.1f MiB, over the 1 MiB a source may be", float64(info.Size())/(1<<20))
	}
	head := make([]byte, 8)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	for _, b := range binaryMagic {
		if bytes.HasPrefix(head, b.magic) {
			return "is " + b.name
		}
	}
	if executable && !bytes.HasPrefix(head, []byte("#!")) {
		return "has the executable bit but is no script (no #! line)"
	}
	return ""
}

// The check itself, on what it must refuse and what it must let through.
func TestCheckTracked(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	self, err := os.Executable() // this test's own binary: a real build output
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		path       string
		executable bool
		refused    bool
	}{
		{"the test binary", self, true, true},
		{"a big file", write("big.txt", bytes.Repeat([]byte("a"), maxTracked+1)), false, true},
		{"a file of 1 MiB", write("edge.txt", bytes.Repeat([]byte("a"), maxTracked)), false, false},
		{"a Windows binary", write("x.exe", []byte("MZ\x90\x00rest")), false, true},
		{"an executable without #!", write("run", []byte("echo hi\n")), true, true},
		{"a script", write("run.sh", []byte("#!/bin/sh\necho hi\n")), true, false},
		{"a Go source", write("a.go", []byte("package a\n")), false, false},
		{"an empty file", write("empty", nil), false, false},
	} {
		if got := checkTracked(tc.path, tc.executable) != ""; got != tc.refused {
			t.Errorf("%s: refused %v, want %v (%q)", tc.name, got, tc.refused, checkTracked(tc.path, tc.executable))
		}
	}
}
