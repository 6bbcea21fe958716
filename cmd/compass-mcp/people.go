package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/compass-mcp/compass-mcp/spaces"
)

var peopleHelp = subcommand{name: "people", args: "list | set ID NAME",
	does: "the people's display names (people list), or a person's (people set ana Ana Lindqvist), shown wherever they are"}

const peopleUsage = "people takes: people list, or people set ID NAME (e.g. people set ana Ana)"

// people lists the people's display names, or sets one: compass-mcp people set ID NAME.
func people(args []string, stdout, stderr io.Writer) error {
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
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	if pos[0] == "list" {
		named, err := spaces.People(db)
		if err != nil {
			return fmt.Errorf("listing people: %w", err)
		}
		if len(named) == 0 {
			fmt.Fprintln(stderr, "No one has a display name yet: people set ID NAME gives one (e.g. people set ana Ana).")
		}
		for _, p := range named {
			fmt.Fprintf(stdout, "person:%s\t%s\n", p.ID, p.Name)
		}
		return nil
	}
	id, name := pos[1], strings.Join(pos[2:], " ")
	if err := spaces.SetName(db, id, name); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "person:%s shows as %s.\n", id, strings.TrimSpace(name))
	return nil
}
