package command

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/transport"
	"github.com/mark3labs/mcp-go/client"
)

// pageEnv undoes what testbin sets for the other tests: the page on, default links.
func pageEnv(data string, extra ...string) []string {
	return append(testEnv(data, "COMPASS_WEB=", "COMPASS_LINK_BASE=", "COMPASS_LOG=info"), extra...)
}

var (
	pageInLog = regexp.MustCompile(`msg="serving the person's page" url=(http://[0-9.:]+)`)
	// pageNotServed is what a server logs when it serves no page of its own though one was
	// wanted: the data file's page is served by another process, or no port could be had.
	pageNotServed = regexp.MustCompile(`msg="the person's page (of this data file is already served|is not served)`)
)

// stdioWithPage starts compass-mcp serving stdio with the page on web, and returns the MCP
// client and the page's URL as logged ("" when it logs that it serves none, or for "off");
// env (NAME=value) is added to the server's environment.
func stdioWithPage(t *testing.T, data, web string, env ...string) (*client.Client, string, *lockedLog) {
	t.Helper()
	c, err := client.NewStdioMCPClient(testbin.Path, pageEnv(data, append([]string{"COMPASS_WEB=" + web}, env...)...), "serve")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	stderr, _ := client.GetStderr(c)
	logs := &lockedLog{}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.add(sc.Text())
			said, ok := "", pageNotServed.MatchString(sc.Text())
			if m := pageInLog.FindStringSubmatch(sc.Text()); m != nil {
				said, ok = m[1], true
			}
			if ok {
				select {
				case found <- said:
				default: // the first is the answer; stderr is still read
				}
			}
		}
	}()
	initialize(t, c, "test-client")
	if web == "off" {
		return c, "", logs
	}
	// The server settles the page, and logs how, before it serves stdio.
	select {
	case u := <-found:
		return c, u, logs
	case <-time.After(20 * time.Second):
		t.Fatalf("the server said nothing of the page within 20 s:\n%s", logs)
		return nil, "", nil
	}
}

var linkRE = regexp.MustCompile(`\]\(([^)]*)/document/[0-9A-Z]{26}\)`)

func linkBaseOf(t *testing.T, answer string) string {
	t.Helper()
	m := linkRE.FindStringSubmatch(answer)
	if m == nil {
		t.Fatalf("no document link in %q", answer)
	}
	return m[1]
}

// Beside stdio the page is served, and the tools' links lead to it; a second server on the
// same data file, finding the page's address taken, links to the first one's page.
func TestStdioServesThePageAndLinksToIt(t *testing.T) {
	t.Parallel()
	data := newData(t)
	c, page, logs := stdioWithPage(t, data, "127.0.0.1:0")
	if page == "" {
		t.Fatalf("no page logged:\n%s", logs)
	}
	answer := callTool(t, c, "write_document", map[string]any{"title": "Launch plan", "text": "one\n"}).text
	if base := linkBaseOf(t, answer); base != page {
		t.Fatalf("links go to %q, want the page %q", base, page)
	}
	// The same port for a second server: taken, so it links to the first's page.
	c2, page2, logs2 := stdioWithPage(t, data, strings.TrimPrefix(page, "http://"))
	if page2 != "" {
		t.Fatalf("the second server served a page of its own at %s:\n%s", page2, logs2)
	}
	if base := linkBaseOf(t, callTool(t, c2, "list_documents", nil).text); base != page {
		t.Fatalf("the second server links to %q, want the first's page %q\n%s", base, page, logs2)
	}
	// And the tools take the link they gave.
	link := regexp.MustCompile(`\((http://[^)]+)\)`).FindStringSubmatch(answer)[1]
	if got := callTool(t, c2, "read_document", map[string]any{"document": link}).text; !strings.Contains(got, "one") {
		t.Fatalf("read_document by its link: %s", got)
	}
	if got := callTool(t, c2, "read_document", map[string]any{"document": "compass://document/" + link[len(link)-26:]}).text; !strings.Contains(got, "version 1 of 1") {
		t.Fatalf("read_document by its URI: %s", got)
	}
}

