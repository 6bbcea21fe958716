package command

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

var formTokenRE = regexp.MustCompile(`name="form_token" value="([^"]+)"`)

// Issue 34's reproduction: a reviewed agent must not accept its own proposals. Before,
// serve --review offered list_documents sign_in; the agent fetched the link with a plain
// HTTP client (no Sec-Fetch-Site: signed in at once) and POSTed the proposal's accept form
// with no Origin, which http.CrossOriginProtection let through: the change landed
// "accepted by ana". Now sign_in hands out nothing in review mode (and tools/list doesn't
// offer it), and even with a sign-in link got the person's way (compass-mcp open), a
// program's POST is refused 403: it says no page sent it. The page's own form, as a
// browser sends it, still decides (e2e/browser's TestReviewAProposal clicks it in chromium).
func TestAReviewedAgentCannotDecide(t *testing.T) {
	t.Parallel()
	data := newData(t)
	c, page, logs := stdioWithPage(t, data, "127.0.0.1:0", "COMPASS_REVIEW=1")
	if page == "" {
		t.Fatalf("no page logged:\n%s", logs)
	}
	written := callTool(t, c, "write_document", map[string]any{"title": "Launch plan", "text": "Record the trailer.\n"})
	doc := regexp.MustCompile(`/document/([0-9A-Z]{26})\)`).FindStringSubmatch(written.text)
	if doc == nil {
		t.Fatalf("write_document: %s", written.text)
	}
	id := doc[1]
	proposed := callTool(t, c, "edit_document", map[string]any{"document": id, "old": "Record the trailer.", "new": "Record the trailer; accepted by nobody."})
	if !strings.HasPrefix(proposed.text, "Proposed [Launch plan](") {
		t.Fatalf("the agent's edit in review mode: %s", proposed.text)
	}

	// No sign-in link through the tools: refused, saying what the person runs instead.
	got := callTool(t, c, "list_documents", map[string]any{"sign_in": "/"})
	if !got.isError || signInLinkRE.MatchString(got.text) || strings.Contains(got.text, "signin?code") || !strings.Contains(got.text, "compass-mcp open") || !strings.Contains(got.text, "review") {
		t.Fatalf("list_documents sign_in in review mode: %v\n%s", got.isError, got.text)
	}
	for _, tl := range listTools(t, c) {
		if _, ok := tl.InputSchema.Properties["sign_in"]; ok {
			t.Errorf("tools/list offers %s's sign_in in review mode", tl.Name)
		}
	}

	// Nor does the page tell a browser nobody is signed in on to ask the agent for one.
	if resp, err := http.Get(page + "/"); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "ask-agent") || !strings.Contains(string(b), "compass-mcp open") {
			t.Fatalf("the sign-in page in review mode: %d\n%s", resp.StatusCode, b)
		}
	}

	// The link the person gets: compass-mcp open, in a terminal.
	open := exec.Command(testbin.Path, "open", "--browser=false")
	open.Env = append(os.Environ(), pageEnv(data)...)
	out, err := open.Output()
	if err != nil {
		t.Fatalf("compass-mcp open: %v", err)
	}
	link := signInLinkRE.FindString(string(out))
	if link == "" {
		t.Fatalf("compass-mcp open printed %q", out)
	}
	// A program that got hold of it: a plain HTTP client keeping cookies.
	jar, _ := cookiejar.New(nil)
	program := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := program.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	proposalPage := func() string {
		resp, err := program.Get(page + "/document/" + id + "/proposal/1")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the proposal's page: %d\n%s", resp.StatusCode, b)
		}
		return string(b)
	}
	m := formTokenRE.FindStringSubmatch(proposalPage())
	if m == nil {
		t.Fatal("the proposal's page has no form token")
	}
	accept := func(header ...string) int {
		req, _ := http.NewRequest(http.MethodPost, page+"/document/"+id+"/proposal/1/accept", strings.NewReader(url.Values{"form_token": {m[1]}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := program.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Even with the cookie and the page's own token: neither Sec-Fetch-Site nor Origin.
	if code := accept(); code != http.StatusForbidden {
		t.Fatalf("a program's accept with the person's cookie: %d, want 403", code)
	}
	if p := proposalPage(); !strings.Contains(p, "<strong>open</strong>") {
		t.Fatalf("after the refused accept, the proposal isn't open:\n%s", p)
	}
	if read := callTool(t, c, "read_document", map[string]any{"document": id}).text; !strings.Contains(read, "Record the trailer.\n") || strings.Contains(read, "accepted by nobody.\n") && !strings.Contains(read, "Open proposals") {
		t.Fatalf("after the refused accept, the document:\n%s", read)
	}
	// What a browser's form sends (headers and token): accepted, as before.
	if code := accept("Origin", page, "Sec-Fetch-Site", "same-origin"); code != http.StatusSeeOther {
		t.Fatalf("the page's own accept: %d, want 303", code)
	}
	if p := proposalPage(); !strings.Contains(p, "accepted") {
		t.Fatalf("after the page's accept:\n%s", p)
	}
}

// docs history prints a page of versions (500 unless --limit), newest first, and how to
// see the older ones: a history of 50,000 versions is read a page at a time (issue 34).
func TestHistoryIsPagedOnTheCommandLine(t *testing.T) {
	t.Parallel()
	data := newData(t)
	if out, err := cliResult(data, "entry\n", "docs", "save", "--new", "Log"); err != nil {
		t.Fatalf("save --new: %v\n%s", err, out)
	}
	for i := 2; i <= 7; i++ {
		if out, err := cliResult(data, strings.Repeat("entry\n", i), "docs", "save", "Log"); err != nil {
			t.Fatalf("save %d: %v\n%s", i, err, out)
		}
	}
	versions := regexp.MustCompile(`(?m)^  v(\d+) `)
	check := func(want []string, more string, args ...string) {
		t.Helper()
		out := cli(t, data, append([]string{"docs", "history", "Log"}, args...)...)
		var got []string
		for _, m := range versions.FindAllStringSubmatch(out, -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, " ") != strings.Join(want, " ") || more == "" && strings.Contains(out, "older") || more != "" && !strings.Contains(out, more) {
			t.Errorf("docs history Log %v: versions %v, want %v (and %q):\n%s", args, got, want, more, out)
		}
	}
	check([]string{"7", "6", "5", "4", "3", "2", "1"}, "")
	check([]string{"7", "6", "5"}, "4 versions older: docs history ", "--limit", "3")
	check([]string{"4", "3", "2"}, "1 version older: docs history ", "--limit", "3", "--before", "5")
	check([]string{"1"}, "", "--before", "2")
	if out, err := cliResult(data, "", "docs", "history", "Log", "--limit", "0"); err == nil {
		t.Errorf("--limit 0 was taken:\n%s", out)
	}
}
