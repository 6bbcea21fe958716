package web

import (
	"net/http"
	"net/http/httptest"
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
	code, err := access.New(db).NewSignInCode("ana", "personal", "/")
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
	for _, secure := range []bool{false, true} {
		db, path := openStore(t)
		site, err := New(db, Config{Space: "personal", Me: "ana", Path: path, Secure: secure})
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
	db, path := openStore(t)
	var passed atomic.Int64 // the clock's lead on the wall's
	clock := func() time.Time { return time.Now().Add(time.Duration(passed.Load())) }
	members := access.New(db).WithOwner("personal", "ana").WithClock(clock)
	site, err := New(db, Config{Space: "personal", Me: "ana", Path: path, Access: members})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(site)
	t.Cleanup(func() { site.Close(); srv.Close() })
	code, err := members.NewSignInCode("ana", "personal", "/")
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
