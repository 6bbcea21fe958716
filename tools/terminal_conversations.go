package tools

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/compass-mcp/compass-mcp/threads/claudecode"
)

// The person's side of the space's conversations on a terminal (compass-mcp conversations,
// import): importing them, listing them, and deleting them for good (docs/PRIVACY.md). The
// flags are cmd/compass-mcp's.

// ImportConversations imports JSON Lines or a Claude export from in into store, as the
// person me, and says on out what it imported. An import that takes longer than a moment
// says on errs how far it has read, every couple of seconds. A bad line of in is an error
// (a *threads.ImportError, saying where), and then nothing of in was imported.
func ImportConversations(store *threads.Store, space, me string, in io.Reader, out, errs io.Writer) error {
	start, said := time.Now(), time.Now()
	progress := func(done int) {
		// Said only when it takes longer than a moment, and then every couple of seconds.
		if time.Since(start) > time.Second && time.Since(said) > 2*time.Second {
			fmt.Fprintf(errs, "compass-mcp: %d messages read…\n", done)
			said = time.Now()
		}
	}
	sum, err := store.Import(in, me, progress)
	if err != nil {
		return fmt.Errorf("nothing was imported: %w", err)
	}
	fmt.Fprintf(out, "Imported %s and %s into space %s; %s already there.\n",
		Plural(sum.Conversations, "conversation"), Plural(sum.Messages, "message"), space, Plural(sum.Skipped, "message"))
	return nil
}

// ImportClaudeCode imports what is new in cc's transcripts, into space, once, and says on
// out what it imported, and the lines it skipped as not JSON.
func ImportClaudeCode(cc *claudecode.Importer, space string, out io.Writer) error {
	sum, err := cc.Import()
	if err != nil {
		return fmt.Errorf("importing Claude Code sessions: %w", err)
	}
	fmt.Fprintf(out, "Imported %s and %s from %s into space %s; %s already there.\n",
		Plural(sum.Conversations, "conversation"), Plural(sum.Messages, "message"), Plural(sum.Files, "transcript"), space, Plural(sum.Skipped, "message"))
	if sum.Unreadable > 0 {
		fmt.Fprintf(out, "Skipped %s: not JSON.\n", Plural(sum.Unreadable, "line"))
	}
	return nil
}

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
