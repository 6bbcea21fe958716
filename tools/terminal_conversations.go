package tools

import (
	"errors"
	"fmt"
	"io"

	"github.com/compass-mcp/compass-mcp/threads"
)

// The person's side of the space's conversations on a terminal (compass-mcp conversations):
// listing them, and deleting them for good (docs/PRIVACY.md). The flags are cmd/compass-mcp's.

// ListConversations writes the space's conversations to out, one a line; none is said on errs.
func ListConversations(store *threads.Store, space string, out, errs io.Writer) error {
	convs, err := store.Recent(1<<30, "")
	if err != nil {
		return err
	}
	if len(convs) == 0 {
		fmt.Fprintf(errs, "No conversations in space %s.\n", space)
	}
	for _, cv := range convs {
		fmt.Fprintf(out, "%s\t%q\t%s\tlatest %s\n", cv.ID, cv.Title, Plural(cv.Count, "message"), cv.Last.Local().Format("2006-01-02 15:04"))
	}
	return nil
}

// DeleteConversations deletes the conversations ids (all: every one of the space) for good,
// saying so on out; at the first id that names nothing it stops.
func DeleteConversations(store *threads.Store, space string, ids []string, all bool, out io.Writer) error {
	if all {
		n, err := store.DeleteAll()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Deleted %s of space %s, for good.\n", Plural(n, "conversation"), space)
		return nil
	}
	for _, id := range ids {
		gone, err := store.Delete(id)
		if errors.Is(err, threads.ErrNotFound) {
			return fmt.Errorf("space %s has no conversation %q (conversations list shows them); nothing more was deleted", space, id)
		}
		if err != nil {
			return err
		}
		name := gone.ID
		if gone.Title != "" {
			name += fmt.Sprintf(" %q", gone.Title)
		}
		fmt.Fprintf(out, "Deleted conversation %s and its %s, for good.\n", name, Plural(gone.Count, "message"))
	}
	return nil
}
