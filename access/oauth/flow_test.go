package oauth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/spaces"
)

func TestMetadata(t *testing.T) {
	h := newHarness(t)
	get := func(path string) (int, map[string]any) {
		req, _ := http.NewRequest("GET", h.url+path, nil)
		status, body, _ := h.do(req)
		var m map[string]any
		json.Unmarshal([]byte(body), &m)
		return status, m
	}
	for path, resource := range map[string]string{
		"/.well-known/oauth-protected-resource":                   h.url + "/",
		"/.well-known/oauth-protected-resource/mcp":               h.url + "/mcp",
		"/.well-known/oauth-protected-resource/spaces/launch/mcp": h.url + "/spaces/launch/mcp",
	} {
		status, m := get(path)
		if status != 200 || m["resource"] != resource {
			t.Errorf("%s: %d %v, want resource %s", path, status, m, resource)
		}
		if as, _ := m["authorization_servers"].([]any); len(as) != 1 || as[0] != h.url {
			t.Errorf("%s: authorization_servers %v, want [%s]", path, m["authorization_servers"], h.url)
		}
	}
	if status, _ := get("/.well-known/oauth-protected-resource/spaces/launch/other"); status != 404 {
		t.Errorf("metadata of a path that is no endpoint: %d, want 404", status)
	}
	status, m := get("/.well-known/oauth-authorization-server")
	if status != 200 || m["issuer"] != h.url || m["authorization_endpoint"] != h.url+"/authorize" ||
		m["token_endpoint"] != h.url+"/token" || m["registration_endpoint"] != h.url+"/register" ||
		m["client_id_metadata_document_supported"] != true {
		t.Errorf("server metadata: %d %v", status, m)
	}
	if methods, _ := m["code_challenge_methods_supported"].([]any); len(methods) != 1 || methods[0] != "S256" {
		t.Errorf("code_challenge_methods_supported %v, want [S256]", m["code_challenge_methods_supported"])
	}
	// A 401 says where the metadata is, path-qualified for the endpoint asked.
	_, _, resp := h.call("/spaces/launch/mcp", "")
	want := `Bearer resource_metadata="` + h.url + `/.well-known/oauth-protected-resource/spaces/launch/mcp"`
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || got != want {
		t.Errorf("401: %d %q, want %q", resp.StatusCode, got, want)
	}
}

// The whole flow: register, consent, code, token, calls, refresh, and the refresh token
// rotating.
func TestFlow(t *testing.T) {
	h := newHarness(t)
	a, verifier := h.loopbackClient()
	a.resource = h.url + "/spaces/launch/mcp"
	code := h.code(a, "launch")
	status, tok := h.exchange(a, code, verifier)
	if status != 200 || tok["token_type"] != "Bearer" || !strings.HasPrefix(str(tok, "access_token"), "cmp_") || str(tok, "refresh_token") == "" {
		t.Fatalf("exchange: %d %v", status, tok)
	}
	if got := tok["expires_in"].(float64); got != 3600 {
		t.Errorf("expires_in %v, want 3600", got)
	}
	if status, body, _ := h.call("/spaces/launch/mcp", str(tok, "access_token")); status != 200 || body != "ana as north" {
		t.Fatalf("call: %d %s", status, body)
	}
	r, _ := h.find(str(tok, "access_token"))
	if r.Client != "Test Client (127.0.0.1:41000)" || r.Resource != h.url+"/spaces/launch/mcp" || len(r.Spaces) != 1 || r.ReadOnly {
		t.Errorf("row: %+v", r)
	}

	status, tok2 := h.refresh(a.client, str(tok, "refresh_token"))
	if status != 200 || str(tok2, "access_token") == str(tok, "access_token") || str(tok2, "refresh_token") == str(tok, "refresh_token") {
		t.Fatalf("refresh: %d %v", status, tok2)
	}
	if status, body, _ := h.call("/spaces/launch/mcp", str(tok2, "access_token")); status != 200 {
		t.Fatalf("call with the refreshed token: %d %s", status, body)
	}
	if status, _, _ := h.call("/spaces/launch/mcp", str(tok, "access_token")); status != 401 {
		t.Errorf("the access token before the refresh still works: %d", status)
	}
	status, tok3 := h.refresh(a.client, str(tok2, "refresh_token"))
	if status != 200 {
		t.Fatalf("second refresh: %d %v", status, tok3)
	}
	// One consent, one row: the person's list shows the connector once, however often it refreshes.
	if n := h.rows(); n != 1 {
		t.Errorf("%d token rows after two refreshes, want 1", n)
	}
}

