package access_test

import (
	"os/user"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/access"
)

// $USER wins, then $USERNAME; neither is no one.
func TestEnvPerson(t *testing.T) {
	for _, tc := range []struct{ user, username, want string }{
		{"ana", "ana.w", "ana"},
		{"", "ana.w", "ana.w"},
		{"", "", ""},
	} {
		t.Setenv("USER", tc.user)
		t.Setenv("USERNAME", tc.username)
		if got := access.EnvPerson(); got != tc.want {
			t.Errorf("USER=%q USERNAME=%q: %q; want %q", tc.user, tc.username, got, tc.want)
		}
	}
}

// The account's name, unless it can't be an id; the environment plays no part.
func TestAccountPerson(t *testing.T) {
	t.Setenv("USER", "")
	t.Setenv("USERNAME", "")
	u, err := user.Current()
	if err != nil {
		t.Skipf("no current user here: %v", err)
	}
	want := u.Username
	if strings.ContainsAny(want, `:\`) {
		want = ""
	}
	if got := access.AccountPerson(); got != want {
		t.Errorf("AccountPerson() = %q; the account is %q", got, u.Username)
	}
}
