package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/compass-mcp/compass-mcp/tools"
)

var importHelp = subcommand{name: "import", args: "FILE | --claude-code [DIR] [--project PATH] [--follow]",
	does: "conversations in: JSON Lines or a Claude export's conversations.json (- for stdin);\nor Claude Code's sessions (default ~/.claude/projects), once or as they grow",
	more: "A bad line of FILE is reported with its number, and nothing of FILE is imported; the same lines\nimported twice add nothing. docs/CLI.md has the JSON Lines' fields."}

// importConversations reads JSON Lines or a Claude export (FILE, or - for stdin) into the space.
func importConversations(args []string, stdin io.Reader, stdout io.Writer) error {
	var c config
	fs := flags(importHelp, &c)
	project, follow, poll := claudeCodeFlags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if fs.Lookup("claude-code").Value.String() == "true" {
		return importClaudeCode(c, pos, *project, *follow, *poll, stdout)
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
	if err := c.person(); err != nil {
		return err
	}
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	return tools.ImportConversations(threads.New(db, c.space), c.space, c.me, in, stdout, os.Stderr)
}

var sayHelp = subcommand{name: "say", args: "CONVERSATION TEXT [--from person:ID|agent:NAME] [--to agent:NAME] [--private] [--title T]",
	does: "add one message (the conversation is made if new)"}

// say adds one message to a conversation, creating it if new.
func say(args []string, stdout io.Writer) error {
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
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	saved, err := threads.New(db, c.space).Say(pos[0], *title, m)
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
func conversationsCmd(args []string, stdout, stderr io.Writer) error {
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
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	store := threads.New(db, c.space)
	if pos[0] == "list" {
		return tools.ListConversations(store, c.space, stdout, stderr)
	}
	return tools.DeleteConversations(store, c.space, pos[1:], *all, stdout)
}
