// Package charter holds the words the model reads: the server's instructions, the tools'
// descriptions and the charter prompt.
//
// They are kept short on purpose: every conversation pays for them in its context.
package charter

// Rule is the charter's rule for documents, said once in the instructions and, briefly, in
// each writing tool's description (WriteRule).
const Rule = "Read a document before you edit it; keep others' work (edit or append rather than rewrite it whole); change only your part; leave it coherent."

// WriteRule is the rule as the writing tools' descriptions end with it.
const WriteRule = " Read it first; keep others' work; change only your part."

// Instructions is what the server tells the model once, at the start of a session. A
// client may defer the tools (Claude Code shows the model only their names until it loads
// one), so these words alone must say which tool does what: every tool is named with its
// use. At most 1.5 KB (tools' budget test).
const Instructions = `This server holds the documents and conversations of one shared space.

**What you make goes into a document of this space, not only into the chat**: a plan, a draft, a decision. A later turn, yours too, won't find the work as you left it unless it is in a document: the chat scrolls away, the document stays.

**The document carries the work, not the chat.** Each document is the deliverable of one thing being made and its working memory: the current draft, argument, decision and open questions. ` + Rule + ` Every save is a version people can compare. Update it as you work, not at the end; improve it instead of starting a rival copy in the chat, and link it when you mention it.

The tools:
- list_documents: what is here; query searches it.
- read_document: a document's text; since: only what changed after a version you read.
- edit_document: replace one passage; append_document: add at the end.
- write_document: a new document, or a whole text replaced.
- comment_document: ask the person about some lines rather than guess.
- list_conversations, read_conversation: what people said in other conversations here; read them instead of asking people to repeat themselves.`

// PromptName is the name of the MCP prompt that carries the charter.
const PromptName = "charter"

// PromptDescription is the charter prompt's description.
const PromptDescription = "How to work with this space's documents and conversations."

// Tool descriptions, one a tool. Every version is kept, so no writing tool loses what others
// wrote; rewriting a whole text is still the way their lines get dropped from the latest
// version, which is why the rule says to edit or append.
const (
	ListDocuments = "The space's documents, latest saved first: each a link with id, version, size, who saved it, how it opens. " +
		"query ranks them by a question or words, with their best lines."
	ReadDocument = "Read a document as Markdown, ending with its links. " +
		"version: an older one; since: changes after a version, as a diff; lines (120-180) or section (a heading): one part."
	WriteDocument = "Make a document (title, text), or replace a named one's whole text. For part of one, use edit_document or append_document. " +
		"When replacing, give the version your text was based on: later changes are merged, a clash refused." + WriteRule
	AppendDocument    = "Add text at the end of a document, after a blank line." + WriteRule
	EditDocument      = "Replace text occurring once in a document (old, copied exactly) with new." + WriteRule
	CommentDocument   = "Comment on lines of a document, reply (reply_to) or resolve one of yours. Ask the person here rather than guess." + WriteRule
	ListConversations = "Conversations people shared into this space, latest first: how each opened and where it is now. query searches what was said."
	ReadConversation  = "A conversation of this space, a page at a time, oldest first; before pages back."
)
