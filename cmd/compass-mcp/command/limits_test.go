package command

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/mark3labs/mcp-go/client"
)

// A document of another space, named by id or by title, is not found by any of the five
// tools, and is not changed.
func TestAnotherSpaceIsNotFound(t *testing.T) {
	t.Parallel()
	data := newData(t)
	out := cli(t, data, "call", "--space", "launch", "write_document", "title=Secret plan", "text=launch only\n")
	id := ulidRE.FindString(out)
	if id == "" {
		t.Fatalf("no id in %q", out)
	}
	c := stdioClient(t, data, "--agent", "north")
	for _, name := range []string{id, "Secret plan", "secret", "SECRET PLAN"} {
		for _, s := range []step{
			{"read_document", map[string]any{"document": name}},
			{"read_document", map[string]any{"document": name, "version": 1}},
			{"write_document", map[string]any{"document": name, "text": "overwritten"}},
			{"append_document", map[string]any{"document": name, "text": "appended"}},
			{"edit_document", map[string]any{"document": name, "old": "launch only", "new": "edited"}},
		} {
			a := callTool(t, c, s.tool, s.args)
			want := fmt.Sprintf("No document %q in this space", name)
			if !a.isError || !strings.HasPrefix(a.text, want) {
				t.Errorf("%s %v = %q (isError %v), want an error starting %q", s.tool, s.args, a.text, a.isError, want)
			}
		}
	}
	if a := callTool(t, c, "list_documents", nil); a.text != "No documents in this space yet." {
		t.Errorf("list_documents = %q, want none", a.text)
	}
	// The title is free in this space: making one here is no clash.
	if a := callTool(t, c, "write_document", map[string]any{"title": "Secret plan", "text": "personal\n"}); a.isError {
		t.Errorf("write_document of the same title in another space: %q", a.text)
	}
	c.Close()
	db := kvtest.OpenData(t, data)
	var d docstore.Document
	v, err := view(t, docstore.New(db, "launch"), func(r *docstore.Reader) (v docstore.Version, err error) {
		d, v, err = r.Read(id, 0)
		return v, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != 1 || v.Text != "launch only\n" {
		t.Errorf("the other space's document changed: version %d, text %q", d.Version, v.Text)
	}
}

// Eight HTTP clients append to one document at once: every append answered "Saved" is in
// the text, and the versions are exactly one more than the appends.
func TestConcurrentAppendsOverHTTP(t *testing.T) {
	t.Parallel()
	data := newData(t)
	url, stop := httpServer(t, data, "--agent", "north")
	first := httpClient(t, url, "setup")
	callTool(t, first, "write_document", map[string]any{"title": "Log", "text": "# Log\n"})
	const clients, each = 8, 15
	var wg sync.WaitGroup
	saved := make(chan string, clients*each)
	for i := range clients {
		c := httpClient(t, url, fmt.Sprintf("client-%d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				line := fmt.Sprintf("entry %d.%d", i, j)
				req := map[string]any{"document": "Log", "text": line}
				if a := callTool(t, c, "append_document", req); !a.isError && strings.HasPrefix(a.text, "Saved ") {
					saved <- line
				} else {
					t.Errorf("append %q: %q", line, a.text)
				}
			}
		}()
	}
	wg.Wait()
	close(saved)
	a := callTool(t, first, "read_document", map[string]any{"document": "Log"})
	n := 0
	for line := range saved {
		n++
		if !strings.Contains(a.text, "\n"+line+"\n") {
			t.Errorf("%q was saved but is not in the text", line)
		}
	}
	if want := fmt.Sprintf("version %d of %d", n+1, n+1); !strings.Contains(a.text, want) {
		t.Errorf("after %d appends the header is %q, want %q", n, strings.SplitN(a.text, "\n", 2)[0], want)
	}
	stop()
	db := kvtest.OpenData(t, data)
	vs, err := view(t, docstore.New(db, "personal"), versionsOf("Log"))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if v.Number != len(vs)-i {
			t.Fatalf("versions are not 1..n without gaps: %d at %d", v.Number, i)
		}
	}
}

// Two servers on one data file (Claude Desktop and an editor on the default file) both
// work: each holds the file only while it uses it. Writes in turns and at once all land.
func TestTwoProcessesShareTheFile(t *testing.T) {
	t.Parallel()
	data := newData(t)
	a := stdioClient(t, data, "--agent", "desktop")
	b := stdioClient(t, data, "--agent", "editor")
	if r := callTool(t, a, "write_document", map[string]any{"title": "Shared", "text": "# Shared\n"}); r.isError {
		t.Fatal(r.text)
	}
	var want []string
	for i := range 5 {
		for name, c := range map[string]*client.Client{"a": a, "b": b} {
			line := fmt.Sprintf("turn %d by %s", i, name)
			if r := callTool(t, c, "append_document", map[string]any{"document": "Shared", "text": line}); r.isError {
				t.Fatalf("%s: %s", line, r.text)
			}
			want = append(want, line)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for name, c := range map[string]*client.Client{"a": a, "b": b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				line := fmt.Sprintf("at once %d by %s", i, name)
				if r := callTool(t, c, "append_document", map[string]any{"document": "Shared", "text": line}); r.isError {
					t.Errorf("%s: %s", line, r.text)
					continue
				}
				mu.Lock()
				want = append(want, line)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	got := callTool(t, b, "read_document", map[string]any{"document": "Shared"}).text
	for _, line := range want {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("%q was saved but is not in the text", line)
		}
	}
	if v := fmt.Sprintf("version %d of %d", len(want)+1, len(want)+1); !strings.Contains(got, v) {
		t.Errorf("after %d appends: %s", len(want), strings.SplitN(got, "\n", 2)[0])
	}
}

// When another process holds the file for longer than the lock timeout, a server says why:
// at start it stops, and in a session the call is an error result saying to try again.
//
// Each waits out the lock timeout (datafile.DefaultTimeout, 2 s), so the call and the
// server's start wait at the same time. (Open's wait, at a smaller scale: datafile's tests.)
func TestBusyFileSaysWhy(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "compass.db") // a file lock: bbolt only
	c := stdioClient(t, data)
	callTool(t, c, "write_document", map[string]any{"title": "Note", "text": "x\n"})
	holder, err := bolt.Open(data, 2*time.Second) // waits for the server to let go of the file when idle
	if err != nil {
		t.Fatalf("the idle server still holds the file: %v", err)
	}
	defer holder.Close()

	cmd := exec.Command(testbin.Path, "serve")
	cmd.Env = testEnv(data)
	start := time.Now()
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	r := callTool(t, c, "read_document", map[string]any{"document": "Note"})
	if !r.isError || !strings.Contains(r.text, "busy") {
		t.Errorf("a call while another process holds the file: %q (isError %v)", r.text, r.isError)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("a server starting on a held file hung for 30s")
	}
	if err == nil || !strings.Contains(string(out), "another compass-mcp process is using the data file") {
		t.Errorf("starting on a held file: err %v, said %q; want a clear refusal", err, out)
	}
	t.Logf("refused after %s: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(string(out)))
	holder.Close()
	if r := callTool(t, c, "read_document", map[string]any{"document": "Note"}); r.isError {
		t.Errorf("once the file is free again: %q", r.text)
	}
}

// Bad input gets a tool error that says what to do, and the server stays up.
func TestBadInputKeepsServerUp(t *testing.T) {
	t.Parallel()
	data := newData(t)
	url, _ := httpServer(t, data, "--agent", "north")
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			c := httpClient(t, url, "bad")
			if transport == "stdio" {
				c = stdioClient(t, newData(t), "--agent", "north")
			}
			huge := strings.Repeat("x", 32<<20)
			for _, s := range []struct {
				step
				want string
			}{
				{step{"write_document", map[string]any{"title": "Big", "text": huge}}, "a text is at most 8 MiB, this one is 32.0 MiB"},
				{step{"write_document", map[string]any{"title": "", "text": "x"}}, "needs a title"},
				{step{"write_document", map[string]any{"title": "A\x00B", "text": "x"}}, "That title won't do"},
				{step{"write_document", map[string]any{"title": "Nul text", "text": "a\x00b"}}, "can't have NUL bytes"},
				{step{"write_document", map[string]any{"title": true, "text": "x"}}, "title must be text"},
				{step{"append_document", map[string]any{"document": []any{"x"}, "text": "x"}}, "document must be text"},
				{step{"edit_document", map[string]any{"document": "x"}}, "needs old"},
				{step{"edit_document", map[string]any{"document": "x", "old": "", "new": "y"}}, "can't be empty"},
				{step{"list_documents", map[string]any{"limit": 1.5}}, "must be a whole number"},
				{step{"list_documents", map[string]any{"limit": 1e12}}, "far too large"},
			} {
				a := callTool(t, c, s.tool, s.args)
				if !a.isError || !strings.Contains(a.text, s.want) {
					t.Errorf("%s: %.200q (isError %v), want an error with %q", s.tool, a.text, a.isError, s.want)
				}
				if a := callTool(t, c, "list_documents", nil); a.isError {
					t.Fatalf("after %s the server answers %q", s.tool, a.text)
				}
			}
		})
	}
}
