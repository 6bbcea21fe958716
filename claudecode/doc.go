// Package claudecode imports Claude Code's session transcripts into a space's conversations
// and follows them as they grow.
//
// Claude Code keeps each session as JSON Lines under ~/.claude/projects/<project>/<session>.jsonl
// (and its sub-agents' under <session>/subagents/agent-<id>.jsonl, their records naming the
// parent session). Its maker does not document the format and it changes between versions,
// so everything here is liberal: a record of a type or shape it doesn't know is skipped, a
// line that isn't JSON is counted and skipped, and nothing in a transcript fails an import.
//
// A session is the conversation with its id; the person's prompts and the assistant's text
// are messages people read, and its steps (thinking, tool calls and their results), Claude
// Code's own notes, slash commands and sub-agents' transcripts are private ones. An Importer
// reads each file from where it last stopped (Pass), and goes on as they grow (Follow).
package claudecode
