package access_test

import (
	"testing"

	"github.com/compass-mcp/compass-mcp/access"
)

// A static token guards a server; so does a token row, revoked or not; a store with
// neither is unguarded.
func TestGuarded(t *testing.T) {
	ctx := t.Context()
	s := access.New(openDB(t))
	if s.Guarded(ctx, "") || !s.Guarded(ctx, "a static token") {
		t.Fatalf("no rows: Guarded(\"\") %v, Guarded(static) %v; want false, true", s.Guarded(ctx, ""), s.Guarded(ctx, "a static token"))
	}
	_, tok, err := s.AddToken(ctx, access.NewToken{Person: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Revoke(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if !s.Guarded(ctx, "") {
		t.Errorf("a revoked token row: not guarded")
	}
}
