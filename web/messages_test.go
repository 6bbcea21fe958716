package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/transport"
	"github.com/compass-mcp/compass-mcp/web"
)

type posted struct {
	status    int
	body      map[string]any
	challenge string // WWW-Authenticate
}

func postJSON(t *testing.T, url, token, contentType, body string) posted {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	p := posted{status: res.StatusCode, challenge: res.Header.Get("WWW-Authenticate")}
	if res.StatusCode != http.StatusUnauthorized {
		if err := json.Unmarshal(raw, &p.body); err != nil {
			t.Errorf("POST %s answered %d with a body that isn't JSON: %q", url, res.StatusCode, raw)
		}
	}
	return p
}

// The endpoint takes who may post from the request's principal, as the gate makes it from
// real token rows: none, an unknown one, a read-only one, or one for another space adds
// nothing.
func TestPostMessagesPrincipal(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	store := access.New(db)
	for _, space := range []string{"team", "personal"} {
		if _, err := store.AddMember(ctx, space, "ana"); err != nil {
			t.Fatal(err)
		}
	}
	token := func(n access.NewToken) string {
		secret, _, err := store.AddToken(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	writer := token(access.NewToken{Person: "ana", Agent: "north", Spaces: []string{"team"}})
	reader := token(access.NewToken{Person: "ana", Agent: "north", Spaces: []string{"team"}, ReadOnly: true})
	elsewhere := token(access.NewToken{Person: "ana", Agent: "north", Spaces: []string{"personal"}})
	mux := http.NewServeMux()
	web.MountMessages(mux, db, &access.Gate{Store: store}, transport.Guard)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	url := srv.URL + "/spaces/team/conversations/c/messages"
	body := `{"from":"agent:north","text":"hello"}`

	if r := postJSON(t, url, "", "application/json", body); r.status != 401 || !strings.HasPrefix(r.challenge, "Bearer ") {
		t.Errorf("no token: %d %q", r.status, r.challenge)
	}
	if r := postJSON(t, url, "cmp_not_a_token", "application/json", body); r.status != 401 {
		t.Errorf("unknown token: %d", r.status)
	}
	// Every refusal for the token's sake says so in WWW-Authenticate too (RFC 6750).
	scope := func(r posted) bool { return strings.Contains(r.challenge, `error="insufficient_scope"`) }
	if r := postJSON(t, url, reader, "application/json", body); r.status != 403 || !strings.Contains(r.body["error"].(string), "read-only") || !scope(r) {
		t.Errorf("read-only: %d %v %q", r.status, r.body, r.challenge)
	}
	if r := postJSON(t, url, elsewhere, "application/json", body); r.status != 403 || !scope(r) {
		t.Errorf("a space not allowed: %d %v %q", r.status, r.body, r.challenge)
	}
	if r := postJSON(t, url, writer, "application/json", `{"from":"person:ben","text":"hello"}`); r.status != 403 || r.body["field"] != "from" || !scope(r) {
		t.Errorf("from another person: %d %v %q", r.status, r.body, r.challenge)
	}
	if r := postJSON(t, url, writer, "application/json", body); r.status != 201 {
		t.Errorf("allowed: %d %v", r.status, r.body)
	}
}

// A loopback server without a token takes no message for a Host that isn't loopback: a
// page that rebinds its own name to 127.0.0.1 sends that name as Host and Origin.
func TestPostMessagesRefusesAnotherHostOnLoopback(t *testing.T) {
	db := kvtest.Open(t)
	mux := http.NewServeMux()
	web.MountMessages(mux, db, &access.Gate{Store: access.New(db).WithOwner("personal", "ana")}, transport.Guard)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for host, want := range map[string]int{"evil.example:" + port: http.StatusForbidden, "localhost:" + port: http.StatusCreated} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/spaces/personal/conversations/pricing/messages", strings.NewReader(`{"from":"person:ana","text":"hello"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, res.StatusCode, want)
		}
	}
}
