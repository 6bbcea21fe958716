package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// The harness: the authorization server on a real store, served over loopback HTTP, its
// members and token rows a real access.Store on the same store (as the served binary has
// them), and the person's page played by a small honest stand-in (the page is package web's;
// cmd's tests drive the real one). A protected endpoint at /mcp and /spaces/{space}/mcp
// checks tokens the way the bearer middleware must: the row, then the resource binding,
// with the challenge.

// signIn is the stand-in's cookie; the person's page has its own.
const signInCookie = "test-person"

type page struct{}

func (page) SignedIn(r *http.Request) (string, bool) {
	c, err := r.Cookie(signInCookie)
	if err != nil || c.Value == "" {
		return "", false
	}
	return c.Value, true
}

func (page) AskSignIn(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintf(w, "sign in, then go back to %s", r.URL.RequestURI())
}

type harness struct {
	t      testing.TB
	srv    *Server
	url    string
	page   page
	access *access.Store // the members and the token rows
	clock  *clock
	http   *http.Client
}

type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

func newHarness(t testing.TB, tweak ...func(*Config)) *harness {
	t.Helper()
	ctx := t.Context()
	db := kvtest.Open(t)
	h := &harness{t: t, clock: &clock{}}
	h.access = access.New(db).WithClock(h.clock.now)
	for _, m := range [][2]string{{"launch", "ana"}, {"personal", "ana"}, {"launch", "ben"}} {
		if _, err := h.access.AddMember(ctx, m[0], m[1]); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	h.url = ts.URL
	c := Config{Issuer: ts.URL, DB: db, Page: h.page, Access: h.access, Now: h.clock.now}
	for _, f := range tweak {
		f(&c)
	}
	var err error
	if h.srv, err = New(ctx, c); err != nil {
		t.Fatal(err)
	}
	h.srv.Register(mux)
	protected := http.HandlerFunc(h.protected)
	mux.Handle("/mcp", protected)
	mux.Handle("/spaces/{space}/mcp", protected)
	h.http = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return h
}

// protected answers who the token is for, or refuses it as the bearer middleware must.
func (h *harness) protected(w http.ResponseWriter, r *http.Request) {
	secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		h.srv.Challenge(w, r.URL.Path, "")
		http.Error(w, "no token", http.StatusUnauthorized)
		return
	}
	p, ok := h.find(secret)
	if !ok || !h.srv.Allows(p.Resource, r.URL.Path) {
		h.srv.Challenge(w, r.URL.Path, "invalid_token")
		http.Error(w, "bad token", http.StatusUnauthorized)
		return
	}
	if sp := r.PathValue("space"); sp != "" && !p.MaySee(sp) {
		h.srv.Challenge(w, r.URL.Path, "insufficient_scope")
		http.Error(w, "not that space", http.StatusForbidden)
		return
	}
	fmt.Fprintf(w, "%s as %s", p.Person, p.Agent)
}

// find is what the token secret may do: its row's, if the row is not revoked or expired.
func (h *harness) find(secret string) (access.Principal, bool) {
	p, err := h.access.Verify(h.t.Context(), secret)
	return p, err == nil
}

// rows counts the token rows, revoked and expired ones too.
func (h *harness) rows() int {
	h.t.Helper()
	all, err := h.access.Tokens(h.t.Context(), "")
	if err != nil {
		h.t.Fatal(err)
	}
	return len(all)
}

// do sends a request and returns the status, the body and the response.
func (h *harness) do(req *http.Request) (int, string, *http.Response) {
	h.t.Helper()
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp
}

func (h *harness) register(redirects ...string) string {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"client_name": "Test Client", "redirect_uris": redirects, "token_endpoint_auth_method": "none"})
	req, _ := http.NewRequest("POST", h.url+"/register", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	status, out, _ := h.do(req)
	if status != http.StatusCreated {
		h.t.Fatalf("register: %d %s", status, out)
	}
	var m struct {
		ClientID string `json:"client_id"`
	}
	json.Unmarshal([]byte(out), &m)
	return m.ClientID
}