func TestPKCE(t *testing.T) {
	h := newHarness(t)
	a, verifier := h.loopbackClient()

	t.Run("wrong verifier", func(t *testing.T) {
		code := h.code(a, "launch")
		other, _ := pkce()
		status, m := h.exchange(a, code, other)
		wantError(t, status, m, 400, "invalid_grant")
		// The code is burned by a wrong attempt: the right verifier comes too late.
		status, m = h.exchange(a, code, verifier)
		wantError(t, status, m, 400, "invalid_grant")
	})
	// RFC 7636 section 4.1: a verifier is 43 to 128 of [A-Za-z0-9-._~]; any other is refused
	// before it is hashed, even one whose hash would match.
	for name, v := range map[string]string{
		"short verifier":    strings.Repeat("a", 42),
		"long verifier":     strings.Repeat("a", 129),
		"verifier with '+'": strings.Repeat("a", 42) + "+",
		"verifier with ' '": strings.Repeat("a", 42) + " ",
	} {
		t.Run(name, func(t *testing.T) {
			sum := sha256.Sum256([]byte(v))
			b := a
			b.challenge = base64.RawURLEncoding.EncodeToString(sum[:])
			status, m := h.exchange(b, h.code(b, "launch"), v)
			wantError(t, status, m, 400, "invalid_grant")
		})
	}
	t.Run("missing verifier", func(t *testing.T) {
		code := h.code(a, "launch")
		status, m := h.exchange(a, code, "")
		wantError(t, status, m, 400, "invalid_request")
	})
	for name, b := range map[string]authz{
		"plain":           {method: "plain"},
		"no method":       {method: "-"},
		"no challenge":    {method: "S256", challenge: "-"},
		"short challenge": {method: "S256", challenge: "abc"},
		// An S256 challenge is a SHA-256 in base64url without padding: 43 of [A-Za-z0-9_-].
		"44 characters":       {method: "S256", challenge: strings.Repeat("A", 44)},
		"128 characters":      {method: "S256", challenge: strings.Repeat("A", 128)},
		"not base64url":       {method: "S256", challenge: strings.Repeat("A", 42) + "~"},
		"padded":              {method: "S256", challenge: strings.Repeat("A", 42) + "="},
		"43 with a dot":       {method: "S256", challenge: strings.Repeat("A", 42) + "."},
		"plain with verifier": {method: "plain", challenge: strings.Repeat("A", 43)},
	} {
		t.Run(name, func(t *testing.T) {
			req := a
			req.method = b.method
			if b.challenge == "-" {
				req.challenge = ""
			} else if b.challenge != "" {
				req.challenge = b.challenge
			}
			status, body, _, resp := h.authorize("ana", req)
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if status != http.StatusSeeOther || loc.Query().Get("error") != "invalid_request" || loc.Query().Get("state") != a.state {
				t.Fatalf("%d %s %v, want a redirect with invalid_request and the state", status, body, loc)
			}
		})
	}
}