// A server on another data file, whose page address is taken by the first file's page,
// never links to it: it serves its own page on a free port.
func TestAnotherStoreNeverLinksToTheWrongPage(t *testing.T) {
	t.Parallel()
	_, page, logs := stdioWithPage(t, newData(t), "127.0.0.1:0")
	if page == "" {
		t.Fatalf("no page logged:\n%s", logs)
	}
	c2, page2, logs2 := stdioWithPage(t, newData(t), strings.TrimPrefix(page, "http://"))
	if page2 == "" || page2 == page || !strings.Contains(logs2.String(), "taken by something else") {
		t.Fatalf("the other store's server: page %q (the first's is %q)\n%s", page2, page, logs2)
	}
	if base := linkBaseOf(t, callTool(t, c2, "write_document", map[string]any{"title": "B", "text": "b\n"}).text); base != page2 {
		t.Fatalf("the other store links to %q, want its own page %q", base, page2)
	}
}

// With no page anywhere, links are the documents' resource URIs; a port that can't be had
// at all is a warning, and stdio still serves.
func TestNoPageLinksAreURIs(t *testing.T) {
	t.Parallel()
	data := newData(t)
	c, _, logs := stdioWithPage(t, data, "off")
	if base := linkBaseOf(t, callTool(t, c, "write_document", map[string]any{"title": "A", "text": "a\n"}).text); base != "compass:/" {
		t.Fatalf("with no page, links begin %q, want compass://document/", base+"/document/")
	}
	if pageInLog.MatchString(logs.String()) {
		t.Fatalf("--web off served a page:\n%s", logs)
	}
}

// The default --web (127.0.0.1:7411) busy with something else: stdio serves all the same.
func TestBusyDefaultPortIsNoFailure(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:7411")
	if err != nil {
		// Someone else holds 7411: that is the very case, just not ours to hold.
		t.Logf("127.0.0.1:7411 is already taken (%v); testing with it as it is", err)
	} else {
		defer ln.Close()
	}
	data := newData(t)
	c, page, logs := stdioWithPage(t, data, "")
	if got := callTool(t, c, "list_documents", nil).text; got != "No documents in this space yet." {
		t.Fatalf("stdio beside a busy 7411: %q", got)
	}
	if page == "http://127.0.0.1:7411" || !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("a busy 7411: page %q, and no warning in the log:\n%s", page, logs)
	}
}

// With --http, the page is on the same address; a browser asking for /mcp is sent to it,
// and "compass-mcp open" prints a sign-in link that works.
func TestHTTPPageBesideMCP(t *testing.T) {
	t.Parallel()
	data := newData(t)
	cmd := exec.Command(testbin.Path, "serve", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), pageEnv(data)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := pageInLog.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var page string
	select {
	case page = <-found:
	case <-time.After(10 * time.Second):
		t.Fatal("no page logged")
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 5 * time.Second}
	req, _ := http.NewRequest(http.MethodGet, page+"/mcp", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("a browser at /mcp: %d %q, want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	cli(t, data, "call", "write_document", "title=Launch plan", "text=Record the trailer.")
	cmdOpen := exec.Command(testbin.Path, "open", "--browser=false", "Launch plan")
	cmdOpen.Env = append(os.Environ(), pageEnv(data)...)
	out, err := cmdOpen.Output()
	if err != nil {
		t.Fatal(err)
	}
	link := strings.TrimSpace(string(out))
	if !strings.HasPrefix(link, page+"/signin?code=") {
		t.Fatalf("open printed %q", link)
	}
	jarless := &http.Client{Timeout: 5 * time.Second, CheckRedirect: noRedirect.CheckRedirect}
	resp, err = jarless.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookie := resp.Header.Get("Set-Cookie")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/document/") || !strings.Contains(cookie, "HttpOnly") {
		t.Fatalf("the sign-in link: %d to %q, cookie %q", resp.StatusCode, resp.Header.Get("Location"), cookie)
	}
	req, _ = http.NewRequest(http.MethodGet, page+resp.Header.Get("Location"), nil)
	req.Header.Set("Cookie", strings.Split(cookie, ";")[0])
	resp, err = jarless.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "Record the trailer.") {
		t.Fatalf("the document after sign-in: %d\n%s", resp.StatusCode, body)
	}
}

