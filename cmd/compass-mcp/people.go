package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/compass-mcp/compass-mcp/spaces"
)

// people sets a person's display name: compass-mcp people set ID NAME.
func people(args []string, stdout io.Writer) error {
	var c config
	fs := flags("people", &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 3 || pos[0] != "set" {
		return usageError{"people takes: people set ID NAME (e.g. people set ana Ana)"}
	}
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	id, name := pos[1], strings.Join(pos[2:], " ")
	if err := spaces.SetName(db, id, name); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "person:%s shows as %s.\n", id, strings.TrimSpace(name))
	return nil
}