func TestCodeSingleUseAndShortLived(t *testing.T) {
	h := newHarness(t)
	a, verifier := h.loopbackClient()

	t.Run("reused", func(t *testing.T) {
		code := h.code(a, "launch")
		status, tok := h.exchange(a, code, verifier)
		if status != 200 {
			t.Fatalf("first exchange: %d %v", status, tok)
		}
		status, m := h.exchange(a, code, verifier)
		wantError(t, status, m, 400, "invalid_grant")
		// What the first exchange gave is revoked: the code may have been stolen.
		if status, _, _ := h.call("/mcp", str(tok, "access_token")); status != 401 {
			t.Errorf("access token of a reused code: %d, want 401", status)
		}
		status, m = h.refresh(a.client, str(tok, "refresh_token"))
		wantError(t, status, m, 400, "invalid_grant")
	})
	t.Run("expired", func(t *testing.T) {
		code := h.code(a, "launch")
		h.clock.advance(61 * time.Second)
		status, m := h.exchange(a, code, verifier)
		wantError(t, status, m, 400, "invalid_grant")
		if !strings.Contains(str(m, "error_description"), "expired") {
			t.Errorf("description %q doesn't say expired", str(m, "error_description"))
		}
	})
	t.Run("another client", func(t *testing.T) {
		code := h.code(a, "launch")
		b := a
		b.client = h.register(a.redirect)
		status, m := h.exchange(b, code, verifier)
		wantError(t, status, m, 400, "invalid_grant")
	})
	t.Run("client_id by HTTP Basic, no secret", func(t *testing.T) {
		code := h.code(a, "launch")
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}, "redirect_uri": {a.redirect}}
		req, _ := http.NewRequest("POST", h.url+"/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(a.client, "")
		if status, body, _ := h.do(req); status != 200 || !strings.Contains(body, "access_token") {
			t.Errorf("%d %s", status, body)
		}
	})
	t.Run("no client_id", func(t *testing.T) {
		code := h.code(a, "launch")
		status, m := h.tokenReq(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}})
		wantError(t, status, m, 401, "invalid_client")
	})
	t.Run("redirect_uri left out", func(t *testing.T) {
		// OAuth 2.1 section 4.1.3: the authorization request named it, so the token request
		// must, identically.
		code := h.code(a, "launch")
		status, m := h.tokenReq(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}, "client_id": {a.client}})
		wantError(t, status, m, 400, "invalid_grant")
	})
	t.Run("another redirect", func(t *testing.T) {
		code := h.code(a, "launch")
		b := a
		b.redirect = "http://127.0.0.1:41000/other"
		status, m := h.exchange(b, code, verifier)
		wantError(t, status, m, 400, "invalid_grant")
	})
}

func TestRedirectURIs(t *testing.T) {
	h := newHarness(t)
	_, challenge := pkce()
	web := "https://app.example.com/callback"
	webClient := h.register(web, "http://127.0.0.1:9000/cb", "http://localhost/cb", "com.example.app:/cb")
	for _, tc := range []struct {
		redirect string
		ok       bool
	}{
		{web, true},
		{"https://app.example.com/callback/", false},
		{"https://app.example.com/callback?x=1", false},
		{"https://APP.example.com/callback", false},
		{"https://evil.example.com/callback", false},
		{"http://127.0.0.1:9000/cb", true},
		{"http://127.0.0.1:53817/cb", true}, // RFC 8252: any port on loopback
		{"http://127.0.0.1:53817/other", false},
		{"http://localhost:4444/cb", true},
		{"http://[::1]:9000/cb", false}, // another loopback host than registered
		{"com.example.app:/cb", true},
		{"com.example.app:/other", false},
		// Only the port may vary on loopback: not the fragment, scheme, query, user or host.
		{"http://127.0.0.1:53817/cb#frag", false},
		{"http://127.0.0.1:53817/cb#", false},
		{"https://127.0.0.1:9000/cb", false},
		{"http://127.0.0.1:53817/cb?", false},
		{"http://127.0.0.1:53817/cb?next=https://evil.example", false},
		{"http://evil@127.0.0.1:53817/cb", false},
		{"http://127.0.0.2:9000/cb", false},
		{"http://localhost.:9000/cb", false},
		{"http://127.0.0.1:53817/CB", false},
	} {
		status, body, id, resp := h.authorize("ana", authz{client: webClient, redirect: tc.redirect, challenge: challenge, method: "S256", state: "s"})
		if tc.ok && (status != 200 || id == "") {
			t.Errorf("%s: %d, want the consent page: %s", tc.redirect, status, body)
		}
		if !tc.ok && (status != 400 || resp.Header.Get("Location") != "" || !strings.Contains(body, "is not one the client registered")) {
			t.Errorf("%s: %d %q, want 400 with no redirect: %s", tc.redirect, status, resp.Header.Get("Location"), body)
		}
	}
	// What may not be registered at all.
	for _, bad := range []string{"http://app.example.com/cb", "javascript:alert(1)", "https://app.example.com/cb#frag", "/relative", "data:text/html,x", "file:///etc/passwd"} {
		body := `{"client_name":"x","redirect_uris":["` + bad + `"]}`
		req, _ := http.NewRequest("POST", h.url+"/register", strings.NewReader(body))
		status, out, _ := h.do(req)
		if status != 400 || !strings.Contains(out, "invalid_redirect_uri") {
			t.Errorf("registering %s: %d %s", bad, status, out)
		}
	}
	// An unknown client: a page, no redirect.
	status, _, _, resp := h.authorize("ana", authz{client: "cmc_nobody", redirect: web, challenge: challenge, method: "S256"})
	if status != 400 || resp.Header.Get("Location") != "" {
		t.Errorf("unknown client: %d %q", status, resp.Header.Get("Location"))
	}
}

