package main

import (
	"io"
	"strings"

	"github.com/compass-mcp/compass-mcp/tools"
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
		return tools.ListPeople(db, stdout, stderr)
	}
	return tools.SetPersonName(db, pos[1], strings.Join(pos[2:], " "), stdout)
}
