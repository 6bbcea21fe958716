package access

import (
	"errors"
	"fmt"
	"io"
	"slices"
)

// The command line's side of members and tokens (compass-mcp members, tokens; their flags
// and argument counts are cmd/compass-mcp's): the store calls, the checks that catch a typo
// before it becomes a member or a token, and what each says to the person.

// Admin is members and tokens on a terminal. Answers go to Out (a new token's secret alone
// on its line, so that it can be piped), notices to Errs. Its clock is its Store's.
type Admin struct {
	Store     *Store // as the command opened it: no owner, so Members lists the rows only
	Owner     Member // the server's own person and space: known, whoever a command names
	Out, Errs io.Writer
}

// TypoError is returned by Admin.AddToken for a person, or a space, never named here that
// was not said to be new: taken for a typo, it made no token. The command line ends with it
// as with a usage error.
type TypoError struct{ msg string }

func (e *TypoError) Error() string { return e.msg }

// known is who and what the store has heard of, the server's own person and space among them.
func (a Admin) known() (Known, error) {
	return a.Store.WithOwner(a.Owner.Space, a.Owner.Person).Known()
}

// AddMember makes person a member of space. A person or a space never named here before is
// added all the same (a first member has to be), but said on Errs, with the undo.
func (a Admin) AddMember(space, person string) error {
	known, err := a.known()
	if err != nil {
		return err
	}
	added, err := a.Store.AddMember(space, person)
	if err != nil {
		return err
	}
	if !known.Person(person) {
		fmt.Fprintf(a.Errs, "note: %s was never named here before (no space, token or display name; people here: %s). If that's a typo: members remove %s %s.\n", person, List(known.People), space, person)
	}
	if !known.Space(space) {
		fmt.Fprintf(a.Errs, "note: %s holds nothing yet and had no members (spaces here: %s). If that's a typo: members remove %s %s.\n", space, List(known.Spaces), space, person)
	}
	if added {
		fmt.Fprintf(a.Out, "%s is now a member of %s.\n", person, space)
	} else {
		fmt.Fprintf(a.Out, "%s was already a member of %s.\n", person, space)
	}
	return nil
}

// RemoveMember ends person's membership of space, saying whether there was one.
func (a Admin) RemoveMember(space, person string) error {
	removed, err := a.Store.RemoveMember(space, person)
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
func (a Admin) Members(space string) error {
	ms, err := a.Store.Members(space)
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
func (a Admin) AddToken(n NewToken, newPerson, newSpace bool) error {
	known, err := a.known()
	if err != nil {
		return err
	}
	if !known.Person(n.Person) && !newPerson {
		return &TypoError{fmt.Sprintf("%s was never named here (no space, token or display name; people here: %s): no token made. If %s is new, add --new-person", n.Person, List(known.People), n.Person)}
	}
	for _, sp := range n.Spaces {
		if !known.Space(sp) && !newSpace {
			return &TypoError{fmt.Sprintf("no space %s here (spaces here: %s): no token made. If it is a new space, add --new-space", sp, List(known.Spaces))}
		}
	}
	secret, t, err := a.Store.AddToken(n)
	if err != nil {
		return err
	}
	mine, err := a.Store.SpacesOf(t.Person)
	if err != nil {
		return err
	}
	for _, s := range t.Spaces {
		if !slices.Contains(mine, s) {
			fmt.Fprintf(a.Errs, "note: %s is not a member of %s (yet): the token reaches it once they are (members add %s %s), or on a server whose --space is %s and --for is %s.\n", t.Person, s, s, t.Person, s, t.Person)
		}
	}
	fmt.Fprintln(a.Out, secret)
	fmt.Fprintf(a.Errs, "Token %s: %s. Above is its secret, shown this once: only its hash is kept. Give it to the client as the header Authorization: Bearer <token>.\n", t.ID, t.Describe(a.Store.now()))
	return nil
}

// Tokens lists the tokens of person ("": everyone's) without their secrets, one a line.
func (a Admin) Tokens(person string) error {
	ts, err := a.Store.Tokens(person)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		fmt.Fprintln(a.Out, "No tokens yet (tokens add --for PERSON).")
	}
	for _, t := range ts {
		fmt.Fprintf(a.Out, "%s · %s\n", t.ID, t.Describe(a.Store.now()))
	}
	return nil
}

// Revoke revokes the token id: requests with it get 401 from now on.
func (a Admin) Revoke(id string) error {
	t, err := a.Store.Revoke(id)
	if errors.Is(err, ErrNoToken) {
		return fmt.Errorf("no token has the id %q: tokens list shows them", id)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(a.Out, "Revoked token %s (%s): requests with it now get 401.\n", t.ID, t.Describe(a.Store.now()))
	return nil
}
