package command

import (
	"bytes"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/embedtest"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

// TestIndexCommand runs compass-mcp index against a fake embeddings endpoint: it embeds
// the space's documents, a second run (another process) sends nothing again, --status
// asks the endpoint nothing, the key is sent as a bearer token but never shown, and an
// endpoint that is down fails index with a clear line while search stays lexical.
func TestIndexCommand(t *testing.T) {
	var keyOK atomic.Bool
	keyOK.Store(true)
	endpoint := embedtest.New(t, func(_ int, s string) []float64 { return []float64{1, float64(len(s)), 2} })
	endpoint.Answer(func(_ http.ResponseWriter, r *http.Request, _ []string) bool {
		if r.Header.Get("Authorization") != "Bearer k3y-never-shown" {
			keyOK.Store(false)
		}
		return false
	})
	requests, texts := &endpoint.Requests, &endpoint.Texts
	data := filepath.Join(t.TempDir(), "index.db")
	cli(t, data, "call", "write_document", "title=Copper", "text=A copper lantern by the door.")
	cli(t, data, "call", "write_document", "title=Bread", "text=Sourdough needs a starter.")
	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(testbin.Path, args...)
		cmd.Env = append(os.Environ(), testEnv(data, "COMPASS_EMBEDDINGS_KEY=k3y-never-shown", "COMPASS_LOG=info")...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if strings.Contains(out.String()+errb.String(), "k3y-never-shown") {
			t.Fatalf("compass-mcp %v showed the key:\n%s\n%s", args, out.String(), errb.String())
		}
		return out.String(), errb.String(), err
	}
	on := []string{"--embeddings", endpoint.URL(), "--embeddings-model", "fake"}
	out, stderr, err := run(append([]string{"index"}, on...)...)
	if err != nil || !strings.Contains(out, "2 of 2 documents embedded (2 passages), model fake, dimensions 3.") {
		t.Fatalf("index: %v\n%s\n%s", err, out, stderr)
	}
	if !strings.Contains(stderr, "2 of 2 documents") {
		t.Fatalf("index said no progress: %s", stderr)
	}
	if !keyOK.Load() {
		t.Fatal("the key was not sent as a bearer token")
	}
	sent := texts.Load()
	if out, stderr, err := run(append([]string{"index"}, on...)...); err != nil || !strings.Contains(out, "2 of 2") || texts.Load() != sent {
		t.Fatalf("index again (another process) sent %d more texts: %v\n%s%s", texts.Load()-sent, err, out, stderr)
	}
	asked := requests.Load()
	if out, _, err := run(append([]string{"index", "--status"}, on...)...); err != nil || !strings.Contains(out, "2 of 2") || requests.Load() != asked {
		t.Fatalf("index --status: %v (%d requests)\n%s", err, requests.Load()-asked, out)
	}
	// A search with the tier on: the query is embedded, and the answer is the search's.
	out, stderr, err = run(append([]string{"call", "list_documents", "query=copper lantern"}, on...)...)
	if err != nil || !strings.Contains(out, "Copper") || requests.Load() != asked+1 {
		t.Fatalf("search with meaning: %v (%d requests)\n%s%s", err, requests.Load()-asked, out, stderr)
	}
	// The endpoint down: index fails saying so; search answers by its words, a line on stderr.
	endpoint.Close()
	cli(t, data, "call", "write_document", "title=Cheese", "text=Cheese needs a cave.")
	_, stderr, err = run(append([]string{"index"}, on...)...)
	if err == nil || !strings.Contains(stderr, "the semantic index is not up to date") || !strings.Contains(stderr, "didn't answer") {
		t.Fatalf("index with the endpoint down: %v\n%s", err, stderr)
	}
	out, stderr, err = run(append([]string{"call", "list_documents", "query=copper"}, on...)...)
	if err != nil || !strings.Contains(out, "Copper") || strings.Count(stderr, "search is lexical only") != 1 {
		t.Fatalf("search with the endpoint down: %v\n%s\n%s", err, out, stderr)
	}
	if _, stderr, err := run("index"); err == nil || !strings.Contains(stderr, "index needs --embeddings") {
		t.Fatalf("index without an endpoint: %v %s", err, stderr)
	}
	if _, stderr, err := run("index", "--embeddings", "http://127.0.0.1:1/v1"); err == nil || !strings.Contains(stderr, "needs --embeddings-model") {
		t.Fatalf("index without a model: %v %s", err, stderr)
	}
}

// The page served beside the agents' server shows its semantic tier: on, with its model and
// endpoint, the space's index started by the agent's first search (how far it has got is
// web's TestMeaningOnThePage's); the key never shown.
func TestPageShowsTheSemanticTier(t *testing.T) {
	endpoint := embedtest.New(t, func(_ int, s string) []float64 { return []float64{1, float64(len(s)), 2} })
	data := newData(t)
	cli(t, data, "call", "write_document", "title=Copper", "text=A copper lantern by the door.")
	c, page, logs := stdioWithPage(t, data, "127.0.0.1:0", "COMPASS_EMBEDDINGS="+endpoint.URL(), "COMPASS_EMBEDDINGS_MODEL=fake", "COMPASS_EMBEDDINGS_KEY=k3y-never-shown")
	if page == "" {
		t.Fatalf("no page logged:\n%s", logs)
	}
	if a := callTool(t, c, "list_documents", map[string]any{"query": "copper lantern"}); !strings.Contains(a.text, "Copper") {
		t.Fatalf("the agent's search: %s", a.text)
	}
	open := exec.Command(testbin.Path, "open", "--browser=false")
	open.Env = append(os.Environ(), pageEnv(data)...)
	out, err := open.Output()
	if err != nil {
		t.Fatal(err)
	}
	jar := &http.Client{Timeout: 5 * time.Second}
	jar.Jar, _ = cookiejar.New(nil)
	resp, err := jar.Get(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = jar.Get(page + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := "Search by meaning is on for the agents' searches: model fake at " + endpoint.URL() + "."
	if !strings.Contains(string(body), want) || strings.Contains(string(body), "index starts when an agent first") || strings.Contains(string(body), "k3y-never-shown") {
		t.Fatalf("the page lacks %q (or shows the key):\n%s", want, body)
	}
}