// lockedLog is a server's log as read so far, safe to read while it grows.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(line + "\n")
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// "compass-mcp web" serves only the page, and prints a sign-in link that works; so does
// "compass-mcp open --serve" when no page is served for the file, its link leading to the
// document.
func TestWebServesOnlyThePage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"web"}, {"open", "--serve", "Launch plan"}} {
		t.Run(args[0], func(t *testing.T) { pageOnly(t, args) })
	}
}

func pageOnly(t *testing.T, args []string) {
	data := newData(t)
	cli(t, data, "call", "write_document", "title=Launch plan", "text=Record the trailer.")
	link := pageOnlyLink(t, data, append(args, "--web", "127.0.0.1:0", "--browser=false")...)
	jar := &http.Client{Timeout: 5 * time.Second}
	jar.Jar, _ = cookiejar.New(nil)
	resp, err := jar.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Launch plan") || args[0] == "open" && !strings.Contains(string(body), "Record the trailer.") {
		t.Fatalf("signed in through %s: %d\n%s", link, resp.StatusCode, body)
	}
	base := link[:strings.Index(link, "/signin")]
	resp, err = jar.Post(base+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusForbidden {
		t.Fatalf("compass-mcp web answers /mcp: %d", resp.StatusCode)
	}
}

// With --web off, a browser opening /mcp is told what it is, at once, not sent nowhere.
func TestBrowserAtMCPWithoutPage(t *testing.T) {
	t.Parallel()
	url, _ := httpServer(t, newData(t), "--web", "off")
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/html")
	c := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "MCP endpoint") {
		t.Fatalf("a browser at /mcp with the page off: %d %s", resp.StatusCode, body)
	}
}

// A copy of the data file (a backup) has the same store id, but is another file: a server
// on the copy doesn't link to the original's page.
// The copy is backup's, of a bbolt file, whatever the tests' store.
func TestACopyNeverLinksToTheOriginalsPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "a.db")
	c, page, logs := stdioWithPage(t, data, "127.0.0.1:0")
	if page == "" {
		t.Fatalf("no page logged:\n%s", logs)
	}
	callTool(t, c, "write_document", map[string]any{"title": "A", "text": "a\n"})
	cli(t, data, "backup", filepath.Join(dir, "copy.db"))
	c2, page2, logs2 := stdioWithPage(t, filepath.Join(dir, "copy.db"), strings.TrimPrefix(page, "http://"))
	if page2 == "" || page2 == page {
		t.Fatalf("the copy's server: page %q (the original's is %q)\n%s", page2, page, logs2)
	}
	if base := linkBaseOf(t, callTool(t, c2, "list_documents", nil).text); base != page2 {
		t.Fatalf("the copy links to %q, want its own page %q", base, page2)
	}
}