func TestResourceBinding(t *testing.T) {
	h := newHarness(t)
	a, verifier := h.loopbackClient()

	t.Run("another server's resource is refused", func(t *testing.T) {
		b := a
		b.resource = "https://other.example.com/mcp"
		status, _, _, resp := h.authorize("ana", b)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if status != 303 || loc.Query().Get("error") != "invalid_target" {
			t.Fatalf("%d %v, want invalid_target", status, loc)
		}
	})
	t.Run("a token for one endpoint is refused at another", func(t *testing.T) {
		b := a
		b.resource = h.url + "/spaces/launch/mcp"
		_, tok := h.exchange(b, h.code(b, "launch", "personal"), verifier)
		if status, _, _ := h.call("/spaces/launch/mcp", str(tok, "access_token")); status != 200 {
			t.Fatalf("its own endpoint: %d", status)
		}
		for _, other := range []string{"/spaces/personal/mcp", "/mcp"} {
			status, _, resp := h.call(other, str(tok, "access_token"))
			if status != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
				t.Errorf("%s: %d %q, want 401 invalid_token", other, status, resp.Header.Get("WWW-Authenticate"))
			}
		}
	})
	t.Run("no resource binds the whole server", func(t *testing.T) {
		_, tok := h.exchange(a, h.code(a, "personal"), verifier)
		if status, body, _ := h.call("/spaces/personal/mcp", str(tok, "access_token")); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		if status, _, _ := h.call("/spaces/launch/mcp", str(tok, "access_token")); status != 403 {
			t.Errorf("a space not allowed: %d, want 403", status)
		}
	})
	t.Run("the token request names another resource", func(t *testing.T) {
		b := a
		b.resource = h.url + "/spaces/launch/mcp"
		code := h.code(b, "launch")
		status, m := h.tokenReq(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
			"client_id": {a.client}, "redirect_uri": {a.redirect}, "resource": {h.url + "/mcp"}})
		wantError(t, status, m, 400, "invalid_target")
	})
	t.Run("a token for this server is refused by another on the same file", func(t *testing.T) {
		other, err := New(t.Context(), Config{Issuer: "https://other.example.com", DB: h.srv.db, Page: h.page, Access: h.access})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []string{h.url + "/", h.url + "/mcp", h.url + "/spaces/launch/mcp"} {
			u, _ := url.Parse(r)
			if other.Allows(r, u.Path) {
				t.Errorf("https://other.example.com takes a token bound to %s", r)
			}
			if !h.srv.Allows(r, u.Path) {
				t.Errorf("%s refuses a token bound to itself (%s)", h.url, r)
			}
		}
		if h.srv.Allows(h.url+"/spaces/launch/mcp", "/spaces/launchpad/mcp") || h.srv.Allows(h.url+"/spaces/launch/mcp", "/spaces/launch/mcp/") {
			t.Error("a token bound to /spaces/launch/mcp is taken at a path that merely starts like it")
		}
	})
	t.Run("spelled differently, the same resource", func(t *testing.T) {
		b := a
		b.resource = strings.Replace(h.url, "http://", "HTTP://", 1) // and no trailing slash
		_, tok := h.exchange(b, h.code(b, "launch"), verifier)
		if r, ok := h.find(str(tok, "access_token")); !ok || r.Resource != h.url+"/" {
			t.Errorf("row %+v, want resource %s/", r, h.url)
		}
	})
}

