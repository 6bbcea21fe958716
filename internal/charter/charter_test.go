package charter

import (
	"strings"
	"testing"
)

// The two things the origin system's instructions say that make a model start a document, and
// keep using it: what is made goes into a document, and why.
func TestInstructionsSayWhereTheWorkGoesAndWhy(t *testing.T) {
	for _, want := range []string{
		"goes into a document of this space, not only into the chat",
		"a plan, a draft, a decision",
		"A later turn, yours too, won't find the work",
	} {
		if !strings.Contains(Instructions, want) {
			t.Errorf("Instructions don't say %q", want)
		}
	}
}

// Each writing tool carries the rule briefly, and none says a change loses others' work:
// every version is kept.
func TestWritingToolsSayTheRule(t *testing.T) {
	for name, d := range map[string]string{"write_document": WriteDocument, "append_document": AppendDocument, "edit_document": EditDocument} {
		for _, want := range []string{"Read it first", "keep others' work", "change only your part"} {
			if !strings.Contains(d, want) {
				t.Errorf("%s's description lacks %q: %s", name, want, d)
			}
		}
		if strings.Contains(strings.ToLower(d), "lose") {
			t.Errorf("%s's description says something is lost, but every version is kept: %s", name, d)
		}
	}
	for name, d := range map[string]string{"list_documents": ListDocuments, "read_document": ReadDocument, "list_conversations": ListConversations, "read_conversation": ReadConversation} {
		if strings.Contains(d, WriteRule) {
			t.Errorf("%s only reads, yet its description carries the writing rule", name)
		}
	}
}

// A client that defers the tools (Claude Code) shows the model the instructions and the
// tools' names only: the instructions name each tool, with a word of what it is for.
func TestInstructionsNameEveryTool(t *testing.T) {
	for _, name := range []string{"list_documents", "read_document", "write_document", "append_document", "edit_document", "comment_document", "list_conversations", "read_conversation"} {
		if !strings.Contains(Instructions, name+":") && !strings.Contains(Instructions, name+",") {
			t.Errorf("Instructions don't say what %s is for", name)
		}
	}
}
