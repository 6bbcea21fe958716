package web

import (
	"bufio"
	"context"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// fixture is a page on a real data file, served on loopback, with Ana as its person.
type fixture struct {
	t    *testing.T
	db   kv.DB
	docs *docstore.Store
	site *Site
	srv  *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, nil)
}

// newFixtureWith is newFixture with its Config changed by change (if not nil), given the
// store.
func newFixtureWith(t *testing.T, change func(kv.DB, *Config)) *fixture {
	t.Helper()
	ctx := t.Context()
	db, path := openStore(t)
	if err := spaces.SetName(ctx, db, "ana", "Ana"); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Space: "personal", Me: "ana", Path: path, Poll: 20 * time.Millisecond}
	if change != nil {
		change(db, &cfg)
	}
	site, err := New(ctx, db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(site)
	t.Cleanup(func() { site.Close(); srv.Close() })
	return &fixture{t: t, db: db, docs: docstore.New(db, "personal"), site: site, srv: srv}
}

// openStore returns a fresh store of whichever store the tests run on (kvtest.Open), and
// the path of its file for Config.Path: none on PostgreSQL, where the page then reads the
// documents listened to every Poll.
func openStore(t *testing.T) (kv.DB, string) {
	t.Helper()
	db := kvtest.Open(t)
	if f, ok := db.(interface{ Path() string }); ok {
		return db, f.Path()
	}
	return db, ""
}

var agent = docstore.Author{By: "agent:north", For: "person:ana"}

// openStream opens a page's event stream at url with c, until ctx ends, and fails t unless
// it is answered 200; the caller closes the body.
func openStream(t *testing.T, ctx context.Context, c *http.Client, url string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("events at %s: %d", url, resp.StatusCode)
	}
	return resp
}

// view gives what fn reads in one snapshot of s (docstore.Store.View), read afresh on each
// run of fn, as View may run it more than once.
func view[T any](t testing.TB, s *docstore.Store, fn func(*docstore.Reader) (T, error)) (T, error) {
	return docstore.ReadIn(t.Context(), s, fn)
}

// find and newest are the tests' most common reads, for view: the document name names,
// and its latest version.
func find(name string) func(*docstore.Reader) (docstore.Document, error) {
	return func(r *docstore.Reader) (docstore.Document, error) { return r.Find(name) }
}

func newest(name string) func(*docstore.Reader) (docstore.Version, error) {
	return func(r *docstore.Reader) (docstore.Version, error) {
		_, v, err := r.Read(name, 0)
		return v, err
	}
}

// client is a browser: cookies kept, redirects followed.
func (f *fixture) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

// signIn makes a one-time code as "compass-mcp open" does and follows its link.
func (f *fixture) signIn(c *http.Client, next string) *http.Response {
	f.t.Helper()
	code, err := access.New(f.db).NewSignInCode(f.t.Context(), "ana", "personal", next)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.get(c, "/signin?code="+code)
}

