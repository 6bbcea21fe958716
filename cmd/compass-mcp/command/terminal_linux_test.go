//go:build linux

package command

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/stores"
)

// openPTY opens a pseudo-terminal (/dev/ptmx): the server's stdin is then a terminal, as
// when a person runs compass-mcp by hand.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal here: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// On a terminal, serve says what the README says it says: one line, what it serves, for
// whom and where, and the next step, compass-mcp install CLIENT.
func TestServeOnATerminal(t *testing.T) {
	data := newData(t)
	cli(t, data, "call", "write_document", "title=There", "text=x") // an existing store: no first-run line
	_, tty := openPTY(t)
	cmd := exec.Command(testbin.Path, "serve", "--web", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), testEnv(data, "COMPASS_LOG=info")...)
	cmd.Stdin = tty
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var said []string
	deadline := time.After(20 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break wait
			}
			said = append(said, l)
			if strings.Contains(l, "Ctrl-C stops") {
				select { // anything said right after it is part of what the person sees
				case l, ok := <-lines:
					if ok {
						said = append(said, l)
					}
				case <-time.After(500 * time.Millisecond):
				}
				break wait
			}
		case <-deadline:
			break wait
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(t, cmd, 10*time.Second, "serve on a terminal")
	if len(said) != 1 || !strings.Contains(said[0], "run compass-mcp install CLIENT") || !strings.Contains(said[0], "your page http://127.0.0.1:") ||
		!strings.Contains(said[0], stores.Redact(data)) || !strings.Contains(said[0], "for person:ana") { // a database's password is never shown
		t.Errorf("on a terminal, serve said %d lines:\n%s", len(said), strings.Join(said, "\n"))
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`On a terminal the server prints one line on stderr[^.]*\.[^.]*compass-mcp install CLIENT`).Match(readme) {
		t.Error("README.md doesn't say that the server prints one line naming compass-mcp install CLIENT")
	}
}
