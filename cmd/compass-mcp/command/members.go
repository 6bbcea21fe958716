package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
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
	admin := access.Admin{Store: access.New(db), Owner: access.Member{Space: c.space, Person: cmp.Or(c.me, access.EnvPerson())}, Out: stdout, Errs: os.Stderr}
	switch pos[0] {
	case "add":
		return admin.AddMember(pos[1], pos[2])
	case "remove":
		return admin.RemoveMember(pos[1], pos[2])
	}
	space := ""
	if len(pos) == 2 {
		space = pos[1]
	}
	return admin.Members(space)
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
	// The server's own person is known, whoever the token is for.
	admin := access.Admin{Store: access.New(db), Owner: access.Member{Space: c.space, Person: cmp.Or(env("COMPASS_ME", ""), access.EnvPerson())}, Out: stdout, Errs: os.Stderr}
	switch {
	case pos[0] == "add" && len(pos) == 1:
		if !forGiven {
			return usageError{"tokens add needs --for PERSON: the person the token acts for"}
		}
		until, err := access.ParseExpiry(*expires, time.Now())
		if err != nil {
			return usageError{"--expires: " + err.Error()}
		}
		return admin.AddToken(access.NewToken{Person: c.me, Agent: *agent, Spaces: only, ReadOnly: *readOnly, Review: *review, Expires: until}, *newPerson, *newSpace)
	case pos[0] == "list" && len(pos) == 1:
		person := ""
		if forGiven {
			person = c.me
		}
		return admin.Tokens(person)
	case pos[0] == "revoke" && len(pos) == 2:
		return admin.Revoke(pos[1])
	}
	fmt.Fprintln(os.Stderr, tokensUsage)
	return usageError{fmt.Sprintf("tokens takes: add --for PERSON [...], list [--for PERSON], or revoke ID; got %q", pos)}
}
