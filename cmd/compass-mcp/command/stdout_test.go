package command

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

// Stdout is the stdio transport's while the binary serves: in every form a client's config
// may start it (no command, flags alone, serve), nothing but JSON-RPC messages reaches it,
// whatever the requests are, broken lines and arguments that spell a subcommand's name
// included. The subcommands that print to stdout (call, docs, backup, version, ...) are
// each a process of their own, chosen once from the arguments before anything is served.
func TestServingWritesOnlyProtocolToStdout(t *testing.T) {
	t.Parallel()
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stdout-test","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_document","arguments":{"title":"version","text":"--version\nhelp\n"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_document","arguments":{"document":"version"}}}`,
		`this line is not JSON: --version`,
		`{"jsonrpc":"2.0","id":5,"method":"version"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"docs","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":8,"method":"ping"}`,
	}
	const last = 8
	for _, args := range [][]string{nil, {"--space", "personal"}, {"serve"}, {"serve", "--agent", "north"}} {
		t.Run(fmt.Sprintf("%q", args), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(testbin.Path, args...)
			cmd.Env = append(os.Environ(), testEnv(newData(t))...)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := make(chan string, 64)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(stdout)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					lines <- sc.Text()
				}
			}()
			for _, r := range requests {
				if _, err := stdin.Write([]byte(r + "\n")); err != nil {
					t.Fatalf("writing %s: %v", r, err)
				}
			}
			answered := map[float64]bool{}
			var nullIDs int
			check := func(line string) {
				if strings.TrimSpace(line) == "" {
					return
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil || m["jsonrpc"] != "2.0" {
					t.Errorf("stdout has a line that is not a JSON-RPC message: %q", line)
					return
				}
				switch id := m["id"].(type) {
				case float64:
					answered[id] = true
				case nil:
					if _, ok := m["id"]; ok {
						nullIDs++ // the answer to the broken line
					} else if _, ok := m["method"]; !ok {
						t.Errorf("a message with neither an id nor a method: %q", line)
					}
				}
			}
			deadline := time.After(30 * time.Second)
		reading:
			for !answered[last] {
				select {
				case line, ok := <-lines:
					if !ok {
						break reading
					}
					check(line)
				case <-deadline:
					t.Error("no answer to the last request within 30s")
					break reading
				}
			}
			stdin.Close()
			for line := range lines { // what it writes until it ends
				check(line)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("the server ended with %v once stdin closed", err)
			}
			for id := 1.0; id <= last; id++ {
				if !answered[id] {
					t.Errorf("no answer to request %v", id)
				}
			}
			if nullIDs != 1 {
				t.Errorf("%d answers with a null id, want 1 (the parse error of the broken line)", nullIDs)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", stderr.String())
			}
		})
	}
	// --version among a server's flags is a flag serve doesn't have: said on stderr, stdout
	// untouched. Alone it is the version command, which serves nothing.
	cmd := exec.Command(testbin.Path, "--space", "personal", "--version")
	cmd.Env = append(os.Environ(), testEnv(newData(t))...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err == nil || out.Len() > 0 || !strings.Contains(errb.String(), "-version") {
		t.Errorf("--version among serve's flags: err %v, stdout %q, stderr %q; want a refusal on stderr alone", err, out.String(), errb.String())
	}
}