// Who may sign in is the space's members (the --for person always): a member's one-time
// link works, anyone else's is refused.
func TestMembersMaySignIn(t *testing.T) {
	t.Parallel()
	data := newData(t)
	cli(t, data, "members", "add", "personal", "ben")
	first := pageOnlyLink(t, data, "web", "--web", "127.0.0.1:0", "--browser=false")
	page := first[:strings.Index(first, "/signin")]
	for person, want := range map[string]int{"ben": http.StatusOK, "eve": http.StatusForbidden} {
		open := exec.Command(testbin.Path, "open", "--browser=false", "--for", person)
		open.Env = append(os.Environ(), pageEnv(data)...)
		out, err := open.Output()
		if err != nil {
			t.Fatal(err)
		}
		link := strings.TrimSpace(string(out))
		if !strings.HasPrefix(link, page+"/signin?code=") {
			t.Fatalf("open --for %s printed %q", person, link)
		}
		c := &http.Client{Timeout: 5 * time.Second}
		c.Jar, _ = cookiejar.New(nil)
		resp, err := c.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s signing in: %d, want %d", person, resp.StatusCode, want)
		}
	}
}

// pageOnlyLink starts compass-mcp with args ("web" or "open"), which serves the page in the
// foreground until the test ends, and returns the sign-in link it prints first.
func pageOnlyLink(t *testing.T, data string, args ...string) string {
	t.Helper()
	cmd := exec.Command(testbin.Path, args...)
	cmd.Env = append(os.Environ(), pageEnv(data)...)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	links := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			links <- sc.Text()
		}
	}()
	select {
	case link := <-links:
		return link
	case <-time.After(10 * time.Second):
		t.Fatalf("compass-mcp %s printed no sign-in link", args[0])
		return ""
	}
}

func TestWebAddress(t *testing.T) {
	if got, err := webAddress(":7411", false); err != nil || got != "127.0.0.1:7411" {
		t.Errorf(":7411 = %q, %v; want loopback", got, err)
	}
	if _, err := webAddress("0.0.0.0:7411", false); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("beyond loopback without tokens: %v", err)
	}
	if got, err := webAddress("0.0.0.0:7411", true); err != nil || got != "0.0.0.0:7411" {
		t.Errorf("beyond loopback with tokens: %q, %v", got, err)
	}
	if _, err := webAddress("7411", false); err == nil || !strings.Contains(err.Error(), "--web takes") {
		t.Errorf("no port: %v", err)
	}
}

// The page's own listener (beside stdio, and compass-mcp web) has the timeouts of --http's
// (transport.Harden): a connection that sends nothing, or a request slowly, doesn't stay
// open for good. (Before, only the header had a timeout: 200 connections that had each
// made one request were all still open 150 s later.)
func TestPageListenerHasTheHTTPTimeouts(t *testing.T) {
	c := config{data: newData(t), space: "personal", me: "ana", create: true}
	db, err := c.open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, stop := context.WithCancel(context.Background())
	p, err := startPage(ctx, &c, db, "127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { stop(); <-p.Done }()
	var want http.Server
	transport.Harden(&want)
	got := p.Server
	if got.ReadTimeout != want.ReadTimeout || got.IdleTimeout != want.IdleTimeout || got.ReadHeaderTimeout != want.ReadHeaderTimeout || got.WriteTimeout != want.WriteTimeout {
		t.Fatalf("the page's server: read %v, idle %v, header %v, write %v; --http's: read %v, idle %v, header %v, write %v",
			got.ReadTimeout, got.IdleTimeout, got.ReadHeaderTimeout, got.WriteTimeout, want.ReadTimeout, want.IdleTimeout, want.ReadHeaderTimeout, want.WriteTimeout)
	}
	// And it serves with them.
	resp, err := http.Get(p.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the page, not signed in: %d", resp.StatusCode)
	}
}

var signInLinkRE = regexp.MustCompile(`http://[0-9.:]+/signin\?code=[0-9a-f]{64}`)

// A person who installed the one-click bundle has no compass-mcp on their PATH to run
// "compass-mcp open" with: on their own one-person server (stdio, the page on loopback, no
// tokens) the agent hands them a one-time sign-in link when asked (list_documents
// sign_in), for --for only, leading to the document named; a server with tokens (a team's)
// hands none, and says how to sign in instead.
func TestAgentHandsASignInLink(t *testing.T) {
	data := newData(t)
	c, page, logs := stdioWithPage(t, data, "127.0.0.1:0")
	if page == "" {
		t.Fatalf("no page logged:\n%s", logs)
	}
	written := callTool(t, c, "write_document", map[string]any{"title": "Launch plan", "text": "Record the trailer.\n"}).text
	doc := regexp.MustCompile(`\((http://[^)]+/document/[0-9A-Z]{26})\)`).FindStringSubmatch(written)[1]
	got := callTool(t, c, "list_documents", map[string]any{"sign_in": doc})
	link := signInLinkRE.FindString(got.text)
	if got.isError || link == "" || !strings.HasPrefix(link, page+"/") || strings.Contains(got.text, "Documents here") {
		t.Fatalf("list_documents sign_in: %v\n%s", got.isError, got.text)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 5 * time.Second}
	resp, err := browser.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Record the trailer.") || !strings.HasSuffix(resp.Request.URL.Path, doc[len(doc)-26:]) {
		t.Fatalf("the agent's sign-in link: %d at %s\n%s", resp.StatusCode, resp.Request.URL, body)
	}
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(link); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the link used again: %v %v, want 403", resp.StatusCode, err)
	}
	// A team's server (tokens) hands none.
	cli(t, data, "tokens", "add", "--for", "ana")
	got = callTool(t, c, "list_documents", map[string]any{"sign_in": "/"})
	if !got.isError || signInLinkRE.MatchString(got.text) || !strings.Contains(got.text, "compass-mcp open") {
		t.Fatalf("with a token row: %v\n%s", got.isError, got.text)
	}
}

