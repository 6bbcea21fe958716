package command

import (
	"strings"
	"testing"
)

// Admin typos are said: members add of a person never named before, or to a space with
// nothing in it, adds them but says so and how to undo it; tokens add for a person or a
// space the server has never heard of makes no token unless --new-person or --new-space
// says it's meant. Before, "bne is now a member" and a token for the space "lanch".
func TestAdminTypos(t *testing.T) {
	data := newData(t) // its person is ana (COMPASS_ME)
	cli(t, data, "say", "pricing", "12 a month.")
	code, out, errs := runEnv(t, testEnv(data), "members", "add", "personal", "ben")
	if code != 0 || !strings.Contains(out, "ben is now a member of personal") || !strings.Contains(errs, "ben was never named here") || !strings.Contains(errs, "members remove personal ben") {
		t.Errorf("members add of a new person: exit %d, %q, %q; want it done, and said to be new, with the undo", code, out, errs)
	}
	code, _, errs = runEnv(t, testEnv(data), "members", "add", "lanch", "ben")
	if code != 0 || !strings.Contains(errs, "lanch holds nothing yet") || !strings.Contains(errs, "personal") || strings.Contains(errs, "never named") {
		t.Errorf("members add to a new space: exit %d, %q; want it said new, naming the spaces there are", code, errs)
	}
	if _, _, errs := runEnv(t, testEnv(data), "members", "add", "personal", "ben"); errs != "" {
		t.Errorf("members add of a known person to a known space said %q", errs)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tokens", "add", "--for", "bne"}, "bne was never named here"},
		{[]string{"tokens", "add", "--for", "bne"}, "--new-person"},
		{[]string{"tokens", "add", "--for", "bne"}, "ana, ben"},
		{[]string{"tokens", "add", "--for", "ben", "--space", "nowhere"}, "no space nowhere here"},
		{[]string{"tokens", "add", "--for", "ben", "--space", "nowhere"}, "--new-space"},
	} {
		code, out, errs := runEnv(t, testEnv(data), c.args...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, %q, %q; want exit 2, no token, saying %q", strings.Join(c.args, " "), code, out, errs, c.want)
		}
	}
	if out := cli(t, data, "tokens", "list"); !strings.Contains(out, "No tokens yet") {
		t.Errorf("refused tokens were made: %q", out)
	}
	for _, args := range [][]string{
		{"tokens", "add", "--for", "ben", "--space", "personal"},
		{"tokens", "add", "--for", "cy", "--new-person"},
		{"tokens", "add", "--for", "ben", "--space", "later", "--new-space"},
	} {
		if out := cli(t, data, args...); !strings.HasPrefix(out, "cmp_") {
			t.Errorf("%s printed %q", strings.Join(args, " "), out)
		}
	}
}
