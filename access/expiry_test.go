package access_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// Within an open MCP session each request passes the gate again, chained as a server
// chains them (Require, RequireSpace, then Sessions.Check): a token that expires while its
// session is open gets 401 from that moment on, and a person taken out of the space gets
// 403, though the session itself has not ended. Nothing is kept from when the session
// began. On a clock, so that nobody waits for the expiry; cmd's
// TestTeamSessionLosesWhatItsTokenLoses takes a member out through the binary.
func TestOpenSessionLosesWhatItsTokenLoses(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	c := &clock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	s := access.New(db).WithOwner("personal", "ana").WithClock(c.Now)
	s.AddMember(ctx, "launch", "ana")
	s.AddMember(ctx, "launch", "ben")
	brief, _, err := s.AddToken(ctx, access.NewToken{Person: "ana", Expires: c.Now().Add(10 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	ben, _, err := s.AddToken(ctx, access.NewToken{Person: "ben"})
	if err != nil {
		t.Fatal(err)
	}
	sessions := access.NewSessions(db, 30*time.Minute).WithClock(c.Now)
	began := map[string]access.Principal{} // session id → who began it
	gate := &access.Gate{Store: s}
	mux := http.NewServeMux()
	mux.Handle("/spaces/{space}/mcp", gate.Require(gate.RequireSpace(access.PathSpace, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := access.FromContext(r.Context())
		id := r.Header.Get("Mcp-Session-Id")
		if id == "" {
			id, err := sessions.Begin(ctx, p, "test")
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			began[id] = p
			w.Header().Set("Mcp-Session-Id", id)
			return
		}
		if _, err := sessions.Check(ctx, id, p); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, "%s in launch", p.Person)
	}))))
	do := func(secret, session string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/spaces/launch/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		return w
	}
	begin := func(secret string) string {
		t.Helper()
		w := do(secret, "")
		if w.Code != http.StatusOK || w.Header().Get("Mcp-Session-Id") == "" {
			t.Fatalf("beginning a session: %d %q", w.Code, w.Body.String())
		}
		return w.Header().Get("Mcp-Session-Id")
	}
	anaSession, benSession := begin(brief), begin(ben)
	for who, call := range map[string][2]string{"ana": {brief, anaSession}, "ben": {ben, benSession}} {
		if w := do(call[0], call[1]); w.Code != http.StatusOK || w.Body.String() != who+" in launch" {
			t.Fatalf("%s in her or his open session: %d %q", who, w.Code, w.Body.String())
		}
	}

	s.RemoveMember(ctx, "launch", "ben")
	if w := do(ben, benSession); w.Code != http.StatusForbidden {
		t.Errorf("Ben, taken out of launch, in his open session: %d %q, want 403", w.Code, w.Body.String())
	}
	c.Add(10*time.Minute - time.Second)
	if w := do(brief, anaSession); w.Code != http.StatusOK {
		t.Fatalf("Ana's token a second before it expires: %d %q", w.Code, w.Body.String())
	}
	c.Add(time.Second)
	w := do(brief, anaSession)
	if ch := w.Header().Get("WWW-Authenticate"); w.Code != http.StatusUnauthorized || !strings.Contains(ch, `error="invalid_token"`) || !strings.Contains(ch, "expired") {
		t.Errorf("Ana's token as it expires, in its open session: %d %q (WWW-Authenticate %q), want 401 invalid_token, expired", w.Code, w.Body.String(), ch)
	}
	// Refused by the token, not because the sessions ended: both are still there.
	for id, p := range began {
		if _, err := sessions.Check(ctx, id, p); err != nil {
			t.Errorf("the session of %s, after its token lost: %v, want it still open", p.Person, err)
		}
	}
}