func TestRefreshReuseEndsTheChain(t *testing.T) {
	h := newHarness(t)
	a, verifier := h.loopbackClient()
	_, tok := h.exchange(a, h.code(a, "launch"), verifier)
	status, tok2 := h.refresh(a.client, str(tok, "refresh_token"))
	if status != 200 {
		t.Fatalf("refresh: %d %v", status, tok2)
	}
	// The old refresh token again: someone has a copy. Everything of the chain ends.
	status, m := h.refresh(a.client, str(tok, "refresh_token"))
	wantError(t, status, m, 400, "invalid_grant")
	if status, _, _ := h.call("/mcp", str(tok2, "access_token")); status != 401 {
		t.Errorf("the chain's access token after reuse: %d, want 401", status)
	}
	status, m = h.refresh(a.client, str(tok2, "refresh_token"))
	wantError(t, status, m, 400, "invalid_grant")

	t.Run("another client's refresh token", func(t *testing.T) {
		_, tok := h.exchange(a, h.code(a, "launch"), verifier)
		status, m := h.refresh(h.register(a.redirect), str(tok, "refresh_token"))
		wantError(t, status, m, 400, "invalid_grant")
		// Refused, not used up: the right client still refreshes.
		if status, m := h.refresh(a.client, str(tok, "refresh_token")); status != 200 {
			t.Errorf("the right client after another's attempt: %d %v", status, m)
		}
	})
	t.Run("revoked row", func(t *testing.T) {
		_, tok := h.exchange(a, h.code(a, "launch"), verifier)
		r, _ := h.find(str(tok, "access_token"))
		if _, err := h.access.Revoke(t.Context(), r.TokenID); err != nil { // the person: tokens revoke ID
			t.Fatal(err)
		}
		status, m := h.refresh(a.client, str(tok, "refresh_token"))
		wantError(t, status, m, 400, "invalid_grant")
	})
	t.Run("expired", func(t *testing.T) {
		_, tok := h.exchange(a, h.code(a, "launch"), verifier)
		h.clock.advance(31 * 24 * time.Hour)
		status, m := h.refresh(a.client, str(tok, "refresh_token"))
		wantError(t, status, m, 400, "invalid_grant")
	})
}

