package command

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"context"
	"errors"
	"slices"

	"github.com/compass-mcp/compass-mcp/access"
)

const membersUsage = `compass-mcp members: who may see which space, on a server shared by a team.

  members add SPACE PERSON        PERSON (an id, like ana) may see SPACE
  members remove SPACE PERSON     no longer; their tokens stop reaching SPACE at once
  members list [SPACE]            the members of SPACE, or of every space

A server's configured person (--for) is always a member of its configured space (--space),
without a row: a one-person server needs no members add.`

var membersHelp = subcommand{name: "members", args: "add|remove SPACE PERSON | list [SPACE]",
	does: "who may see a space on a server shared by a team", more: membersUsage}

// members runs "compass-mcp members ...".
func members(ctx context.Context, args []string, stdout io.Writer) error {
	var c config
	fs := flags(membersHelp, &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	want := map[string]int{"add": 2, "remove": 2, "list": -1}
	if len(pos) == 0 || pos[0] == "help" {
		fmt.Fprintln(os.Stderr, membersUsage)
		return usageError{"members needs a subcommand: add, remove or list"}
	}
	n, ok := want[pos[0]]
	if !ok || (n >= 0 && len(pos)-1 != n) || (n < 0 && len(pos) > 2) {
		fmt.Fprintln(os.Stderr, membersUsage)
		return usageError{fmt.Sprintf("members takes: add SPACE PERSON, remove SPACE PERSON, or list [SPACE]; got %q", pos)}
	}
	c.create = pos[0] != "list"
	db, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	admin := Admin{Store: access.New(db), Owner: access.Member{Space: c.space, Person: cmp.Or(c.me, access.EnvPerson())}, Out: stdout, Errs: os.Stderr}
	switch pos[0] {
	case "add":
		return admin.AddMember(ctx, pos[1], pos[2])
	case "remove":
		return admin.RemoveMember(ctx, pos[1], pos[2])
	}
	space := ""
	if len(pos) == 2 {
		space = pos[1]
	}
	return admin.Members(ctx, space)
}

const tokensUsage = `compass-mcp tokens: per-person tokens for a server shared by a team.

  tokens add --for PERSON [--agent NAME] [--space S ...] [--read-only] [--review] [--expires 90d]
                                  print a new token (cmp_...) once: only its hash is kept
  tokens list [--for PERSON]      tokens without their secret: id, person, agent, spaces,
                                  rights, expiry, last use
  tokens revoke ID                requests with that token get 401 from now on

A token acts for its person, as its agent (--agent; else the client's own name), in the
spaces given (--space, repeatable; default: every space its person is a member of), and
reaches only those its person is a member of. --expires takes days (90d), or hours and
minutes (12h, 30m); default: never.`

var tokensHelp = subcommand{name: "tokens", args: "add --for PERSON [--agent NAME] [--space S ...] [--read-only] [--expires 90d] | list [--for PERSON] | revoke ID",
	does: "per-person tokens for /mcp and /spaces/{space}/mcp", more: tokensUsage}

// spaceList is a repeatable --space.
type spaceList []string

func (l *spaceList) String() string     { return strings.Join(*l, ",") }
func (l *spaceList) Set(s string) error { *l = append(*l, s); return nil }

// tokens runs "compass-mcp tokens ...".
func tokens(ctx context.Context, args []string, stdout io.Writer) error {
	var c config
	fs := flags(tokensHelp, &c)
	var only spaceList
	// --space here lists the token's spaces, not the one space a command is scoped to.
	sp := fs.Lookup("space")
	sp.Value, sp.DefValue, sp.Usage = &only, "", "add: a space the token may reach (repeat for more; default: every space of its person)"
	forFlag := fs.Lookup("for")
	forFlag.Usage = "add: the person the token acts for; list: only that person's tokens"
	agent := fs.String("agent", "", "add: the agent's name its versions and messages carry (default: the client's own name)")
	readOnly := fs.Bool("read-only", false, "add: the token may read but not write (its sessions are not offered the writing tools)")
	review := fs.Bool("review", false, "add: its agent's changes are proposals, kept for its person to accept or decline (docs proposals)")
	newPerson := fs.Bool("new-person", false, "add: the person is new here (no space, token or display name yet): without it, such a --for is taken for a typo")
	newSpace := fs.Bool("new-space", false, "add: a --space that holds nothing yet is meant: without it, it is taken for a typo")
	expires := fs.String("expires", "", "add: how long it lasts: 90d, 12h, 30m (default: never)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || pos[0] == "help" {
		fmt.Fprintln(os.Stderr, tokensUsage)
		return usageError{"tokens needs a subcommand: add, list or revoke"}
	}
	forGiven := false
	fs.Visit(func(f *flag.Flag) { forGiven = forGiven || f.Name == "for" })
	c.create = pos[0] == "add"
	db, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	// The server's own person is known, whoever the token is for.
	admin := Admin{Store: access.New(db), Owner: access.Member{Space: c.space, Person: cmp.Or(env("COMPASS_ME", ""), access.EnvPerson())}, Out: stdout, Errs: os.Stderr}
	switch {
	case pos[0] == "add" && len(pos) == 1:
		if !forGiven {
			return usageError{"tokens add needs --for PERSON: the person the token acts for"}
		}
		until, err := access.ParseExpiry(*expires, time.Now())
		if err != nil {
			return usageError{"--expires: " + err.Error()}
		}
		return admin.AddToken(ctx, access.NewToken{Person: c.me, Agent: *agent, Spaces: only, ReadOnly: *readOnly, Review: *review, Expires: until}, *newPerson, *newSpace)
	case pos[0] == "list" && len(pos) == 1:
		person := ""
		if forGiven {
			person = c.me
		}
		return admin.Tokens(ctx, person)
	case pos[0] == "revoke" && len(pos) == 2:
		return admin.Revoke(ctx, pos[1])
	}
	fmt.Fprintln(os.Stderr, tokensUsage)
	return usageError{fmt.Sprintf("tokens takes: add --for PERSON [...], list [--for PERSON], or revoke ID; got %q", pos)}
}

// What members and tokens do and print.

// The command line's side of members and tokens (compass-mcp members, tokens; their flags
// and argument counts are cmd/compass-mcp's): the store calls, the checks that catch a typo
// before it becomes a member or a token, and what each says to the person.

// Admin is members and tokens on a terminal. Answers go to Out (a new token's secret alone
// on its line, so that it can be piped), notices to Errs. Its clock is its Store's.
type Admin struct {
	Store     *access.Store // as the command opened it: no owner, so Members lists the rows only
	Owner     access.Member // the server's own person and space: known, whoever a command names
	Out, Errs io.Writer
}

// TypoError is returned by Admin.AddToken for a person, or a space, never named here that
// was not said to be new: taken for a typo, it made no token. The command line ends with it
// as with a usage error.
type TypoError struct{ msg string }

func (e *TypoError) Error() string { return e.msg }

// known is who and what the store has heard of, the server's own person and space among them.
func (a Admin) known(ctx context.Context) (access.Known, error) {
	return a.Store.WithOwner(a.Owner.Space, a.Owner.Person).Known(ctx)
}

// AddMember makes person a member of space. A person or a space never named here before is
// added all the same (a first member has to be), but said on Errs, with the undo.
func (a Admin) AddMember(ctx context.Context, space, person string) error {
	known, err := a.known(ctx)
	if err != nil {
		return err
	}
	added, err := a.Store.AddMember(ctx, space, person)
	if err != nil {
		return err
	}
	if !known.Person(person) {
		fmt.Fprintf(a.Errs, "note: %s was never named here before (no space, token or display name; people here: %s). If that's a typo: members remove %s %s.\n", person, access.List(known.People), space, person)
	}
	if !known.Space(space) {
		fmt.Fprintf(a.Errs, "note: %s holds nothing yet and had no members (spaces here: %s). If that's a typo: members remove %s %s.\n", space, access.List(known.Spaces), space, person)
	}
	if added {
		fmt.Fprintf(a.Out, "%s is now a member of %s.\n", person, space)
	} else {
		fmt.Fprintf(a.Out, "%s was already a member of %s.\n", person, space)
	}
	return nil
}

// RemoveMember ends person's membership of space, saying whether there was one.
func (a Admin) RemoveMember(ctx context.Context, space, person string) error {
	removed, err := a.Store.RemoveMember(ctx, space, person)
	if err != nil {
		return err
	}
	if removed {
		fmt.Fprintf(a.Out, "%s is no longer a member of %s: their tokens no longer reach it.\n", person, space)
	} else {
		fmt.Fprintf(a.Out, "%s was not a member of %s: nothing changed.\n", person, space)
	}
	return nil
}

// Members lists the members of space ("": of every space), one a line, saying so when
// there are none.
func (a Admin) Members(ctx context.Context, space string) error {
	ms, err := a.Store.Members(ctx, space)
	if err != nil {
		return err
	}
	if len(ms) == 0 {
		if space != "" {
			fmt.Fprintf(a.Out, "%s has no members yet (members add %s PERSON).\n", space, space)
		} else {
			fmt.Fprintln(a.Out, "No members yet (members add SPACE PERSON).")
		}
	}
	for _, m := range ms {
		fmt.Fprintln(a.Out, m)
	}
	return nil
}

// AddToken makes the token n says and prints its secret on Out, this once, and what it is
// on Errs, with a note for each of its spaces its person is not (yet) a member of. A person,
// or a space, never named here is refused with a *TypoError unless newPerson (newSpace)
// says it is meant.
func (a Admin) AddToken(ctx context.Context, n access.NewToken, newPerson, newSpace bool) error {
	known, err := a.known(ctx)
	if err != nil {
		return err
	}
	if !known.Person(n.Person) && !newPerson {
		return &TypoError{fmt.Sprintf("%s was never named here (no space, token or display name; people here: %s): no token made. If %s is new, add --new-person", n.Person, access.List(known.People), n.Person)}
	}
	for _, sp := range n.Spaces {
		if !known.Space(sp) && !newSpace {
			return &TypoError{fmt.Sprintf("no space %s here (spaces here: %s): no token made. If it is a new space, add --new-space", sp, access.List(known.Spaces))}
		}
	}
	secret, t, err := a.Store.AddToken(ctx, n)
	if err != nil {
		return err
	}
	mine, err := a.Store.SpacesOf(ctx, t.Person)
	if err != nil {
		return err
	}
	for _, s := range t.Spaces {
		if !slices.Contains(mine, s) {
			fmt.Fprintf(a.Errs, "note: %s is not a member of %s (yet): the token reaches it once they are (members add %s %s), or on a server whose --space is %s and --for is %s.\n", t.Person, s, s, t.Person, s, t.Person)
		}
	}
	fmt.Fprintln(a.Out, secret)
	fmt.Fprintf(a.Errs, "Token %s: %s. Above is its secret, shown this once: only its hash is kept. Give it to the client as the header Authorization: Bearer <token>.\n", t.ID, t.Describe(a.Store.Now()))
	return nil
}

// Tokens lists the tokens of person ("": everyone's) without their secrets, one a line.
func (a Admin) Tokens(ctx context.Context, person string) error {
	ts, err := a.Store.Tokens(ctx, person)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		fmt.Fprintln(a.Out, "No tokens yet (tokens add --for PERSON).")
	}
	for _, t := range ts {
		fmt.Fprintf(a.Out, "%s · %s\n", t.ID, t.Describe(a.Store.Now()))
	}
	return nil
}

// Revoke revokes the token id: requests with it get 401 from now on.
func (a Admin) Revoke(ctx context.Context, id string) error {
	t, err := a.Store.Revoke(ctx, id)
	if errors.Is(err, access.ErrNoToken) {
		return fmt.Errorf("no token has the id %q: tokens list shows them", id)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(a.Out, "Revoked token %s (%s): requests with it now get 401.\n", t.ID, t.Describe(a.Store.Now()))
	return nil
}