func (f *fixture) get(c *http.Client, path string) *http.Response {
	f.t.Helper()
	resp, err := c.Get(f.srv.URL + path)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

// post sends form to path as the page's own form would: from the page's origin, with the
// session's form token (unless form has one of its own).
func (f *fixture) post(c *http.Client, path string, form url.Values) *http.Response {
	f.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if !form.Has("form_token") {
		form.Set("form_token", tokenOf(c, f.srv.URL))
	}
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.srv.URL)
	resp, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

// tokenOf is the form token of the session c's cookie jar holds for the page at base, as
// the page's forms carry it; "" when c is signed in to none.
func tokenOf(c *http.Client, base string) string {
	if c.Jar == nil {
		return ""
	}
	u, _ := url.Parse(base)
	for _, k := range c.Jar.Cookies(u) {
		if strings.HasPrefix(k.Name, "compass_") {
			return formToken(k.Value)
		}
	}
	return ""
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSignInOnceAndOnlyThen(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	saved, err := f.docs.Create(ctx, "Launch plan", "Record the trailer.\n", docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := saved.Document.ID
	c := f.client()
	resp := f.get(c, "/document/"+id)
	if got := body(t, resp); resp.StatusCode != http.StatusUnauthorized || strings.Contains(got, "Record the trailer") || strings.Contains(got, "Launch plan") || strings.Contains(got, "personal") || !strings.Contains(got, "compass-mcp open "+id) {
		t.Fatalf("not signed in: got %d\n%s", resp.StatusCode, got)
	}
	code, err := access.New(f.db).NewSignInCode(ctx, "ana", "personal", "/document/"+id)
	if err != nil {
		t.Fatal(err)
	}
	resp = f.get(c, "/signin?code="+code)
	if got := body(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(got, "Record the trailer") || !strings.Contains(got, "saved by north for Ana") && !strings.Contains(got, "by north for Ana") {
		t.Fatalf("signed in: got %d\n%s", resp.StatusCode, got)
	}
	u, _ := url.Parse(f.srv.URL)
	var session *http.Cookie
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == f.site.cookieName() {
			session = ck
		}
	}
	if session == nil {
		t.Fatal("no session cookie")
	}
	// The code works once: another browser can't use it again.
	other := f.client()
	if resp := f.get(other, "/signin?code="+code); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a used code: got %d, want 403", resp.StatusCode)
	}
	if resp := f.get(other, "/"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("after a refused code: got %d, want 401", resp.StatusCode)
	}
}

func TestCookieAttributes(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	code, _ := access.New(f.db).NewSignInCode(ctx, "ana", "personal", "/")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp := f.get(c, "/signin?code="+code)
	raw := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Lax", "Max-Age=", "Path=/"} {
		if !strings.Contains(raw, want) {
			t.Errorf("Set-Cookie %q lacks %s", raw, want)
		}
	}
}

func TestCrossSitePostRefused(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	saved, _ := f.docs.Create(ctx, "Plan", "one\n", docstore.KindWrite, agent)
	c := f.client()
	f.signIn(c, "/").Body.Close()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/document/"+saved.Document.ID+"/delete", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site delete: got %d, want 403", resp.StatusCode)
	}
	if _, err := view(t, f.docs, find(saved.Document.ID)); err != nil {
		t.Fatalf("the document is gone after a refused post: %v", err)
	}
}

func TestHostCheckOnLoopback(t *testing.T) {
	f := newFixture(t)
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/", nil)
	req.Host = "evil.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a foreign Host on loopback: got %d, want 403", resp.StatusCode)
	}
}

