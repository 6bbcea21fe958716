package command

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// admin is members and tokens on a fresh store whose own person is ana in personal, with a
// clock that stands still, and what it said.
func admin(t *testing.T) (a Admin, db kv.DB, out, errs *strings.Builder, now time.Time) {
	t.Helper()
	now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	out, errs = new(strings.Builder), new(strings.Builder)
	db = kvtest.Open(t)
	a = Admin{Store: access.New(db).WithClock(func() time.Time { return now }), Owner: access.Member{Space: "personal", Person: "ana"}, Out: out, Errs: errs}
	return a, db, out, errs, now
}

// A member of a person or a space never named here is added, but said, with the undo; once
// known, nothing is said; adding twice or removing twice says nothing changed.
func TestAdminMembers(t *testing.T) {
	a, _, out, errs, _ := admin(t)
	ctx := t.Context()
	if err := a.Members(ctx, ""); err != nil || out.String() != "No members yet (members add SPACE PERSON).\n" {
		t.Fatalf("no members: %q, %v", out, err)
	}
	out.Reset()
	if err := a.AddMember(ctx, "personal", "ben"); err != nil {
		t.Fatal(err)
	}
	if out.String() != "ben is now a member of personal.\n" || !strings.Contains(errs.String(), "ben was never named here before") || !strings.Contains(errs.String(), "people here: ana)") ||
		!strings.Contains(errs.String(), "members remove personal ben") || strings.Contains(errs.String(), "holds nothing") {
		t.Errorf("a new person in the owner's space: %q, %q", out, errs)
	}
	out.Reset()
	errs.Reset()
	if err := a.AddMember(ctx, "lanch", "ben"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errs.String(), "lanch holds nothing yet and had no members (spaces here: personal)") || strings.Contains(errs.String(), "never named") {
		t.Errorf("a known person in a new space: %q", errs)
	}
	out.Reset()
	errs.Reset()
	if err := a.AddMember(ctx, "lanch", "ben"); err != nil || out.String() != "ben was already a member of lanch.\n" || errs.Len() != 0 {
		t.Errorf("again: %q, %q, %v", out, errs, err)
	}
	out.Reset()
	if err := a.Members(ctx, "lanch"); err != nil || !strings.HasPrefix(out.String(), "lanch\tben\tsince ") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("members of lanch: %q, %v", out, err)
	}
	out.Reset()
	if err := a.RemoveMember(ctx, "lanch", "ben"); err != nil || out.String() != "ben is no longer a member of lanch: their tokens no longer reach it.\n" {
		t.Errorf("remove: %q, %v", out, err)
	}
	out.Reset()
	if err := a.RemoveMember(ctx, "lanch", "ben"); err != nil || out.String() != "ben was not a member of lanch: nothing changed.\n" {
		t.Errorf("remove again: %q, %v", out, err)
	}
	out.Reset()
	if err := a.Members(ctx, "lanch"); err != nil || out.String() != "lanch has no members yet (members add lanch PERSON).\n" {
		t.Errorf("members of an empty space: %q, %v", out, err)
	}
}

// A token for a person, or a space, never named here is a *TypoError, and makes no token,
// unless said new; a token made prints its secret alone on Out, and notes a space its person
// is not a member of; listing and revoking say what each token is, as of the store's clock.
func TestAdminTokens(t *testing.T) {
	a, db, out, errs, now := admin(t)
	ctx := t.Context()
	if err := spaces.SetName(ctx, db, "ben", "Ben"); err != nil {
		t.Fatal(err)
	}
	var typo *TypoError
	if err := a.AddToken(ctx, access.NewToken{Person: "bne"}, false, false); !errors.As(err, &typo) || !strings.Contains(err.Error(), "bne was never named here") ||
		!strings.Contains(err.Error(), "people here: ana, ben") || !strings.Contains(err.Error(), "--new-person") {
		t.Errorf("a token for a typo: %v", err)
	}
	if err := a.AddToken(ctx, access.NewToken{Person: "ben", Spaces: []string{"nowhere"}}, false, false); !errors.As(err, &typo) || !strings.Contains(err.Error(), "no space nowhere here (spaces here: personal)") || !strings.Contains(err.Error(), "--new-space") {
		t.Errorf("a token for a space that is a typo: %v", err)
	}
	if err := a.Tokens(ctx, ""); err != nil || out.String() != "No tokens yet (tokens add --for PERSON).\n" {
		t.Fatalf("refused tokens were made: %q, %v", out, err)
	}
	out.Reset()
	if err := a.AddToken(ctx, access.NewToken{Person: "cy", Agent: "north", Spaces: []string{"later"}, Expires: now.Add(time.Hour)}, true, true); err != nil {
		t.Fatal(err)
	}
	secret := out.String()
	if !strings.HasPrefix(secret, "cmp_") || strings.Count(secret, "\n") != 1 || strings.Contains(secret, " ") {
		t.Errorf("Out has more than the secret: %q", secret)
	}
	if !strings.Contains(errs.String(), "note: cy is not a member of later (yet)") || !strings.Contains(errs.String(), "for cy · agent north · spaces later · read-write · expires ") || !strings.Contains(errs.String(), "shown this once") {
		t.Errorf("what the new token is: %q", errs)
	}
	p, err := a.Store.Verify(ctx, strings.TrimSpace(secret))
	if err != nil || p.Person != "cy" || p.Agent != "north" {
		t.Errorf("the printed secret verifies as %+v, %v", p, err)
	}
	out.Reset()
	if err := a.Tokens(ctx, "cy"); err != nil || !strings.Contains(out.String(), " · for cy · agent north") || strings.Contains(out.String(), "cmp_") {
		t.Errorf("tokens list: %q, %v", out, err)
	}
	id, _, _ := strings.Cut(out.String(), " ")
	out.Reset()
	if err := a.Revoke(ctx, id); err != nil || !strings.HasPrefix(out.String(), "Revoked token "+id+" (for cy") || !strings.Contains(out.String(), "REVOKED") {
		t.Errorf("revoke: %q, %v", out, err)
	}
	if err := a.Revoke(ctx, "nope"); err == nil || err.Error() != `no token has the id "nope": tokens list shows them` {
		t.Errorf("revoking an id no token has: %v", err)
	}
}