func TestConsent(t *testing.T) {
	h := newHarness(t)
	a, _ := h.loopbackClient()

	t.Run("denied", func(t *testing.T) {
		_, _, id, _ := h.authorize("ana", a)
		status, _, resp := h.answer("ana", url.Values{"consent": {id}, "space": {"launch"}, "agent": {"north"}, "deny": {"1"}})
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if status != 303 || loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != a.state || loc.Query().Get("code") != "" {
			t.Fatalf("%d %v, want access_denied with the state", status, loc)
		}
		// One answer a page.
		status, _, _ = h.answer("ana", url.Values{"consent": {id}, "space": {"launch"}, "agent": {"north"}, "allow": {"1"}})
		if status != 400 {
			t.Errorf("allowing after denying: %d, want 400", status)
		}
	})
	t.Run("the page shows who asks", func(t *testing.T) {
		_, body, _, _ := h.authorize("ana", a)
		for _, want := range []string{"Test Client", "127.0.0.1:41000", `name="allow"`, `name="deny"`, `value="launch"`, `value="personal"`, `value="test-client"`} {
			if !strings.Contains(body, want) {
				t.Errorf("consent page lacks %q", want)
			}
		}
	})
	t.Run("the person is shown by name", func(t *testing.T) {
		// SPEC: wherever people are shown, names, not ids.
		if err := spaces.SetName(t.Context(), h.srv.db, "ana", "Ana Lima"); err != nil {
			t.Fatal(err)
		}
		_, body, _, resp := h.authorize("ana", a)
		if !strings.Contains(body, `<strong id="person">Ana Lima</strong>`) {
			t.Errorf("the consent page doesn't show ana's name: %s", body)
		}
		// The person's page's stylesheet, which its CSP lets load, and no frame may hold it.
		if !strings.Contains(body, `<link rel="stylesheet" href="/static/style.css">`) {
			t.Error("the consent page lacks the page's stylesheet")
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "style-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("headers: CSP %q, X-Frame-Options %q", csp, resp.Header.Get("X-Frame-Options"))
		}
		// A problem page too.
		_, _, _, resp = h.authorize("ana", authz{client: "cmc_nobody", redirect: a.redirect, challenge: a.challenge, method: "S256"})
		if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("problem page headers: %v", resp.Header)
		}
	})
	t.Run("not signed in", func(t *testing.T) {
		status, body, _, _ := h.authorize("", a)
		if status != 401 || !strings.Contains(body, "sign in, then go back to /authorize?") {
			t.Errorf("%d %s", status, body)
		}
	})
	t.Run("cross-site post", func(t *testing.T) {
		_, _, id, _ := h.authorize("ana", a)
		req, _ := http.NewRequest("POST", h.url+"/consent", strings.NewReader(url.Values{"consent": {id}, "space": {"launch"}, "agent": {"x"}, "allow": {"1"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example.com")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.AddCookie(&http.Cookie{Name: signInCookie, Value: "ana"})
		if status, _, resp := h.do(req); status != 403 || resp.Header.Get("Location") != "" {
			t.Errorf("cross-site post: %d, want 403", status)
		}
	})
	t.Run("a program's post with the person's cookie", func(t *testing.T) {
		// Issue 34: a plain HTTP client holding the person's cookie (an agent that was handed
		// a sign-in link) sends neither Sec-Fetch-Site nor Origin, which
		// http.CrossOriginProtection lets through. Allow would grant it the person's account.
		_, _, id, _ := h.authorize("ana", a)
		req, _ := http.NewRequest("POST", h.url+"/consent", strings.NewReader(url.Values{"consent": {id}, "space": {"launch"}, "agent": {"x"}, "allow": {"1"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: signInCookie, Value: "ana"})
		if status, body, resp := h.do(req); status != 403 || resp.Header.Get("Location") != "" || !strings.Contains(body, "Refused") {
			t.Errorf("a post with neither header: %d, want 403:\n%s", status, body)
		}
		// The same answer from the page: it still stands (the refusal used nothing up).
		if status, body, _ := h.answer("ana", url.Values{"consent": {id}, "space": {"launch"}, "agent": {"x"}, "deny": {"1"}}); status != http.StatusSeeOther {
			t.Errorf("the page's own answer after the refusal: %d %s", status, body)
		}
	})
	t.Run("another person's page", func(t *testing.T) {
		_, _, id, _ := h.authorize("ana", a)
		status, _, resp := h.answer("ben", url.Values{"consent": {id}, "space": {"launch"}, "agent": {"x"}, "allow": {"1"}})
		if status != 400 || resp.Header.Get("Location") != "" {
			t.Errorf("ben answering ana's page: %d", status)
		}
	})
	t.Run("a space the person is not in", func(t *testing.T) {
		_, _, id, _ := h.authorize("ben", a)
		status, body, _ := h.answer("ben", url.Values{"consent": {id}, "space": {"personal"}, "agent": {"x"}, "allow": {"1"}})
		if status != 400 || !strings.Contains(body, "not a member of &#34;personal&#34;") {
			t.Errorf("%d %s", status, body)
		}
	})
	t.Run("the resource's space must be allowed", func(t *testing.T) {
		b := a
		b.resource = h.url + "/spaces/personal/mcp"
		_, body, id, _ := h.authorize("ana", b)
		if !strings.Contains(body, `value="personal" checked`) {
			t.Errorf("the resource's space is not checked: %s", body)
		}
		status, body, _ := h.answer("ana", url.Values{"consent": {id}, "space": {"launch"}, "agent": {"x"}, "allow": {"1"}})
		if status != 400 || !strings.Contains(body, "asks for the space") {
			t.Errorf("%d %s", status, body)
		}
	})
	t.Run("read only and the agent's name", func(t *testing.T) {
		a, verifier := h.loopbackClient()
		_, _, id, _ := h.authorize("ana", a)
		_, _, resp := h.answer("ana", url.Values{"consent": {id}, "space": {"launch", "personal"}, "agent": {"claude"}, "read_only": {"1"}, "allow": {"1"}})
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if loc.Query().Get("iss") != h.url {
			t.Errorf("iss %q, want %s", loc.Query().Get("iss"), h.url)
		}
		_, tok := h.exchange(a, loc.Query().Get("code"), verifier)
		r, ok := h.find(str(tok, "access_token"))
		if !ok || !r.ReadOnly || r.Agent != "claude" || r.Person != "ana" || strings.Join(r.Spaces, ",") != "launch,personal" {
			t.Errorf("row %+v", r)
		}
	})
	t.Run("review: the agent's changes are proposals, across refreshes", func(t *testing.T) {
		a, verifier := h.loopbackClient()
		_, page, id, _ := h.authorize("ana", a)
		if !strings.Contains(page, `name="review" value="1"`) {
			t.Errorf("the consent page offers no review: %s", page)
		}
		_, _, resp := h.answer("ana", url.Values{"consent": {id}, "space": {"launch"}, "agent": {"claude"}, "review": {"1"}, "allow": {"1"}})
		loc, _ := url.Parse(resp.Header.Get("Location"))
		_, tok := h.exchange(a, loc.Query().Get("code"), verifier)
		if r, ok := h.find(str(tok, "access_token")); !ok || !r.Review || r.ReadOnly {
			t.Errorf("row %+v", r)
		}
		_, tok2 := h.refresh(a.client, str(tok, "refresh_token"))
		if r, ok := h.find(str(tok2, "access_token")); !ok || !r.Review {
			t.Errorf("after a refresh, row %+v", r)
		}
	})
	t.Run("an agent's name with a space", func(t *testing.T) {
		_, _, id, _ := h.authorize("ana", a)
		status, body, _ := h.answer("ana", url.Values{"consent": {id}, "space": {"launch"}, "agent": {"my agent"}, "allow": {"1"}})
		if status != 400 || !strings.Contains(body, "one word") || !strings.Contains(body, `value="my agent"`) {
			t.Errorf("%d %s", status, body)
		}
	})
	t.Run("expired page", func(t *testing.T) {
		_, _, id, _ := h.authorize("ana", a)
		h.clock.advance(11 * time.Minute)
		status, _, _ := h.answer("ana", url.Values{"consent": {id}, "space": {"launch"}, "agent": {"x"}, "allow": {"1"}})
		if status != 400 {
			t.Errorf("%d, want 400", status)
		}
	})
}

// A refresh over loopback HTTP: two transactions on the data file (use up the old token;
// keep the new one), each synced, around the renewing of the row.
//
// go test -run '^$' -bench Refresh ./oauth
func BenchmarkRefresh(b *testing.B) {
	h := newHarness(b)
	a, verifier := h.loopbackClient()
	_, tok := h.exchange(a, h.code(a, "launch"), verifier)
	rt := str(tok, "refresh_token")
	for b.Loop() {
		status, m := h.refresh(a.client, rt)
		if status != 200 {
			b.Fatalf("%d %v", status, m)
		}
		rt = str(m, "refresh_token")
	}
}

// Without a person's page beside the server, nobody can sign in to allow an app: the
// authorization request says so, rather than ask for a sign-in no one can give.
func TestNoPageNoConsent(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Page = nil })
	a, _ := h.loopbackClient()
	status, body, id, _ := h.authorize("ana", a)
	if status != http.StatusServiceUnavailable || id != "" || !strings.Contains(body, "does not serve beside /mcp") {
		t.Errorf("authorizing with no page: %d %q", status, body)
	}
	if status, _, _ := h.answer("ana", url.Values{"consent": {"anything"}, "space": {"launch"}, "agent": {"x"}, "allow": {"1"}}); status != http.StatusForbidden {
		t.Errorf("consenting with no page: %d, want 403", status)
	}
	if h.rows() != 0 {
		t.Error("a token row was minted with no page to sign in on")
	}
}
