package oauth

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// What the 2026-07-28 revision of the MCP authorization specification asks of an
// authorization server: client ID metadata documents offered before registration, iss in
// every authorization response, and redirect URIs that fit a registering client's
// application_type.

// The metadata says client ID metadata documents are supported before it names the
// registration endpoint, and that authorization responses carry iss.
func TestMetadataOffersClientIDDocumentsFirst(t *testing.T) {
	h := newHarness(t)
	req, _ := http.NewRequest("GET", h.url+"/.well-known/oauth-authorization-server", nil)
	status, body, _ := h.do(req)
	cimd, reg := strings.Index(body, `"client_id_metadata_document_supported":true`), strings.Index(body, `"registration_endpoint":"`+h.url+`/register"`)
	if status != 200 || cimd < 0 || reg < 0 || cimd > reg {
		t.Errorf("client ID metadata documents at %d, registration at %d, in:\n%s", cimd, reg, body)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil || m["authorization_response_iss_parameter_supported"] != true || m["issuer"] != h.url {
		t.Errorf("%v: %s", err, body)
	}
}

// Every answer /authorize and /consent send back to the client, the code and each error,
// carries iss (RFC 9207), the issuer of the metadata, beside the client's state.
func TestIssInEveryAuthorizationResponse(t *testing.T) {
	h := newHarness(t)
	a, _ := h.loopbackClient()
	back := func(name string, resp *http.Response, want string) {
		t.Helper()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || err != nil || !strings.HasPrefix(loc.String(), a.redirect) {
			t.Errorf("%s: %d to %q, want a redirect to the client", name, resp.StatusCode, resp.Header.Get("Location"))
			return
		}
		q := loc.Query()
		got := q.Get("error")
		if want == "code" {
			got = map[bool]string{true: "code"}[q.Get("code") != ""]
		}
		if got != want || q.Get("iss") != h.url || q.Get("state") != a.state {
			t.Errorf("%s: %s; want %s with iss=%s and the state", name, loc.RawQuery, want, h.url)
		}
	}
	get := func(q url.Values) *http.Response {
		req, _ := http.NewRequest("GET", h.url+"/authorize?"+q.Encode(), nil)
		req.AddCookie(&http.Cookie{Name: signInCookie, Value: "ana"})
		_, _, resp := h.do(req)
		return resp
	}
	base := func() url.Values {
		q, _ := url.ParseQuery(a.query())
		return q
	}
	for name, change := range map[string]struct {
		set  func(url.Values)
		want string
	}{
		"a response_type other than code": {func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		"no code_challenge":               {func(q url.Values) { q.Del("code_challenge") }, "invalid_request"},
		"plain PKCE":                      {func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		"a challenge that is no SHA-256":  {func(q url.Values) { q.Set("code_challenge", "short") }, "invalid_request"},
		"two resources":                   {func(q url.Values) { q["resource"] = []string{h.url + "/mcp", h.url + "/"} }, "invalid_target"},
		"another server's resource":       {func(q url.Values) { q.Set("resource", "https://elsewhere.example/mcp") }, "invalid_target"},
	} {
		q := base()
		change.set(q)
		back(name, get(q), change.want)
	}
	_, _, id, _ := h.authorize("ana", a)
	_, _, resp := h.answer("ana", url.Values{"consent": {id}, "deny": {"1"}})
	back("the person denies", resp, "access_denied")
	_, _, id, _ = h.authorize("ana", a)
	_, _, resp = h.answer("ana", url.Values{"consent": {id}, "space": {"launch"}, "agent": {"north"}, "allow": {"1"}})
	back("the person allows", resp, "code")
}

// A registering client's application_type, when it gives one, is kept to its redirect URIs:
// native takes loopback http and an app's own scheme, web takes https; a client that gives
// none is registered as before.
func TestRegisterApplicationType(t *testing.T) {
	h := newHarness(t)
	post := func(appType string, uris ...string) (int, map[string]any) {
		m := map[string]any{"client_name": "App", "redirect_uris": uris}
		if appType != "-" {
			m["application_type"] = appType
		}
		b, _ := json.Marshal(m)
		req, _ := http.NewRequest("POST", h.url+"/register", strings.NewReader(string(b)))
		req.Header.Set("Content-Type", "application/json")
		status, out, _ := h.do(req)
		var ans map[string]any
		json.Unmarshal([]byte(out), &ans)
		return status, ans
	}
	for _, tc := range []struct {
		appType string
		uris    []string
		want    string // "" registered, else the error
	}{
		{"native", []string{"http://127.0.0.1:33418/callback", "http://localhost/cb", "http://[::1]:9/cb"}, ""},
		{"native", []string{"com.example.app:/oauth"}, ""},
		{"native", []string{"https://app.example.com/cb"}, "invalid_redirect_uri"},
		{"native", []string{"http://127.0.0.1/cb", "https://app.example.com/cb"}, "invalid_redirect_uri"},
		{"web", []string{"https://claude.ai/api/mcp/auth_callback"}, ""},
		{"web", []string{"http://127.0.0.1:33418/callback"}, "invalid_redirect_uri"},
		{"web", []string{"com.example.app:/oauth"}, "invalid_redirect_uri"},
		{"desktop", []string{"http://127.0.0.1/cb"}, "invalid_client_metadata"},
		{"NATIVE", []string{"http://127.0.0.1/cb"}, "invalid_client_metadata"},
		{strings.Repeat("n", 60<<10), []string{"http://127.0.0.1/cb"}, "invalid_client_metadata"},
		{"-", []string{"http://127.0.0.1/cb", "https://app.example.com/cb"}, ""},
		// What no application_type makes acceptable either, whatever the type.
		{"native", []string{"http://app.example.com/cb"}, "invalid_redirect_uri"},
		{"web", []string{"https://app.example.com/cb#x"}, "invalid_redirect_uri"},
	} {
		status, m := post(tc.appType, tc.uris...)
		name := tc.appType
		if len(name) > 20 {
			name = name[:20] + "..."
		}
		switch {
		case tc.want == "" && (status != http.StatusCreated || str(m, "client_id") == ""):
			t.Errorf("%s %v: %d %v, want registered", name, tc.uris, status, m)
		case tc.want == "" && tc.appType != "-" && m["application_type"] != tc.appType:
			t.Errorf("%s %v: the answer says application_type %v", name, tc.uris, m["application_type"])
		case tc.want == "" && tc.appType == "-" && m["application_type"] != nil:
			t.Errorf("no application_type: the answer says %v", m["application_type"])
		case tc.want != "" && (status != http.StatusBadRequest || m["error"] != tc.want || str(m, "error_description") == ""):
			t.Errorf("%s %v: %d %v, want 400 %s", name, tc.uris, status, m, tc.want)
		}
	}
}
