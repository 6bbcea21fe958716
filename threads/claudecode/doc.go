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
//
// # Caveats
//
// What a transcript says is not trusted to say where it goes: a session id is a UUID, as
// Claude Code's are (another sessionId is the file's own session), and the import adds only
// to conversations of its Origin, claude-code (threads.Store.ImportParts refuses the
// others: a transcript can't write into the chat bridge's #pricing). Only regular files
// are read (a FIFO named *.jsonl would block an open for good), and one pass reads about
// passBudget bytes of a file, a sparse file's holes skipped, so that no file can make a
// pass long.
package claudecode
