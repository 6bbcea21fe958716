package filesync_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// team is a real `compass-mcp serve --http` on 127.0.0.1 over data (bbolt, or PostgreSQL
// with COMPASS_TEST_DATA), serving the space personal for ana.
type team struct {
	t    testing.TB
	data string
	url  string // http://127.0.0.1:PORT
	stop func()
	pid  int // the server's process
}

func newTeam(t testing.TB) *team {
	t.Helper()
	data := kvtest.Data(t, t.TempDir(), "compass.db")
	tm := &team{t: t, data: data}
	tm.start()
	return tm
}

// cli runs compass-mcp with args on the team's data, and returns its stdout.
func (tm *team) cli(args ...string) string {
	tm.t.Helper()
	cmd := exec.Command(testbin.Path, args...)
	cmd.Env = append(os.Environ(), "COMPASS_DATA="+tm.data, "COMPASS_SPACE=personal", "COMPASS_ME=ana", "COMPASS_LOG=warn")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		tm.t.Fatalf("compass-mcp %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// token makes a token with args (tokens add ...) and returns its secret.
func (tm *team) token(args ...string) string {
	tm.t.Helper()
	out := tm.cli(append([]string{"tokens", "add"}, args...)...)
	return strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
}

// start starts the server (again), on a new port.
func (tm *team) start() {
	t := tm.t
	cmd := exec.Command(testbin.Path, "serve", "--http", "127.0.0.1:0", "--web", "off")
	cmd.Env = append(os.Environ(), "COMPASS_DATA="+tm.data, "COMPASS_SPACE=personal", "COMPASS_ME=ana", "COMPASS_LOG=info")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tm.pid = cmd.Process.Pid
	urls := make(chan string, 1)
	var mu sync.Mutex
	var logs bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := regexp.MustCompile(`url=(http://\S+)/mcp`).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var once sync.Once
	tm.stop = func() {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
			if t.Failed() {
				mu.Lock()
				t.Logf("server log:\n%s", logs.String())
				mu.Unlock()
			}
		})
	}
	t.Cleanup(tm.stop)
	select {
	case tm.url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatal("the server said no URL within 30 s")
	}
}

// remoteFolder is a folder kept in step with the team's space over HTTP with token, and the
// space's store opened here for the agents' writes and the checks.
func remoteFolder(t *testing.T, tm *team, token string) *folder {
	t.Helper()
	s := docstore.New(kvtest.OpenData(t, tm.data), "personal")
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	say := &bytes.Buffer{}
	return &folder{t: t, ctx: context.Background(), s: s, dir: dir, say: say,
		y: &filesync.Sync{Space: &filesync.Remote{URL: tm.url, Token: token, Space: "personal"}, Dir: dir, Say: say}}
}

