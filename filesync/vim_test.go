//go:build unix

package filesync_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/wait"
)

// TestSyncStaleVimBuffer: Roadmap.md open in a real vim (on a terminal: `script` gives
// it one); an agent edits the document and the sync writes the new version to the file;
// the person adds a line in vim and writes (vim warns that the file changed since it read
// it; the person answers y). Before, the sync saved the buffer (the old text plus the
// person's line) over the agent's edit, which was gone with nothing said. Now the save is
// merged from the version the buffer came from: both lines are in the document and the
// file, and the sync says why.
func TestSyncStaleVimBuffer(t *testing.T) {
	vim, err := exec.LookPath("vim")
	if err != nil {
		t.Skip("no vim here")
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) here to give vim a terminal")
	}
	f := newFolder(t)
	f.put("Roadmap.md", "# Roadmap\n\nship the beta\n\nlater: docs\n")
	// Written an hour ago, as far as vim can tell: the sync's write, later, changes the
	// file's time in whatever unit vim compares (whole seconds, in some builds).
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(f.dir, "Roadmap.md"), hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	f.once()
	id := f.titles()["Roadmap"]
	ready := filepath.Join(t.TempDir(), "ready")

	cmd := exec.Command(script, "-qfec", vim+" -N -u NONE -i NONE -n Roadmap.md", os.DevNull)
	cmd.Dir = f.dir
	cmd.Env = append(os.Environ(), "TERM=xterm")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // vim with it, killed as one
	keys, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	screen, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		shown bytes.Buffer
	)
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := screen.Read(b)
			mu.Lock()
			shown.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// waitFor waits (up to 30 s) until vim has shown one of says since from, and returns it.
	waitFor := func(from int, says ...string) string {
		t.Helper()
		said := ""
		if wait.For(30*time.Second, func() bool {
			mu.Lock()
			now := shown.String()[from:]
			mu.Unlock()
			for _, s := range says {
				if strings.Contains(now, s) {
					said = s
					return true
				}
			}
			return false
		}) {
			return said
		}
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("vim did not show any of %q in 30 s; it showed %q", says, shown.String()[from:])
		return ""
	}
	seen := func() int { mu.Lock(); defer mu.Unlock(); return shown.Len() }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ended := false
	defer func() {
		if !ended {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}()
	keys.Write([]byte(`:call writefile(["ready"], "` + ready + `")` + "\r"))
	wait.Until(t, 30*time.Second, "vim started (the file it writes once it reads keys)", func() bool {
		_, err := os.Stat(ready)
		return err == nil
	})

	// The agent's edit, written to the file while vim holds the old text.
	check[docstore.Saved](t)(f.s.Edit(f.ctx, id, "ship the beta", "ship the beta on Friday (agent)", north))
	if rep := f.once(); rep.Written != 1 {
		t.Fatalf("the agent's edit was not written: %+v", rep)
	}
	from := seen()
	keys.Write([]byte(":normal Goperson: review the plan\r:w\r"))
	// vim asks before it writes over a file changed since it read it (it drops what was
	// typed before the question), and most people answer y.
	if waitFor(from, "(y/n)", "written") == "(y/n)" {
		from = seen()
		keys.Write([]byte("y"))
		waitFor(from, "written")
	}
	keys.Write([]byte(":q!\r"))
	select {
	case <-exited:
		ended = true
	case <-time.After(30 * time.Second):
		t.Fatal("vim did not exit in 30 s")
	}
	got := f.get("Roadmap.md")
	if !strings.Contains(got, "person: review the plan") || strings.Contains(got, "(agent)") {
		t.Fatalf("vim's save: %q, want the old text with the person's line (the stale buffer)", got)
	}

	f.once()
	want := "# Roadmap\n\nship the beta on Friday (agent)\n\nlater: docs\nperson: review the plan\n"
	if _, v := f.doc(id); v.Text != want {
		t.Errorf("the document after the stale save: %q, want %q\nsaid: %s", v.Text, want, f.say)
	}
	if got := f.get("Roadmap.md"); got != want {
		t.Errorf("the file: %q", got)
	}
	if !strings.Contains(f.say.String(), "saved from an older text") {
		t.Errorf("the merge from the older version was not said: %s", f.say)
	}
}
