//go:build unix

package command

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

// copyTree copies the folder src into a new temporary folder and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// withFIFO is a copy of the Claude Code fixtures with a FIFO named like a transcript in one
// of its projects (mkfifo ~/.claude/projects/p/zz.jsonl). When the test ends, the FIFO is
// opened for writing, so that a process stuck opening it for reading goes on.
func withFIFO(t *testing.T) (dir, fifo string) {
	t.Helper()
	dir = copyTree(t, ccFixtures)
	fifo = filepath.Join(dir, "-home-ana-launch", "zz.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return dir, fifo
}

// A FIFO among Claude Code's transcripts: import --claude-code skips it with a line on
// stderr and imports the others; serve --follow-claude-code ends at the end of its input,
// and at SIGTERM. Before, import never returned and the server ignored both.
func TestClaudeCodeFIFOCommands(t *testing.T) {
	dir, _ := withFIFO(t)
	data := newData(t)
	cmd := exec.Command(testbin.Path, "import", "--claude-code", dir)
	cmd.Env = append(os.Environ(), testEnv(data)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, cmd, 20*time.Second, "import --claude-code beside a FIFO"); err != nil {
		t.Errorf("import: %v\n%s", err, errb.String())
	}
	if !strings.HasPrefix(out.String(), "Imported 3 conversations and 27 messages from 4 transcripts") || !strings.Contains(errb.String(), "zz.jsonl") {
		t.Errorf("import said %q, and on stderr %q: want the 4 transcripts imported and the FIFO named", out.String(), errb.String())
	}

	config := t.TempDir()
	if err := os.Symlink(dir, filepath.Join(config, "projects")); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"end of input", "SIGTERM"} {
		cmd := exec.Command(testbin.Path, "serve", "--follow-claude-code")
		cmd.Env = append(os.Environ(), testEnv(newData(t), "CLAUDE_CONFIG_DIR="+config, "COMPASS_LOG=info")...)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		log := newProcessLog()
		cmd.Stderr = log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() }) // if await fails
		// The follower's first pass: past the FIFO, the other transcripts imported.
		log.await(t, 20*time.Second, "skipping a Claude Code transcript", "zz.jsonl")
		log.await(t, 20*time.Second, "imported from Claude Code", "messages=27")
		start := time.Now()
		if how == "SIGTERM" {
			cmd.Process.Signal(syscall.SIGTERM)
		} else {
			stdin.Close()
		}
		waitExit(t, cmd, 10*time.Second, "serve --follow-claude-code beside a FIFO, after its "+how)
		t.Logf("after its %s, the server ended in %v", how, time.Since(start).Round(time.Millisecond))
	}
}