// TestSyncOverHTTP: a folder and a team server's space kept in step over HTTP with a
// person's token: files and documents both ways, an edit merged with an agent's, a clash
// kept as one proposal, a rename and a delete keeping identity; the versions are the
// token's person's, by agent:sync.
func TestSyncOverHTTP(t *testing.T) {
	tm := newTeam(t)
	f := remoteFolder(t, tm, tm.token("--for", "ana"))
	ctx := f.ctx
	f.put("Plans/Launch.md", "# Launch\none\ntwo\nthree\n")
	check[docstore.Saved](t)(f.s.Create(ctx, "Agent notes", "# Agent notes\nfrom north\n", docstore.KindWrite, north))
	rep := f.once()
	if rep.Created != 1 || rep.Written != 1 {
		t.Fatalf("first pass: %+v\nsaid: %s", rep, f.say)
	}
	if got := f.get("Agent notes.md"); got != "# Agent notes\nfrom north\n" {
		t.Errorf("the agent's document on disk: %q", got)
	}
	d, v := f.doc("Plans/Launch")
	if v.Text != "# Launch\none\ntwo\nthree\n" || v.Author != (docstore.Author{By: "agent:sync", For: "person:ana", Door: docstore.DoorSync}) {
		t.Errorf("the file's document: %q by %+v", v.Text, v.Author)
	}
	asked := &counting{}
	f.y.Space.(*filesync.Remote).Client = &http.Client{Transport: asked}
	if rep := f.once(); rep.Changed() {
		t.Errorf("a second pass changed %+v", rep)
	}
	if asked.n.Load() != 1 {
		t.Errorf("a pass with nothing changed made %d requests, want 1 (the listing)", asked.n.Load())
	}
	// One file's edit: the listing, and its save.
	f.put("Agent notes.md", "# Agent notes\nfrom north\nand ana\n")
	asked.n.Store(0)
	if rep := f.once(); rep.Saved != 1 || asked.n.Load() != 2 {
		t.Errorf("one file's edit: %+v in %d requests, want 2", rep, asked.n.Load())
	}

	// Both sides change different lines: merged, and written back.
	check[docstore.Saved](t)(f.s.Write(ctx, d.ID, "", "# Launch\none\ntwo\nthree\nagent's four\n", 0, north))
	f.put("Plans/Launch.md", "# Launch\nONE\ntwo\nthree\n")
	f.once()
	want := "# Launch\nONE\ntwo\nthree\nagent's four\n"
	if got := f.get("Plans/Launch.md"); got != want {
		t.Errorf("after a merge the file is %q, want %q", got, want)
	}
	if _, v := f.doc(d.ID); v.Text != want {
		t.Errorf("after a merge the document is %q", v.Text)
	}

	// Both change the same line: the file's lines saved, the agent's one proposal.
	check[docstore.Saved](t)(f.s.Write(ctx, d.ID, "", "# Launch\nONE\nagent's two\nthree\nagent's four\n", 0, north))
	f.put("Plans/Launch.md", "# Launch\nONE\nmy two\nthree\nagent's four\n")
	asked.n.Store(0)
	if rep := f.once(); rep.Clashes != 1 {
		t.Fatalf("a clash: %+v\nsaid: %s", rep, f.say)
	}
	// The listing, and one save that keeps both sides and answers the merged text (it was
	// five: the listing, a save refused as a clash, a save preferring the file's lines, a
	// proposal, and a read of the merged text).
	if asked.n.Load() != 2 {
		t.Errorf("a clash made %d requests, want 2", asked.n.Load())
	}
	if got := f.get("Plans/Launch.md"); strings.Contains(got, "agent's two") || !strings.Contains(got, "my two") {
		t.Errorf("after a clash the file is %q", got)
	}
	if !strings.Contains(f.say.String(), "proposal 1, waiting for your review") {
		t.Errorf("the clash was not said: %s", f.say)
	}
	if n := openProposals(t, f, d.ID); n != 1 {
		t.Errorf("%d open proposals, want 1", n)
	}

	// A rename keeps the document; a delete deletes it softly.
	if err := os.Rename(filepath.Join(f.dir, "Plans", "Launch.md"), filepath.Join(f.dir, "Launch plan.md")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(f.dir, "Agent notes.md"))
	f.y.AllowDeletes = true // one of two documents
	rep = f.once()
	if rep.Renamed != 1 || rep.Deleted != 1 {
		t.Fatalf("rename and delete: %+v\nsaid: %s", rep, f.say)
	}
	if got, _ := f.doc(d.ID); got.Title != "Launch plan" {
		t.Errorf("after a rename the title is %q", got.Title)
	}
	docs := check[[]docstore.Document](t)(docstore.ReadIn(ctx, f.s, (*docstore.Reader).Documents))
	for _, doc := range docs {
		if doc.Title == "Agent notes" && doc.Deleted == nil {
			t.Errorf("Agent notes was not deleted")
		}
	}
	if rep := f.once(); rep.Changed() {
		t.Errorf("a pass after changed %+v", rep)
	}
}

func openProposals(t *testing.T, f *folder, id string) int {
	t.Helper()
	n := 0
	f.s.View(f.ctx, func(r *docstore.Reader) error {
		_, ps, err := r.Proposals(id, 0, 1000)
		n = len(ps)
		return err
	})
	return n
}