func TestSaveFromOldBaseMerges(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	saved, _ := f.docs.Create(ctx, "Plan", "one\ntwo\nthree\nfour\nfive\n", docstore.KindWrite, agent)
	id := saved.Document.ID
	c := f.client()
	f.signIn(c, "/").Body.Close()
	if _, err := f.docs.Edit(ctx, id, "five", "FIVE", agent); err != nil {
		t.Fatal(err)
	}
	resp := f.post(c, "/document/"+id+"/edit", url.Values{"base": {"1"}, "text": {"ONE\r\ntwo\r\nthree\r\nfour\r\nfive\r\n"}})
	got := body(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(got, "merged") {
		t.Fatalf("save from an old base: %d\n%s", resp.StatusCode, got)
	}
	v, _ := view(t, f.docs, newest(id))
	if v.Text != "ONE\ntwo\nthree\nfour\nFIVE\n" || v.Kind != docstore.KindMerge || v.Author.By != "person:ana" || v.Author.For != "" {
		t.Fatalf("merged version: %+v", v)
	}
}

func TestClashKeepsTextThenMine(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	saved, _ := f.docs.Create(ctx, "Plan", "one\ntwo\n", docstore.KindWrite, agent)
	id := saved.Document.ID
	c := f.client()
	f.signIn(c, "/").Body.Close()
	f.docs.Edit(ctx, id, "one", "agent's one", agent)
	resp := f.post(c, "/document/"+id+"/edit", url.Values{"base": {"1"}, "text": {"ana's one\ntwo\n"}})
	got := body(t, resp)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(got, "ana&#39;s one\ntwo\n</textarea>") || !strings.Contains(got, `name="choose" value="mine"`) {
		t.Fatalf("clash: %d\n%s", resp.StatusCode, got)
	}
	if d, _ := view(t, f.docs, find(id)); d.Version != 2 {
		t.Fatalf("a clash saved version %d", d.Version)
	}
	resp = f.post(c, "/document/"+id+"/edit", url.Values{"base": {"1"}, "text": {"ana's one\ntwo\n"}, "choose": {"mine"}})
	resp.Body.Close()
	if v, _ := view(t, f.docs, newest(id)); v.Text != "ana's one\ntwo\n" {
		t.Fatalf("mine: %q", v.Text)
	}
}

var (
	tagRE     = regexp.MustCompile(`<[^>]*>`)
	eventRE   = regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	badTagRE  = regexp.MustCompile(`(?i)^</?(script|iframe|svg|object|embed|style|math|form|body|details|noscript)\b`)
	badLinkRE = regexp.MustCompile(`(?i)(href|src|action|formaction|data)\s*=\s*"?\s*(javascript|vbscript|data):`)
)

// The tags render makes have no script, no event attribute and no script URL; text that
// merely looks like them is escaped. (The browser tests check the DOM itself.)
func TestRenderRefusesScript(t *testing.T) {
	for _, md := range xssCorpus(t, "testdata/xss.json") {
		out := string(render(md))
		for _, tag := range tagRE.FindAllString(out, -1) {
			if eventRE.MatchString(tag) || badTagRE.MatchString(tag) || badLinkRE.MatchString(tag) {
				t.Errorf("render(%q) = %q: has the tag %s", md, out, tag)
			}
		}
	}
}

func TestDocumentLinksRewritten(t *testing.T) {
	out := string(render("See [the plan](http://127.0.0.1:9999/document/01JDXAAAAAAAAAAAAAAAAAAAAA) and [it](compass://document/01JDXAAAAAAAAAAAAAAAAAAAAB)."))
	for _, want := range []string{`href="/document/01JDXAAAAAAAAAAAAAAAAAAAAA"`, `href="/document/01JDXAAAAAAAAAAAAAAAAAAAAB"`} {
		if !strings.Contains(out, want) {
			t.Errorf("render: %s lacks %s", out, want)
		}
	}
}

func TestConversationsNeverShowPrivateSteps(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	th := threads.New(f.db, "personal")
	if _, err := th.Say(ctx, "pricing", "Pricing", threads.Message{From: "person:ana", To: "agent:north", Text: "We settled on 12 a month."}); err != nil {
		t.Fatal(err)
	}
	if _, err := th.Say(ctx, "pricing", "", threads.Message{From: "agent:north", Text: "list_documents → secret step", Private: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := th.Say(ctx, "pricing", "", threads.Message{From: "agent:north", Text: "Noted: 12 a month."}); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/").Body.Close()
	list := body(t, f.get(c, "/conversations"))
	page := body(t, f.get(c, "/conversation/pricing"))
	for _, got := range []string{list, page} {
		if strings.Contains(got, "secret step") {
			t.Fatalf("a private step is shown:\n%s", got)
		}
	}
	if !strings.Contains(list, "Pricing") || !strings.Contains(list, "2 messages") {
		t.Errorf("the list:\n%s", list)
	}
	if !strings.Contains(page, "<strong>Ana</strong> → north") || !strings.Contains(page, "Noted: 12 a month.") {
		t.Errorf("the conversation shows people by their names:\n%s", page)
	}
}

func TestRenameRestoreDeleteUndelete(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	saved, _ := f.docs.Create(ctx, "Plan", "one\n", docstore.KindWrite, agent)
	id := saved.Document.ID
	f.docs.Write(ctx, id, "", "two\n", 0, agent)
	c := f.client()
	f.signIn(c, "/").Body.Close()
	f.post(c, "/document/"+id+"/rename", url.Values{"title": {"Launch plan"}}).Body.Close()
	f.post(c, "/document/"+id+"/restore", url.Values{"n": {"1"}}).Body.Close()
	vs, _ := view(t, f.docs, func(r *docstore.Reader) ([]docstore.Version, error) {
		_, vs, err := r.Log(id)
		return vs, err
	})
	latest, _ := view(t, f.docs, newest(id))
	// Newest first.
	if len(vs) != 4 || vs[1].Kind != docstore.KindRename || vs[0].Kind != docstore.KindRestore || latest.Text != "one\n" || vs[0].Title != "Launch plan" || vs[0].Author.By != "person:ana" {
		t.Fatalf("after rename and restore: %+v", vs)
	}
	f.post(c, "/document/"+id+"/delete", nil).Body.Close()
	if got := body(t, f.get(c, "/")); strings.Contains(got, "Launch plan") {
		t.Fatalf("the list still shows a deleted document:\n%s", got)
	}
	if got := body(t, f.get(c, "/deleted")); !strings.Contains(got, "Launch plan") || !strings.Contains(got, "deleted by Ana") {
		t.Fatalf("the deleted list:\n%s", got)
	}
	f.post(c, "/document/"+id+"/undelete", nil).Body.Close()
	if got := body(t, f.get(c, "/")); !strings.Contains(got, "Launch plan") {
		t.Fatalf("undeleted, the list lacks it:\n%s", got)
	}
}

func TestListPages(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	for i := range PageSize + 3 {
		f.docs.Create(ctx, fmt.Sprintf("Doc %03d", i), "x\n", docstore.KindWrite, agent)
	}
	c := f.client()
	f.signIn(c, "/").Body.Close()
	first := body(t, f.get(c, "/"))
	if strings.Count(first, `class="title"`) != PageSize || !strings.Contains(first, "Doc 052") || strings.Contains(first, "Doc 002") {
		t.Fatalf("the first page:\n%s", first)
	}
	next := regexp.MustCompile(`href="/\?after=([0-9a-f]+)"`).FindStringSubmatch(first)
	if next == nil {
		t.Fatal("no link to the next page")
	}
	second := body(t, f.get(c, "/?after="+next[1]))
	if strings.Count(second, `class="title"`) != 3 || !strings.Contains(second, "Doc 000") {
		t.Fatalf("the second page:\n%s", second)
	}
	main := regexp.MustCompile(`(?s)<main>.*</main>`)
	// Every document has "doc": the one with both words comes first.
	title := regexp.MustCompile(`class="title"[^>]*>([^<]*)<`)
	if found := body(t, f.get(c, "/?q=doc+051")); len(title.FindAllStringSubmatch(found, -1)) == 0 || title.FindStringSubmatch(found)[1] != "Doc 051" {
		t.Fatalf("searching titles: %s", main.FindString(found))
	}
	saved, _ := f.docs.Create(ctx, "Trailer", "# Notes\n\nThe studio is booked for Tuesday.\n", docstore.KindWrite, agent)
	if found := body(t, f.get(c, "/?q=studio+tuesday")); strings.Count(found, `class="title"`) != 1 || !strings.Contains(found, "3: The <mark>studio</mark> is booked for <mark>Tuesday</mark>.") {
		t.Fatalf("searching texts: %s", main.FindString(found))
	}
	if found := body(t, f.get(c, "/?q="+url.QueryEscape("http://127.0.0.1:7411/document/"+saved.Document.ID))); strings.Count(found, `class="title"`) != 1 || !strings.Contains(found, ">Trailer<") {
		t.Fatalf("searching a link: %s", main.FindString(found))
	}
}

// An address names a document by its id only: title words in its place find nothing.
func TestAddressesNameByIDOnly(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	saved, _ := f.docs.Create(ctx, "Launch plan", "one\n", docstore.KindWrite, agent)
	c := f.client()
	f.signIn(c, "/").Body.Close()
	for _, path := range []string{"/document/launch/delete", "/document/launch/rename", "/document/launch/edit"} {
		resp := f.post(c, path, url.Values{"title": {"Gone"}, "base": {"1"}, "text": {"x\n"}})
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, resp.StatusCode)
		}
	}
	if d, err := view(t, f.docs, find(saved.Document.ID)); err != nil || d.Version != 1 || d.Title != "Launch plan" {
		t.Fatalf("after posts to title words: %+v %v", d, err)
	}
}

// Callers asking for one version at once get one rendering between them.
func TestRenderCacheRendersOnce(t *testing.T) {
	c := newRenderCache(1 << 20)
	md := markdownOf(20_000)
	var wg sync.WaitGroup
	got := make([]template.HTML, 8)
	for i := range got {
		wg.Go(func() { got[i], _ = c.version(context.Background(), "01M8PGKZD91FPDJN4QQFFR0WBP", 1, md) })
	}
	wg.Wait()
	for _, h := range got {
		if h != got[0] || h == "" {
			t.Fatal("callers got different HTML")
		}
	}
	if len(c.html) != 1 || len(c.pending) != 0 || c.bytes != len(got[0]) {
		t.Fatalf("cache: %d kept, %d pending, %d bytes", len(c.html), len(c.pending), c.bytes)
	}
	small := newRenderCache(100)
	if h, _ := small.version(context.Background(), "x", 1, md); h != got[0] || len(small.html) != 0 {
		t.Fatal("a version too large to keep is rendered and not kept")
	}
}

// An open page's event stream outlives the server's read timeout (which --http and the
// page's own listener set: transport.Harden): the timeout is for reading requests, and a
// stream is a request that lasts.
func TestEventsOutliveTheReadTimeout(t *testing.T) {
	ctx := t.Context()
	db, path := openStore(t)
	site, err := New(ctx, db, Config{Space: "personal", Me: "ana", Path: path, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(site)
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	t.Cleanup(func() { site.Close(); srv.Close() })
	f := &fixture{t: t, db: db, docs: docstore.New(db, "personal"), site: site, srv: srv}
	saved, err := f.docs.Create(ctx, "Plan", "one\n", docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/").Body.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp := openStream(t, ctx, c, srv.URL+"/document/"+saved.Document.ID+"/events?version=1")
	defer resp.Body.Close()
	opened := time.Now()
	readTimeoutPassed(t, srv)
	if _, err := f.docs.Append(ctx, saved.Document.ID, "two", agent); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `"version":2`) {
			t.Logf("version 2 came %v after the stream opened (read timeout %v)", time.Since(opened).Round(time.Millisecond), srv.Config.ReadTimeout)
			return
		}
	}
	t.Fatalf("the stream ended before version 2 came (%v), %v after it opened", sc.Err(), time.Since(opened).Round(time.Millisecond))
}

// readTimeoutPassed returns once the read timeout of a request srv began reading before
// the call has passed: it opens a connection of its own, sends the start of a request that
// never ends, and waits for the server to close it, at that connection's read timeout.
func readTimeoutPassed(t *testing.T, srv *httptest.Server) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, conn); err != nil {
		t.Fatalf("the server did not close a request that never ends within 10 s (its read timeout is %v): %v", srv.Config.ReadTimeout, err)
	}
}