// A running server's page stays announced whoever else comes and goes: a second process
// serving a page of its own on the same data file (compass-mcp web) exits, and then open
// prints a link to the first one's page and exits, and a third server's answers link
// there. Before, the second's exit made the page forgotten: open served one of its own and
// never returned, and answers linked compass://. Open with no page says to give --serve.
func TestPageStaysAnnounced(t *testing.T) {
	data := newData(t)
	_, page, logs := stdioWithPage(t, data, "127.0.0.1:0")
	if page == "" {
		t.Fatalf("no page logged:\n%s", logs)
	}
	second := exec.Command(testbin.Path, "web", "--web", "127.0.0.1:0", "--browser=false")
	second.Env = append(os.Environ(), pageEnv(data)...)
	out, _ := second.StdoutPipe()
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	if !bufio.NewScanner(out).Scan() {
		t.Fatal("compass-mcp web printed no link")
	}
	second.Process.Signal(os.Interrupt)
	second.Wait()

	open := exec.Command(testbin.Path, "open", "--browser=false")
	open.Env = append(os.Environ(), pageEnv(data)...)
	var printed strings.Builder
	open.Stdout = &printed
	if err := open.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, open, 10*time.Second, "open after another page came and went"); err != nil {
		t.Errorf("open: %v", err)
	}
	if !strings.HasPrefix(printed.String(), page+"/signin?code=") {
		t.Errorf("open printed %q, want a link to the running page %s", printed.String(), page)
	}
	c3, _, _ := stdioWithPage(t, data, "off")
	if base := linkBaseOf(t, callTool(t, c3, "write_document", map[string]any{"title": "A", "text": "a\n"}).text); base != page {
		t.Errorf("a third server links to %q, want the running page %q", base, page)
	}

	alone := exec.Command(testbin.Path, "open", "--browser=false", "--web", "127.0.0.1:0")
	alone.Env = append(os.Environ(), pageEnv(newData(t))...)
	var stdout, errs strings.Builder
	alone.Stdout, alone.Stderr = &stdout, &errs
	if err := alone.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, alone, 10*time.Second, "open with no page"); err == nil || stdout.String() != "" || !strings.Contains(errs.String(), "--serve") {
		t.Errorf("open with no page: %v, %q, %q; want a failure saying --serve serves one", err, stdout.String(), errs.String())
	}
}
