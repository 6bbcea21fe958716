package command

import (
	"context"
	"io"
	"strings"

	"fmt"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

var peopleHelp = subcommand{name: "people", args: "list | set ID NAME",
	does: "the people's display names (people list), or a person's (people set ana Ana Lindqvist), shown wherever they are"}

const peopleUsage = "people takes: people list, or people set ID NAME (e.g. people set ana Ana)"

// people lists the people's display names, or sets one: compass-mcp people set ID NAME.
func people(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c config
	fs := flags(peopleHelp, &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 1 && pos[0] == "list":
	case len(pos) >= 3 && pos[0] == "set":
	default:
		return usageError{peopleUsage}
	}
	c.create = pos[0] == "set"
	db, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	if pos[0] == "list" {
		return ListPeople(ctx, db, stdout, stderr)
	}
	return SetPersonName(ctx, db, pos[1], strings.Join(pos[2:], " "), stdout)
}

// What people prints.

// The people's display names on a terminal (compass-mcp people); the flags are
// cmd/compass-mcp's.

// ListPeople writes the people who have a display name to out, one a line (person:ID, a
// tab, the name); that no one has is said on errs, with how to give one.
func ListPeople(ctx context.Context, db kv.DB, out, errs io.Writer) error {
	named, err := spaces.People(ctx, db)
	if err != nil {
		return fmt.Errorf("listing people: %w", err)
	}
	if len(named) == 0 {
		fmt.Fprintln(errs, "No one has a display name yet: people set ID NAME gives one (e.g. people set ana Ana).")
	}
	for _, p := range named {
		fmt.Fprintf(out, "person:%s\t%s\n", p.ID, p.Name)
	}
	return nil
}

// SetPersonName gives the person id the display name name, shown wherever they are, and
// says so on out.
func SetPersonName(ctx context.Context, db kv.DB, id, name string, out io.Writer) error {
	if err := spaces.SetName(ctx, db, id, name); err != nil {
		return err
	}
	fmt.Fprintf(out, "person:%s shows as %s.\n", id, strings.TrimSpace(name))
	return nil
}
