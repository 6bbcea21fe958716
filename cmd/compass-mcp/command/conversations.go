package command

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"errors"
	"time"

	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"

	"github.com/compass-mcp/compass-mcp/threads/claudecode"
)

var importHelp = subcommand{name: "import", args: "FILE | --claude-code [DIR] [--project PATH] [--follow]",
	does: "conversations in: JSON Lines or a Claude export's conversations.json (- for stdin);\nor Claude Code's sessions (default ~/.claude/projects), once or as they grow",
	more: "A bad line of FILE is reported with its number, and nothing of FILE is imported; the same lines\nimported twice add nothing. docs/CLI.md has the JSON Lines' fields."}

// importConversations reads JSON Lines or a Claude export (FILE, or - for stdin) into the space.
func importConversations(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	var c config
	fs := flags(importHelp, &c)
	project, follow, poll := claudeCodeFlags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if fs.Lookup("claude-code").Value.String() == "true" {
		return importClaudeCode(ctx, c, pos, *project, *follow, *poll, stdout)
	}
	if *project != "" || *follow {
		return usageError{"--project and --follow are for Claude Code's sessions: import --claude-code [DIR] --project PATH [--follow]"}
	}
	if len(pos) != 1 {
		return usageError{"import takes one FILE (JSON Lines, or a Claude export's conversations.json), or - for stdin"}
	}
	in := stdin
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	c.create = true
	db, err := c.openAs(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	return ImportConversations(ctx, threads.New(db, c.space), c.space, c.me, in, stdout, os.Stderr)
}

var sayHelp = subcommand{name: "say", args: "CONVERSATION TEXT [--from person:ID|agent:NAME] [--to agent:NAME] [--private] [--title T]",
	does: "add one message (the conversation is made if new)"}

// say adds one message to a conversation, creating it if new.
func say(ctx context.Context, args []string, stdout io.Writer) error {
	var c config
	fs := flags(sayHelp, &c)
	from := fs.String("from", "", `who says it: person:ID or agent:NAME (default: person:<--for>)`)
	to := fs.String("to", "", "if set, the agent addressed: agent:NAME")
	title := fs.String("title", "", "if set, the conversation's title")
	private := fs.Bool("private", false, "if set, an agent's private step: kept, never shown by the tools")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usageError{"say takes CONVERSATION TEXT: compass-mcp say pricing 'We settled on 12 a month.'"}
	}
	if err := c.person(); err != nil {
		return err
	}
	if *from == "" {
		*from = spaces.Person(c.me).String()
	}
	m := threads.Message{Text: strings.Join(pos[1:], " "), Private: *private}
	for _, a := range []struct {
		flag string
		val  *string
		to   *string
	}{{"from", from, &m.From}, {"to", to, &m.To}} {
		if *a.val == "" {
			continue
		}
		actor, err := spaces.ParseActor(*a.val)
		if err != nil || !strings.Contains(*a.val, ":") {
			return usageError{fmt.Sprintf("--%s takes person:ID or agent:NAME; got %q", a.flag, *a.val)}
		}
		*a.to = actor.String()
	}
	c.create = true
	db, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	saved, err := threads.New(db, c.space).Say(ctx, pos[0], *title, m)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Added message %s to conversation %s.\n", saved.ID, pos[0])
	return nil
}

const conversationsUsage = `conversations takes:
  conversations list                     the space's conversations: id, title, messages, latest
  conversations delete ID [ID ...]       those conversations, every message and private step, gone for good
  conversations delete --all             every conversation of the space, gone for good`

var conversationsHelp = subcommand{name: "conversations", args: "list | delete ID ... | delete --all",
	does: "the space's conversations, or deleting them for good (docs/PRIVACY.md)"}

// conversationsCmd lists the space's conversations, or deletes some or all of them for good:
// the person's way to take back what was shared into the space (docs/PRIVACY.md).
func conversationsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c config
	fs := flags(conversationsHelp, &c)
	all := fs.Bool("all", false, "delete: if set, every conversation of the space")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 1 && pos[0] == "list" && !*all:
	case len(pos) >= 1 && pos[0] == "delete" && (len(pos) > 1) != *all:
	default:
		return usageError{conversationsUsage}
	}
	db, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	store := threads.New(db, c.space)
	if pos[0] == "list" {
		return ListConversations(ctx, store, c.space, stdout, stderr)
	}
	return DeleteConversations(ctx, store, c.space, pos[1:], *all, stdout)
}

// What import, conversations and their subcommands print.

// The person's side of the space's conversations on a terminal (compass-mcp conversations,
// import): importing them, listing them, and deleting them for good (docs/PRIVACY.md). The
// flags are cmd/compass-mcp's.

// ImportConversations imports JSON Lines or a Claude export from in into store, as the
// person me, and says on out what it imported. An import that takes longer than a moment
// says on errs how far it has read, every couple of seconds. A bad line of in is an error
// (a *threads.ImportError, saying where), and then nothing of in was imported.
func ImportConversations(ctx context.Context, store *threads.Store, space, me string, in io.Reader, out, errs io.Writer) error {
	start, said := time.Now(), time.Now()
	progress := func(done int) {
		// Said only when it takes longer than a moment, and then every couple of seconds.
		if time.Since(start) > time.Second && time.Since(said) > 2*time.Second {
			fmt.Fprintf(errs, "compass-mcp: %d messages read…\n", done)
			said = time.Now()
		}
	}
	sum, err := store.Import(ctx, in, me, progress)
	if err != nil {
		return fmt.Errorf("nothing was imported: %w", err)
	}
	fmt.Fprintf(out, "Imported %s and %s into space %s; %s already there.\n",
		Plural(sum.Conversations, "conversation"), Plural(sum.Messages, "message"), space, Plural(sum.Skipped, "message"))
	return nil
}

// ImportClaudeCode imports what is new in cc's transcripts, into space, once, and says on
// out what it imported, and the lines it skipped as not JSON.
func ImportClaudeCode(ctx context.Context, cc *claudecode.Importer, space string, out io.Writer) error {
	sum, err := cc.Import(ctx)
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
func ListConversations(ctx context.Context, store *threads.Store, space string, out, errs io.Writer) error {
	convs, err := threads.ReadIn(ctx, store, func(r *threads.Reader) ([]threads.Conversation, error) { return r.Recent(1<<30, "") })
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
func DeleteConversations(ctx context.Context, store *threads.Store, space string, ids []string, all bool, out io.Writer) error {
	if all {
		n, err := store.DeleteAll(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Deleted %s of space %s, for good.\n", Plural(n, "conversation"), space)
		return nil
	}
	for _, id := range ids {
		gone, err := store.Delete(ctx, id)
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