func pkce() (verifier, challenge string) {
	verifier = rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// authz is one authorization request's parameters.
type authz struct {
	client, redirect, challenge, method, state, resource string
}

func (a authz) query() string {
	v := url.Values{"response_type": {"code"}, "client_id": {a.client}, "redirect_uri": {a.redirect},
		"code_challenge": {a.challenge}, "code_challenge_method": {a.method}, "state": {a.state}}
	if a.method == "-" {
		v.Del("code_challenge_method")
	}
	if a.resource != "" {
		v.Set("resource", a.resource)
	}
	return v.Encode()
}

// authorize opens the consent page as person and returns the status, the page and the
// consent id on it.
func (h *harness) authorize(person string, a authz) (int, string, string, *http.Response) {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.url+"/authorize?"+a.query(), nil)
	if person != "" {
		req.AddCookie(&http.Cookie{Name: signInCookie, Value: person})
	}
	status, body, resp := h.do(req)
	id := ""
	if m := regexp.MustCompile(`name="consent" value="([^"]+)"`).FindStringSubmatch(body); m != nil {
		id = m[1]
	}
	return status, body, id, resp
}

// answer posts the consent form as person, from the server's own origin.
func (h *harness) answer(person string, form url.Values) (int, string, *http.Response) {
	h.t.Helper()
	req, _ := http.NewRequest("POST", h.url+"/consent", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", h.url)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(&http.Cookie{Name: signInCookie, Value: person})
	return h.do(req)
}

// code runs the authorization request as ana, allows it with spaces, and returns the code
// from the redirect (after checking the state came back).
func (h *harness) code(a authz, spaces ...string) string {
	h.t.Helper()
	status, body, id, _ := h.authorize("ana", a)
	if status != http.StatusOK || id == "" {
		h.t.Fatalf("consent page: %d %s", status, body)
	}
	status, body, resp := h.answer("ana", url.Values{"consent": {id}, "space": spaces, "agent": {"north"}, "allow": {"1"}})
	if status != http.StatusSeeOther {
		h.t.Fatalf("allow: %d %s", status, body)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if got := loc.Query().Get("state"); got != a.state {
		h.t.Fatalf("state came back as %q, sent %q", got, a.state)
	}
	return loc.Query().Get("code")
}

// tokenReq posts form to /token and returns the status and the decoded answer.
func (h *harness) tokenReq(form url.Values) (int, map[string]any) {
	h.t.Helper()
	req, _ := http.NewRequest("POST", h.url+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	status, body, _ := h.do(req)
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		h.t.Fatalf("token answer %d is not JSON: %s", status, body)
	}
	return status, m
}

func (h *harness) exchange(a authz, code, verifier string) (int, map[string]any) {
	return h.tokenReq(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"client_id": {a.client}, "redirect_uri": {a.redirect}})
}

func (h *harness) refresh(client, token string) (int, map[string]any) {
	return h.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {client}})
}

// call calls the protected endpoint path with an access token.
func (h *harness) call(path, access string) (int, string, *http.Response) {
	h.t.Helper()
	req, _ := http.NewRequest("POST", h.url+path, nil)
	if access != "" {
		req.Header.Set("Authorization", "Bearer "+access)
	}
	return h.do(req)
}

// loopbackClient registers a client with a loopback redirect and returns the request for it.
func (h *harness) loopbackClient() (authz, string) {
	redirect := "http://127.0.0.1:41000/callback"
	verifier, challenge := pkce()
	return authz{client: h.register(redirect), redirect: redirect, challenge: challenge, method: "S256", state: "st-" + rand.Text()}, verifier
}

func wantError(t *testing.T, status int, m map[string]any, wantStatus int, code string) {
	t.Helper()
	if status != wantStatus || m["error"] != code {
		t.Fatalf("got %d %v, want %d %s", status, m, wantStatus, code)
	}
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}
