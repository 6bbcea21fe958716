package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

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
func members(args []string, stdout io.Writer) error {
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
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	store := access.New(db)
	switch pos[0] {
	case "add":
		known, err := store.WithOwner(c.space, cmp.Or(c.me, quietPerson())).Known()
		if err != nil {
			return err
		}
		added, err := store.AddMember(pos[1], pos[2])
		if err != nil {
			return err
		}
		if !known.Person(pos[2]) {
			fmt.Fprintf(os.Stderr, "note: %s was never named here before (no space, token or display name; people here: %s). If that's a typo: members remove %s %s.\n", pos[2], access.List(known.People), pos[1], pos[2])
		}
		if !known.Space(pos[1]) {
			fmt.Fprintf(os.Stderr, "note: %s holds nothing yet and had no members (spaces here: %s). If that's a typo: members remove %s %s.\n", pos[1], access.List(known.Spaces), pos[1], pos[2])
		}
		if added {
			fmt.Fprintf(stdout, "%s is now a member of %s.\n", pos[2], pos[1])
		} else {
			fmt.Fprintf(stdout, "%s was already a member of %s.\n", pos[2], pos[1])
		}
	case "remove":
		removed, err := store.RemoveMember(pos[1], pos[2])
		if err != nil {
			return err
		}
		if removed {
			fmt.Fprintf(stdout, "%s is no longer a member of %s: their tokens no longer reach it.\n", pos[2], pos[1])
		} else {
			fmt.Fprintf(stdout, "%s was not a member of %s: nothing changed.\n", pos[2], pos[1])
		}
	case "list":
		space := ""
		if len(pos) == 2 {
			space = pos[1]
		}
		ms, err := store.Members(space)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			if space != "" {
				fmt.Fprintf(stdout, "%s has no members yet (members add %s PERSON).\n", space, space)
			} else {
				fmt.Fprintln(stdout, "No members yet (members add SPACE PERSON).")
			}
		}
		for _, m := range ms {
			fmt.Fprintln(stdout, m)
		}
	}
	return nil
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
func tokens(args []string, stdout io.Writer) error {
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
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	store := access.New(db)
	switch {
	case pos[0] == "add" && len(pos) == 1:
		if !forGiven {
			return usageError{"tokens add needs --for PERSON: the person the token acts for"}
		}
		until, err := access.ParseExpiry(*expires, time.Now())
		if err != nil {
			return usageError{"--expires: " + err.Error()}
		}
		// The server's own person is known, whoever the token is for.
		known, err := store.WithOwner(c.space, cmp.Or(env("COMPASS_ME", ""), quietPerson())).Known()
		if err != nil {
			return err
		}
		if !known.Person(c.me) && !*newPerson {
			return usageError{fmt.Sprintf("%s was never named here (no space, token or display name; people here: %s): no token made. If %s is new, add --new-person", c.me, access.List(known.People), c.me)}
		}
		for _, sp := range only {
			if !known.Space(sp) && !*newSpace {
				return usageError{fmt.Sprintf("no space %s here (spaces here: %s): no token made. If it is a new space, add --new-space", sp, access.List(known.Spaces))}
			}
		}
		secret, t, err := store.AddToken(access.NewToken{Person: c.me, Agent: *agent, Spaces: only, ReadOnly: *readOnly, Review: *review, Expires: until})
		if err != nil {
			return err
		}
		mine, err := store.SpacesOf(t.Person)
		if err != nil {
			return err
		}
		for _, s := range t.Spaces {
			if !slices.Contains(mine, s) {
				fmt.Fprintf(os.Stderr, "note: %s is not a member of %s (yet): the token reaches it once they are (members add %s %s), or on a server whose --space is %s and --for is %s.\n", t.Person, s, s, t.Person, s, t.Person)
			}
		}
		fmt.Fprintln(stdout, secret)
		fmt.Fprintf(os.Stderr, "Token %s: %s. Above is its secret, shown this once: only its hash is kept. Give it to the client as the header Authorization: Bearer <token>.\n", t.ID, t.Describe(time.Now()))
	case pos[0] == "list" && len(pos) == 1:
		person := ""
		if forGiven {
			person = c.me
		}
		ts, err := store.Tokens(person)
		if err != nil {
			return err
		}
		if len(ts) == 0 {
			fmt.Fprintln(stdout, "No tokens yet (tokens add --for PERSON).")
		}
		for _, t := range ts {
			fmt.Fprintf(stdout, "%s · %s\n", t.ID, t.Describe(time.Now()))
		}
	case pos[0] == "revoke" && len(pos) == 2:
		t, err := store.Revoke(pos[1])
		if errors.Is(err, access.ErrNoToken) {
			return fmt.Errorf("no token has the id %q: tokens list shows them", pos[1])
		} else if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Revoked token %s (%s): requests with it now get 401.\n", t.ID, t.Describe(time.Now()))
	default:
		fmt.Fprintln(os.Stderr, tokensUsage)
		return usageError{fmt.Sprintf("tokens takes: add --for PERSON [...], list [--for PERSON], or revoke ID; got %q", pos)}
	}
	return nil
}
