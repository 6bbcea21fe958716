package command

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// get fetches url with an optional bearer token and returns the status, body and response.
func get(t *testing.T, method, url, token string) (int, string, *http.Response) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

// The authorization server is wired into the served binary: its metadata names the
// server's address, every 401 points at the endpoint's own metadata, and the gate accepts
// the token rows it mints only where they are bound, until they are renewed or revoked.
func TestOAuthServedAndGated(t *testing.T) {
	t.Parallel()
	data := newData(t)
	cli(t, data, "members", "add", "launch", "ana")
	cli(t, data, "tokens", "add", "--for", "ana") // a token row: the server is no longer open
	endpoint, _ := httpServer(t, data)
	base := strings.TrimSuffix(endpoint, "/mcp")

	status, body, _ := get(t, "GET", base+"/.well-known/oauth-protected-resource/spaces/launch/mcp", "")
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if json.Unmarshal([]byte(body), &prm); status != 200 || prm.Resource != base+"/spaces/launch/mcp" || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != base {
		t.Fatalf("protected resource metadata: %d %s", status, body)
	}
	if status, body, _ := get(t, "GET", base+"/.well-known/oauth-authorization-server", ""); status != 200 || !strings.Contains(body, `"issuer":"`+base+`"`) {
		t.Fatalf("authorization server metadata: %d %s", status, body)
	}
	for path, meta := range map[string]string{
		"/spaces/launch/mcp": "/.well-known/oauth-protected-resource/spaces/launch/mcp",
		"/mcp":               "/.well-known/oauth-protected-resource/mcp",
	} {
		_, _, resp := get(t, "POST", base+path, "")
		if want := `resource_metadata="` + base + meta + `"`; resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), want) {
			t.Errorf("%s without a token: %d %q, want 401 with %s", path, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
		}
	}

	// A row as the consent mints it, bound to launch's endpoint.
	f := kvtest.OpenData(t, data)
	tokens := access.New(f)
	secret, row, err := tokens.AddToken(t.Context(), access.NewToken{Person: "ana", Agent: "claude", Spaces: []string{"launch"},
		Expires: time.Now().Add(time.Hour), Client: "Claude (claude.ai)", Resource: base + "/spaces/launch/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	id := row.ID
	if status, body, _ := get(t, "POST", base+"/spaces/launch/mcp", secret); status != 200 {
		t.Fatalf("its own resource: %d %s", status, body)
	}
	for _, other := range []string{"/mcp", "/spaces/personal/mcp"} {
		_, _, resp := get(t, "POST", base+other, secret)
		if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s with a token bound to launch's endpoint: %d %q, want 401 invalid_token", other, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	list := cli(t, data, "tokens", "list", "--for", "ana")
	if !strings.Contains(list, id+" · ") || !strings.Contains(list, "via Claude (claude.ai)") || !strings.Contains(list, "bound to "+base+"/spaces/launch/mcp") {
		t.Errorf("tokens list doesn't show the OAuth row:\n%s", list)
	}

	// A refresh renews the row in place: the old secret stops, the new one works, one row.
	renewed, err := tokens.Rotate(t.Context(), id, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if status, _, _ := get(t, "POST", base+"/spaces/launch/mcp", secret); status != 401 {
		t.Errorf("the secret before the refresh: %d, want 401", status)
	}
	if status, body, _ := get(t, "POST", base+"/spaces/launch/mcp", renewed); status != 200 {
		t.Errorf("the renewed secret: %d %s", status, body)
	}
	if n := strings.Count(cli(t, data, "tokens", "list", "--for", "ana"), "via Claude"); n != 1 {
		t.Errorf("%d rows for the connector after a refresh, want 1", n)
	}

	// tokens revoke ends it, and the next refresh is refused.
	cli(t, data, "tokens", "revoke", id)
	if status, _, _ := get(t, "POST", base+"/spaces/launch/mcp", renewed); status != 401 {
		t.Errorf("a revoked row: %d, want 401", status)
	}
	if _, err := tokens.Rotate(t.Context(), id, time.Now().Add(time.Hour)); !errors.Is(err, access.ErrRevokedToken) {
		t.Errorf("renewing a revoked row: %v, want ErrRevokedToken", err)
	}
}

// --public-url names the server for clients, and closes it even before any token exists:
// behind a proxy, loopback is the internet.
func TestOAuthPublicURL(t *testing.T) {
	t.Parallel()
	data := newData(t)
	endpoint, _ := httpServer(t, data, "--public-url", "https://compass.example.com/", "--web", "")
	base := strings.TrimSuffix(endpoint, "/mcp")
	if _, body, _ := get(t, "GET", base+"/.well-known/oauth-authorization-server", ""); !strings.Contains(body, `"issuer":"https://compass.example.com"`) {
		t.Errorf("issuer: %s", body)
	}
	_, _, resp := get(t, "POST", endpoint, "")
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="https://compass.example.com/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("no token, no token rows, --public-url: %d %q, want 401", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// The page beside /mcp is reached over https through the proxy, which speaks plain HTTP
	// to it: its session cookie must still be Secure.
	// (A code made as "compass-mcp open" makes it: open itself would check that the page at
	// https://compass.example.com answers, which no test can reach.)
	db := kvtest.OpenData(t, data)
	code, err := access.New(db).NewSignInCode(t.Context(), "ana", "personal", "/")
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noFollow.Get(base + "/signin?code=" + code)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := resp.Header.Get("Set-Cookie"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(c, "; Secure") || !strings.Contains(c, "HttpOnly") {
		t.Errorf("signing in behind https: %d, Set-Cookie %q, want a Secure cookie", resp.StatusCode, c)
	}
	if out, err := cliResult(data, "", "serve", "--http", "127.0.0.1:0", "--public-url", "https://compass.example.com/mcp"); err == nil || !strings.Contains(out, "--public-url: the issuer is the server's public base URL") {
		t.Errorf("a public URL with a path: %v %s", err, out)
	}
}
