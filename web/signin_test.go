package web

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
)

// noRedirects is a browser that shows each answer rather than following it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// sessionCookie signs in with a fresh code (sending the cookies given) and returns the
// session cookie set, and its raw Set-Cookie header.
func sessionCookie(t *testing.T, site *Site, url string, db kv.DB, send ...*http.Cookie) (*http.Cookie, string) {
	t.Helper()
	ctx := t.Context()
	code, err := access.New(db).NewSignInCode(ctx, "ana", "personal", "/")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", url+"/signin?code="+code, nil)
	for _, c := range send {
		req.AddCookie(c)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == site.cookieName() {
			return c, resp.Header.Get("Set-Cookie")
		}
	}
	t.Fatalf("signing in: %d, no session cookie", resp.StatusCode)
	return nil, ""
}

// status is what the list page answers a browser with cookie c.
func status(t *testing.T, url string, c *http.Cookie) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/", nil)
	req.AddCookie(c)
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Behind a reverse proxy that ends TLS (--public-url https://...), the page is served over
// plain HTTP but reached over https: the cookie must still be Secure, or the browser would
// send it over http to the same host.
func TestSessionCookieSecureBehindHTTPS(t *testing.T) {
	ctx := t.Context()
	for _, secure := range []bool{false, true} {
		db, path := openStore(t)
		site, err := New(ctx, db, Config{Space: "personal", Me: "ana", Path: path, Secure: secure})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(site)
		_, raw := sessionCookie(t, site, srv.URL, db)
		if got := strings.Contains(raw, "; Secure"); got != secure {
			t.Errorf("Config.Secure %v: Set-Cookie %q", secure, raw)
		}
		for _, want := range []string{"HttpOnly", "SameSite=Lax"} {
			if !strings.Contains(raw, want) {
				t.Errorf("Set-Cookie %q lacks %s", raw, want)
			}
		}
		srv.Close()
		site.Close()
	}
}

// Signing in again on a browser ends the session it had: the old cookie signs nobody in.
func TestSignInEndsTheOldSession(t *testing.T) {
	f := newFixture(t)
	old, _ := sessionCookie(t, f.site, f.srv.URL, f.db)
	if got := status(t, f.srv.URL, old); got != http.StatusOK {
		t.Fatalf("first session: %d", got)
	}
	fresh, _ := sessionCookie(t, f.site, f.srv.URL, f.db, old)
	if fresh.Value == old.Value {
		t.Fatal("signing in again kept the cookie's value")
	}
	if got := status(t, f.srv.URL, old); got != http.StatusUnauthorized {
		t.Errorf("the old cookie after signing in again: %d, want 401", got)
	}
	if got := status(t, f.srv.URL, fresh); got != http.StatusOK {
		t.Errorf("the new cookie: %d", got)
	}
}

// A code older than access.CodeLife signs nobody in: the page asks the access room, whose
// clock it is (access's own tests check the rows are kept hashed).
func TestSignInCodeExpires(t *testing.T) {
	ctx := t.Context()
	db, path := openStore(t)
	var passed atomic.Int64 // the clock's lead on the wall's
	clock := func() time.Time { return time.Now().Add(time.Duration(passed.Load())) }
	members := access.New(db).WithOwner("personal", "ana").WithClock(clock)
	site, err := New(ctx, db, Config{Space: "personal", Me: "ana", Path: path, Access: members})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(site)
	t.Cleanup(func() { site.Close(); srv.Close() })
	code, err := members.NewSignInCode(ctx, "ana", "personal", "/")
	if err != nil {
		t.Fatal(err)
	}
	passed.Store(int64(access.CodeLife + time.Second))
	resp, err := noRedirects.Get(srv.URL + "/signin?code=" + code)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("an expired code: %d %v, want 403 and no cookie", resp.StatusCode, resp.Cookies())
	}
}

// The sign-in page that another front door (the OAuth consent) answers with is a page like
// the others: no other site may frame it.
func TestAskSignInHasThePageHeaders(t *testing.T) {
	f := newFixture(t)
	w := httptest.NewRecorder()
	f.site.AskSignIn(w, httptest.NewRequest("GET", "/authorize?client_id=x", nil))
	h := w.Result().Header
	if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" {
		t.Errorf("sign-in page for the consent: CSP %q, X-Frame-Options %q", h.Get("Content-Security-Policy"), h.Get("X-Frame-Options"))
	}
	resp := f.get(noRedirects, "/signin?code=nope")
	resp.Body.Close()
	if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("sign-in page: %v", resp.Header)
	}
}

// signInAs follows a sign-in link to code as a browser would that sends fetchSite as its
// Sec-Fetch-Site ("" for none sent) and the cookies given.
func signInAs(t *testing.T, url, code, fetchSite string, send ...*http.Cookie) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/signin?code="+code, nil)
	if fetchSite != "" {
		req.Header.Set("Sec-Fetch-Site", fetchSite)
	}
	for _, c := range send {
		req.AddCookie(c)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// cookieOf is the session cookie resp sets, or nil.
func cookieOf(site *Site, resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == site.cookieName() && c.MaxAge >= 0 && c.Value != "" {
			return c
		}
	}
	return nil
}

