// Package toolcalls is the one table of tool calls that both measure what the model reads:
// tools' byte budgets (tools/budget_test.go) and Claude Code's golden transcripts
// (e2e/claudecode). Each space they run on holds the same seed: "Launch plan" written,
// appended to and edited to version 3, and the conversation "pricing".
package toolcalls

// Call is one tools/call: an answer (Refuse false) or a refusal of a tool.
type Call struct {
	Tool   string
	Args   map[string]any
	Refuse bool
}

// Each is an answer and a refusal of each of the eight tools, in an order that leaves each
// answer the same whatever came before.
var Each = []Call{
	{"list_documents", map[string]any{}, false},
	{"list_documents", map[string]any{"limit": 0}, true},
	{"read_document", map[string]any{"document": "Launch plan", "since": 2}, false},
	{"read_document", map[string]any{"document": "Lanch plann"}, true},
	{"write_document", map[string]any{"title": "Trailer notes", "text": "Music by Ben.\nVoice-over on Friday.\n"}, false},
	{"write_document", map[string]any{"title": "Launch plan", "text": "A rival copy."}, true},
	{"append_document", map[string]any{"document": "Launch plan", "text": "Send the cut to Ana."}, false},
	{"append_document", map[string]any{"document": "Nothing such", "text": "x"}, true},
	{"edit_document", map[string]any{"document": "Launch plan", "old": "Review the course page.", "new": "Review the course page with Ben."}, false},
	{"edit_document", map[string]any{"document": "Launch plan", "old": "not in it", "new": "y"}, true},
	{"comment_document", map[string]any{"document": "Launch plan", "lines": "3", "text": "Wednesday or Thursday?"}, false},
	{"comment_document", map[string]any{"document": "Launch plan", "lines": "99", "text": "?"}, true},
	{"list_conversations", map[string]any{}, false},
	{"list_conversations", map[string]any{"limit": 0}, true},
	{"read_conversation", map[string]any{"conversation": "pricing"}, false},
	{"read_conversation", map[string]any{"conversation": "nope"}, true},
}