// TestSyncOverHTTPRefusals: a wrong token is ErrUnauthorized, a space the token's person
// lacks is ErrForbidden, a server that is down is an error that deletes nothing, and a
// reviewed token's sync writes the space's changes to files but sends nothing.
func TestSyncOverHTTPRefusals(t *testing.T) {
	tm := newTeam(t)
	good := tm.token("--for", "ana")
	f := remoteFolder(t, tm, good)
	f.put("a.md", "a\n")
	f.put("b.md", "b\n")
	f.once()

	wrong := &filesync.Sync{Space: &filesync.Remote{URL: tm.url, Token: "cmp_wrong", Space: "personal"}, Dir: f.dir}
	if _, err := wrong.Once(f.ctx); !errors.Is(err, filesync.ErrUnauthorized) {
		t.Errorf("a wrong token: %v, want ErrUnauthorized", err)
	}
	other := &filesync.Sync{Space: &filesync.Remote{URL: tm.url, Token: good, Space: "team"}, Dir: filepath.Join(t.TempDir())}
	if _, err := other.Once(f.ctx); !errors.Is(err, filesync.ErrForbidden) {
		t.Errorf("a space ana lacks: %v, want ErrForbidden", err)
	}

	// The server is down: the pass fails, and nothing is deleted on either side.
	tm.stop()
	os.Remove(filepath.Join(f.dir, "a.md"))
	if _, err := f.y.Once(f.ctx); err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("a server down: %v", err)
	}
	if f.get("b.md") != "b\n" {
		t.Errorf("b.md is %q after a pass against a server that is down", f.get("b.md"))
	}
	tm.start()
	f.y.Space = &filesync.Remote{URL: tm.url, Token: good, Space: "personal"}
	f.y.AllowDeletes = true
	if rep := f.once(); rep.Deleted != 1 {
		t.Errorf("once the server is back, a.md's delete: %+v", rep)
	}

	// A reviewed token's sync: the space to the folder only.
	reviewed := tm.token("--for", "ana", "--review")
	r := &filesync.Sync{Space: &filesync.Remote{URL: tm.url, Token: reviewed, Space: "personal"}, Dir: f.dir, Say: f.say}
	_, bv := f.doc("b")
	check[docstore.Saved](t)(f.s.Write(f.ctx, "b", "", "b\nagent\n", 0, north))
	f.put("c.md", "new file\n")
	rep, err := r.Once(f.ctx)
	if err != nil {
		t.Fatalf("a reviewed token's pass: %v", err)
	}
	if rep.Written != 1 || rep.Created != 0 || f.get("b.md") != "b\nagent\n" {
		t.Errorf("a reviewed token's pass: %+v, b.md %q", rep, f.get("b.md"))
	}
	if !strings.Contains(f.say.String(), "c.md left as it is (this token may only read") {
		t.Errorf("the new file left alone was not said: %s", f.say)
	}
	f.put("b.md", "b\nmine\n")
	r.Once(f.ctx)
	if _, v := f.doc("b"); v.Text != "b\nagent\n" || v.Number != bv.Number+1 {
		t.Errorf("a reviewed token's sync changed the document: %q (version %d)", v.Text, v.Number)
	}
}