// The history page reads versions' headers only (docstore's Log), never rebuilds their
// texts: for 200 versions of a 1 MiB document it allocates about a MiB (5 on PostgreSQL),
// not 200 MiB (it once rebuilt every version's text to show its number).
//
//	go test -run TestHistoryPageIsCheap -v ./web
func TestHistoryPageIsCheap(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	saved, err := f.docs.Create(ctx, "Notes", strings.Repeat("A line of the notes, long enough to count.\n", 1<<20/43), docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := saved.Document.ID
	for i := range 199 {
		if _, err := f.docs.Append(ctx, id, fmt.Sprintf("Entry %d of the log.", i), agent); err != nil {
			t.Fatal(err)
		}
	}
	c := f.client()
	f.signIn(c, "/").Body.Close()
	u, _ := url.Parse(f.srv.URL)
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/document/"+id+"/history", nil)
	for _, ck := range c.Jar.Cookies(u) {
		req.AddCookie(ck)
	}
	serve := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		f.site.ServeHTTP(w, req)
		return w
	}
	if w := serve(); w.Code != http.StatusOK || strings.Count(w.Body.String(), "/diff?from=") != 200 {
		t.Fatalf("history: %d, %d versions listed", w.Code, strings.Count(w.Body.String(), "/diff?from="))
	}
	// The least of five: the count is the process's, and other tests' goroutines may
	// still be winding down.
	allocated, took := uint64(1<<63), time.Duration(0)
	for range 5 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		serve()
		took = time.Since(start)
		runtime.ReadMemStats(&after)
		allocated = min(allocated, after.TotalAlloc-before.TotalAlloc)
	}
	t.Logf("the history of 200 versions of 1 MiB: %d KiB allocated, %v", allocated>>10, took)
	bound := uint64(4 << 20) // a version's size, and a little
	if kvtest.OnPostgres() {
		// A version's record holds its text (a delta, or one in 64 the whole text): bbolt
		// maps them, PostgreSQL sends them, so the four chunks' whole texts are read too.
		bound = 8 << 20
	}
	if allocated > bound {
		t.Errorf("the history page allocated %d KiB for 200 versions of 1 MiB; want at most %d MiB", allocated>>10, bound>>20)
	}
}

