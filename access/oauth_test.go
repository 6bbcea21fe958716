package access_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
)

// A token row an OAuth consent minted keeps its resource through a rotation (TestRotate has
// the rest), and its principal carries it.
func TestRotateKeepsTheResource(t *testing.T) {
	ctx := t.Context()
	s := access.New(openDB(t)).WithOwner("personal", "ana")
	_, row, err := s.AddToken(ctx, access.NewToken{Person: "ana", Spaces: []string{"personal"},
		Expires: time.Now().Add(time.Hour), Resource: "https://c.example/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	renewed, err := s.Rotate(ctx, row.ID, time.Now().Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.Verify(ctx, renewed); err != nil || p.Resource != "https://c.example/mcp" {
		t.Fatalf("the renewed secret: %+v, %v", p, err)
	}
	if rows, _ := s.Tokens(ctx, "ana"); len(rows) != 1 || rows[0].Resource != "https://c.example/mcp" {
		t.Errorf("rows %+v", rows)
	}
}

// resources plays the OAuth authorization server for the gate.
type resources struct{}

func (resources) Allows(resource, path string) bool { return resource == "https://c.example"+path }
func (resources) ResourceMetadataURL(path string) string {
	return "https://c.example/.well-known/oauth-protected-resource" + path
}

func TestGateResourceBinding(t *testing.T) {
	ctx := t.Context()
	s := access.New(openDB(t)).WithOwner("personal", "ana")
	bound, _, err := s.AddToken(ctx, access.NewToken{Person: "ana", Resource: "https://c.example/spaces/personal/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	plain, _, _ := s.AddToken(ctx, access.NewToken{Person: "ana"})
	g := &access.Gate{Store: s, OAuth: resources{}}
	h := g.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	do := func(path, token string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", path, nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	if w := do("/spaces/personal/mcp", bound); w.Code != 200 {
		t.Errorf("a bound token at its resource: %d", w.Code)
	}
	w := do("/mcp", bound)
	if want := `resource_metadata="https://c.example/.well-known/oauth-protected-resource/mcp"`; w.Code != 401 ||
		!strings.Contains(w.Header().Get("WWW-Authenticate"), want) || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("a bound token elsewhere: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	if w := do("/mcp", plain); w.Code != 200 {
		t.Errorf("a token bound to nothing: %d", w.Code)
	}
	if w := do("/spaces/personal/mcp", ""); w.Code != 401 || !strings.Contains(w.Header().Get("WWW-Authenticate"), "oauth-protected-resource/spaces/personal/mcp") {
		t.Errorf("no token: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	// Without the authorization server, a bound token is refused everywhere.
	g.OAuth = nil
	if w := do("/spaces/personal/mcp", bound); w.Code != 401 {
		t.Errorf("a bound token with no authorization server: %d", w.Code)
	}
}

// A closed gate asks for a token even before any row exists.
func TestGateClosed(t *testing.T) {
	s := access.New(openDB(t)).WithOwner("personal", "ana")
	for _, closed := range []bool{false, true} {
		g := &access.Gate{Store: s, Closed: closed}
		w := httptest.NewRecorder()
		g.Require(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, httptest.NewRequest("POST", "/mcp", nil))
		if want := map[bool]int{false: 200, true: 401}[closed]; w.Code != want {
			t.Errorf("Closed %v, no rows, no token: %d, want %d", closed, w.Code, want)
		}
	}
}
