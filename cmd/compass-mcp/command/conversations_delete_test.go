package command

import (
	"path/filepath"
	"strings"
	"testing"
)

// The person deletes a conversation shared into the space, or all of them, from the command
// line, while the agent's server runs: it is gone from list_conversations and
// read_conversation at once, another space's is kept, and a mistyped id deletes nothing.
func TestConversationsDelete(t *testing.T) {
	t.Parallel()
	data := newData(t)
	cli(t, data, "import", filepath.Join("..", "..", "..", "testdata", "import", "pricing.jsonl"))
	cli(t, data, "say", "standup", "Nothing new.", "--title", "Standup")
	cli(t, data, "say", "--space", "launch", "pricing", "Launch's own pricing talk.")
	c := stdioClient(t, data, "--agent", "north")

	list := cli(t, data, "conversations", "list")
	if !strings.Contains(list, "pricing\t\"Pricing\"\t") || !strings.Contains(list, "standup\t\"Standup\"\t1 message\t") {
		t.Fatalf("conversations list:\n%s", list)
	}
	if out, err := cliResult(data, "", "conversations", "delete", "pricng"); err == nil || !strings.Contains(out, `no conversation "pricng"`) {
		t.Errorf("delete of a mistyped id: %v\n%s", err, out)
	}
	if out, err := cliResult(data, "", "conversations", "delete"); err == nil || !strings.Contains(out, "conversations delete --all") {
		t.Errorf("delete of nothing: %v\n%s", err, out)
	}
	if out := cli(t, data, "conversations", "delete", "pricing"); !strings.HasPrefix(out, `Deleted conversation pricing "Pricing" and its `) {
		t.Errorf("delete: %s", out)
	}
	if a := callTool(t, c, "list_conversations", map[string]any{}); strings.Contains(a.text, "pricing") || !strings.Contains(a.text, "standup") || !strings.Contains(a.text, "trailer") {
		t.Errorf("list_conversations after the delete: %s", a.text)
	}
	if a := callTool(t, c, "read_conversation", map[string]any{"conversation": "pricing"}); !a.isError {
		t.Errorf("read_conversation of the deleted one: %s", a.text)
	}
	if a := callTool(t, c, "list_conversations", map[string]any{"query": "settled"}); strings.Contains(a.text, "pricing") {
		t.Errorf("a search after the delete: %s", a.text)
	}
	if out := cli(t, data, "conversations", "delete", "--all"); out != "Deleted 2 conversations of space personal, for good.\n" {
		t.Errorf("delete --all: %q", out)
	}
	if a := callTool(t, c, "list_conversations", map[string]any{}); !strings.Contains(a.text, "No other conversations") {
		t.Errorf("list_conversations after delete --all: %s", a.text)
	}
	if list := cli(t, data, "conversations", "list", "--space", "launch"); !strings.HasPrefix(list, "pricing\t") {
		t.Errorf("launch's conversations after personal's were deleted:\n%s", list)
	}
}