// A text that starts with its title as a heading shows the title once (the page's own
// header has it), and the list's preview doesn't repeat it either, nor show a heading's #.
func TestTitleShownOnce(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	plan, _ := f.docs.Create(ctx, "Launch plan", "# Launch plan\n\nRecord the trailer.\n", docstore.KindWrite, agent)
	other, _ := f.docs.Create(ctx, "Pricing", "# The price\n\nTwelve a month.\n", docstore.KindWrite, agent)
	f.docs.Create(ctx, "Notes", "## Weekly notes\n\nNothing yet.\n", docstore.KindWrite, agent)
	c := f.client()
	f.signIn(c, "/").Body.Close()
	h1 := regexp.MustCompile(`<h1[ >]`)
	if page := body(t, f.get(c, "/document/"+plan.Document.ID)); len(h1.FindAllString(page, -1)) != 1 || !strings.Contains(page, "Record the trailer.") {
		t.Errorf("a text that starts with its title: %d <h1>s, want 1:\n%s", len(h1.FindAllString(page, -1)), page)
	}
	if page := body(t, f.get(c, "/document/"+other.Document.ID)); len(h1.FindAllString(page, -1)) != 2 || !strings.Contains(page, "The price</h1>") {
		t.Errorf("a text that starts with another heading keeps it:\n%s", page)
	}
	list := body(t, f.get(c, "/"))
	for _, bad := range []string{">Launch plan</div>", "# Launch plan", "## Weekly notes", "# The price"} {
		if strings.Contains(list, bad) {
			t.Errorf("the list's previews show %q:\n%s", bad, list)
		}
	}
	for _, want := range []string{`<div class="opens">The price</div>`, `<div class="opens">Weekly notes</div>`} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks the preview %s:\n%s", want, list)
		}
	}
}