// Login CSRF: a member who has a sign-in link of their own (Mallory) makes another
// person's browser follow it from another site. The browser is not signed in as Mallory:
// the page asks, naming whom the link signs in (and whom the browser is signed in as), and
// only a click on its own form, posted from the page itself, signs in. A link followed
// from the terminal or the address bar (Sec-Fetch-Site: none) signs in at once, as before,
// unless it would replace another person signed in on that browser.
func TestSignInFromAnotherSiteAsksFirst(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	members := access.New(f.db)
	if _, err := members.AddMember(ctx, "personal", "mallory"); err != nil {
		t.Fatal(err)
	}
	codeFor := func(person string) string {
		code, err := members.NewSignInCode(ctx, person, "personal", "/")
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	ana, _ := sessionCookie(t, f.site, f.srv.URL, f.db)
	whoIs := func(c *http.Cookie) string {
		req, _ := http.NewRequest("GET", f.srv.URL+"/", nil)
		req.AddCookie(c)
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page := body(t, resp)
		if resp.StatusCode != http.StatusOK {
			return ""
		}
		return regexp.MustCompile(`<form class="who"[^>]*><span>([^<]*)</span>`).FindStringSubmatch(page)[1]
	}
	if got := whoIs(ana); got != "Ana" {
		t.Fatalf("signed in as %q, want Ana", got)
	}

	// From another site, on Ana's browser: a question, not a sign-in.
	mallory := codeFor("mallory")
	for _, site := range []string{"cross-site", "same-site"} {
		resp := signInAs(t, f.srv.URL, mallory, site, ana)
		page := body(t, resp)
		if resp.StatusCode != http.StatusOK || cookieOf(f.site, resp) != nil || !strings.Contains(page, "mallory") || !strings.Contains(page, "Ana") || !strings.Contains(page, `method="post" action="/signin"`) {
			t.Fatalf("Sec-Fetch-Site %s: %d, cookie %v:\n%s", site, resp.StatusCode, cookieOf(f.site, resp), page)
		}
		if got := whoIs(ana); got != "Ana" {
			t.Fatalf("after a %s sign-in link, the browser is %q's, want still Ana's", site, got)
		}
	}
	// The question's form posted from another site is refused; nothing changes.
	post := func(code, fetchSite string, c *http.Cookie) *http.Response {
		req, _ := http.NewRequest("POST", f.srv.URL+"/signin", strings.NewReader("code="+code))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", fetchSite)
		if c != nil {
			req.AddCookie(c)
		}
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post(mallory, "cross-site", ana); resp.StatusCode != http.StatusForbidden || cookieOf(f.site, resp) != nil {
		t.Fatalf("the question's form posted from another site: %d, cookie %v; want 403 and none", resp.StatusCode, cookieOf(f.site, resp))
	}
	if got := whoIs(ana); got != "Ana" {
		t.Fatalf("after a cross-site post, the browser is %q's", got)
	}
	// Posted from the page itself: the person chose; Mallory's code, unused so far, signs in.
	resp := post(mallory, "same-origin", ana)
	m := cookieOf(f.site, resp)
	if resp.StatusCode != http.StatusSeeOther || m == nil || whoIs(m) != "mallory" {
		t.Fatalf("the question answered on the page: %d, cookie %v", resp.StatusCode, m)
	}
	if got := whoIs(ana); got != "" {
		t.Fatalf("Ana's old cookie still signs in %q", got)
	}

	// From another site, on a browser nobody is signed in on: asked too (else its next
	// OAuth consent would grant the other person's account).
	resp = signInAs(t, f.srv.URL, codeFor("mallory"), "cross-site")
	if page := body(t, resp); resp.StatusCode != http.StatusOK || cookieOf(f.site, resp) != nil || !strings.Contains(page, `action="/signin"`) {
		t.Fatalf("cross-site, nobody signed in: %d, cookie %v", resp.StatusCode, cookieOf(f.site, resp))
	}
	// From the terminal (Sec-Fetch-Site: none), or a client that sends none: at once.
	for _, site := range []string{"none", ""} {
		resp = signInAs(t, f.srv.URL, codeFor("ana"), site)
		resp.Body.Close()
		if c := cookieOf(f.site, resp); resp.StatusCode != http.StatusSeeOther || c == nil || whoIs(c) != "Ana" {
			t.Fatalf("Sec-Fetch-Site %q: %d, cookie %v", site, resp.StatusCode, c)
		}
	}
	// From the terminal, but another person is signed in on the browser: asked first.
	resp = signInAs(t, f.srv.URL, codeFor("ana"), "none", m)
	if page := body(t, resp); resp.StatusCode != http.StatusOK || cookieOf(f.site, resp) != nil || !strings.Contains(page, "mallory") {
		t.Fatalf("replacing mallory from the terminal: %d, cookie %v\n%s", resp.StatusCode, cookieOf(f.site, resp), page)
	}
	// The same person again: at once.
	resp = signInAs(t, f.srv.URL, codeFor("mallory"), "none", m)
	resp.Body.Close()
	if c := cookieOf(f.site, resp); resp.StatusCode != http.StatusSeeOther || c == nil || whoIs(c) != "mallory" {
		t.Fatalf("mallory again: %d, cookie %v", resp.StatusCode, c)
	}
}

// Not signed in, on a one-person server on this machine (a loopback listener, no tokens),
// the page says to ask the agent for a link (a bundle's user has no terminal command to
// run); a team's server (with tokens) says to run compass-mcp open, as before.
func TestSignInPageSaysToAskTheAgent(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	page := func() string { return body(t, f.get(noRedirects, "/document/01JDXAAAAAAAAAAAAAAAAAAAAA")) }
	if got := page(); !strings.Contains(got, "Ask the agent") || !strings.Contains(got, "compass-mcp open 01JDXAAAAAAAAAAAAAAAAAAAAA") {
		t.Errorf("a one-person server's sign-in page:\n%s", got)
	}
	if _, _, err := access.New(f.db).AddToken(ctx, access.NewToken{Person: "ana"}); err != nil {
		t.Fatal(err)
	}
	if got := page(); strings.Contains(got, "Ask the agent") || !strings.Contains(got, "compass-mcp open") {
		t.Errorf("a server with tokens' sign-in page:\n%s", got)
	}
}