// TestSyncServerHostile: what the sync's endpoint answers requests no sync sends: a body
// over the server's limit, one that isn't JSON, an unknown operation, a version number
// that isn't one, a clash's text longer than any text may be (refused before it is merged),
// a read-only token's write, and a request without a token.
func TestSyncServerHostile(t *testing.T) {
	tm := newTeam(t)
	token := tm.token("--for", "ana")
	readOnly := tm.token("--for", "ana", "--read-only")
	send := func(method, path, tok string, body io.Reader) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, tm.url+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b)
	}
	huge := strings.Repeat("x", docstore.MaxText+1)
	for _, c := range []struct {
		name, method, path, token string
		body                      io.Reader
		status                    int
		says                      string
	}{
		{"no token", "GET", "/spaces/personal/sync/documents", "", nil, 401, "Bearer"},
		{"a body over the limit", "POST", "/spaces/personal/sync/create", token, io.LimitReader(zeros{}, 65<<20), 413, "too large"},
		{"not JSON", "POST", "/spaces/personal/sync/save", token, strings.NewReader("{nope"), 400, "not the JSON"},
		{"no such op", "POST", "/spaces/personal/sync/accept", token, strings.NewReader("{}"), 404, "no sync operation"},
		{"no number", "GET", "/spaces/personal/sync/version?id=x&n=99999999999999999999", token, nil, 400, "a version's number"},
		{"no document", "GET", "/spaces/personal/sync/version?id=nope&n=0", token, nil, 404, "not_found"},
		{"a huge save", "POST", "/spaces/personal/sync/save", token, strings.NewReader(`{"id":"x","base":1,"keep":true,"text":"` + huge + `"}`), 422, "bad_text"},
		{"the propose op is gone", "POST", "/spaces/personal/sync/propose", token, strings.NewReader(`{"clash":{"id":"x","base":1,"join":true}}`), 404, "no sync operation"},
		{"a read-only write", "POST", "/spaces/personal/sync/create", readOnly, strings.NewReader(`{"title":"t","text":"t\n"}`), 403, "read_only"},
	} {
		status, body := send(c.method, c.path, c.token, c.body)
		if status != c.status || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, status, clip(body), c.status, c.says)
		}
	}
	if status, body := send("GET", "/spaces/personal/sync/documents", readOnly, nil); status != 200 || !strings.Contains(body, `"writable":false`) {
		t.Errorf("a read-only token's listing: %d %s", status, clip(body))
	}

	// A save keeping both sides asks for no proposal in anyone's name: what it keeps is the
	// space's own text, by its own author.
	s := docstore.New(kvtest.OpenData(t, tm.data), "personal")
	d := check[docstore.Saved](t)(s.Create(context.Background(), "Plan", "one\n", docstore.KindWrite, north)).Document
	check[docstore.Saved](t)(s.Write(context.Background(), d.ID, "", "one\ntwo\n", 0, north))
	status, body := send("POST", "/spaces/personal/sync/save", token, strings.NewReader(`{"id":"`+d.ID+`","base":1,"keep":true,"text":"one\nmine\n"}`))
	if status != 200 {
		t.Fatalf("a save keeping both sides: %d %s", status, clip(body))
	}
	_, ps, _ := check[proposalsRead](t)(readProposals(s, d.ID)).split()
	if len(ps) != 1 || ps[0].Author.By != north.By {
		t.Errorf("the proposals: %+v, want north's one", ps)
	}
}

type proposalsRead struct {
	d  docstore.Document
	ps []docstore.Proposal
}

func (r proposalsRead) split() (docstore.Document, []docstore.Proposal, error) { return r.d, r.ps, nil }

func readProposals(s *docstore.Store, id string) (proposalsRead, error) {
	return docstore.ReadIn(context.Background(), s, func(r *docstore.Reader) (proposalsRead, error) {
		d, ps, err := r.Proposals(id, 0, 100)
		return proposalsRead{d, ps}, err
	})
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = 'a'
	}
	return len(b), nil
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// counting is an HTTP transport that counts the requests it sends.
type counting struct{ n atomic.Int64 }

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// A server on loopback with no token (the default for one person) takes the sync's requests
// for loopback names only: a web page that rebinds its own name to 127.0.0.1 sends that name
// as Host (and as Origin), which would otherwise let it list, read and write the space as
// the person. Before, its listing answered 200 and its create made a document.
func TestSyncServerRefusesARebindingPage(t *testing.T) {
	tm := newTeam(t) // no token made: the server admits the person on loopback
	send := func(method, path, host, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, tm.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
			req.Header.Set("Origin", "http://"+host)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b)
	}
	_, port, _ := strings.Cut(strings.TrimPrefix(tm.url, "http://"), ":")
	evil := "rebound.example:" + port
	if status, body := send("GET", "/spaces/personal/sync/documents", evil, ""); status != http.StatusForbidden || !strings.Contains(body, "loopback names only") {
		t.Errorf("a rebinding page's listing: %d %s, want 403", status, clip(body))
	}
	if status, body := send("POST", "/spaces/personal/sync/create", evil, `{"title":"Planted","text":"x\n"}`); status != http.StatusForbidden {
		t.Errorf("a rebinding page's create: %d %s, want 403", status, clip(body))
	}
	// The same requests by the loopback name the sync uses are answered.
	if status, body := send("GET", "/spaces/personal/sync/documents", "", ""); status != http.StatusOK {
		t.Errorf("the person's listing: %d %s, want 200", status, clip(body))
	}
	if got := tm.cli("docs", "list"); strings.Contains(got, "Planted") {
		t.Errorf("a rebinding page made a document:\n%s", got)
	}
}
