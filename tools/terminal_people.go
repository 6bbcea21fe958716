package tools

import (
	"fmt"
	"io"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The people's display names on a terminal (compass-mcp people); the flags are
// cmd/compass-mcp's.

// ListPeople writes the people who have a display name to out, one a line (person:ID, a
// tab, the name); that no one has is said on errs, with how to give one.
func ListPeople(db kv.DB, out, errs io.Writer) error {
	named, err := spaces.People(db)
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
func SetPersonName(db kv.DB, id, name string, out io.Writer) error {
	if err := spaces.SetName(db, id, name); err != nil {
		return err
	}
	fmt.Fprintf(out, "person:%s shows as %s.\n", id, strings.TrimSpace(name))
	return nil
}