// Search results on the page mark the words found, and whatever else the line holds is
// text, escaped.
func TestSearchMarksTheWordsFound(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	f.docs.Create(ctx, "Trailer", "# Notes\n\nThe studio is booked for Tuesday.\n\n<b onclick=x>Studios</b> & the \"studio\" <script>alert(1)</script>\n", docstore.KindWrite, agent)
	f.docs.Create(ctx, "Plan", "夏の計画: 東京のスタジオ\n", docstore.KindWrite, agent)
	c := f.client()
	f.signIn(c, "/").Body.Close()
	found := body(t, f.get(c, "/?q=studio+tuesday"))
	for _, want := range []string{
		"3: The <mark>studio</mark> is booked for <mark>Tuesday</mark>.",
		"&lt;b onclick=x&gt;Studios&lt;/b&gt; &amp; the &#34;<mark>studio</mark>&#34; &lt;script&gt;alert(1)&lt;/script&gt;",
	} {
		if !strings.Contains(found, want) {
			t.Errorf("the results lack %s:\n%s", want, found)
		}
	}
	if strings.Contains(found, "<script>") || strings.Contains(found, "<b onclick") {
		t.Errorf("a line's HTML reached the page:\n%s", found)
	}
	if got := body(t, f.get(c, "/?q="+url.QueryEscape(`"東京"`))); !strings.Contains(got, "<mark>東</mark><mark>京</mark>") {
		t.Errorf("a phrase of Han characters isn't marked:\n%s", got)
	}
}

// A word no document has is searched for as the nearest word the documents have, and the
// page says so, as the tools' answer does; a word in quotes is searched for as written.
func TestSearchSaysWhatItSearchedInstead(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	f.docs.Create(ctx, "Trailer", "# Notes\n\nThe studio is booked for Tuesday.\n", docstore.KindWrite, agent)
	c := f.client()
	f.signIn(c, "/").Body.Close()
	found := body(t, f.get(c, "/?q=stuido+tuesday"))
	if want := "No document has “stuido”: searched for the nearest word “studio” instead."; !strings.Contains(found, want) {
		t.Errorf("the page doesn't say what it searched for instead (%s):\n%s", want, found)
	}
	if !strings.Contains(found, "3: The <mark>studio</mark> is booked for <mark>Tuesday</mark>.") {
		t.Errorf("the nearest word's line isn't found and marked:\n%s", found)
	}
	quoted := body(t, f.get(c, "/?q="+url.QueryEscape(`"stuido"`)))
	// A quoted word no document has is searched for unquoted (as the tools do), and then
	// corrected: the page says both.
	for _, want := range []string{"No document has the quoted words as written", "searched for the nearest word “studio” instead"} {
		if !strings.Contains(quoted, want) {
			t.Errorf("a quoted word no document has: the page lacks %q:\n%s", want, quoted)
		}
	}
	hostile := body(t, f.get(c, "/?q="+url.QueryEscape(`stuid<script>`)))
	if strings.Contains(hostile, "<script>") {
		t.Errorf("the query reached the page as HTML:\n%s", hostile)
	}
}
