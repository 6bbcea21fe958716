// Package charter holds the words the model reads: the server's instructions, the tools'
// descriptions and the charter prompt.
//
// They are kept short on purpose: every conversation pays for them in its context.
package charter

// Rule is the charter's rule for documents, said once in the instructions and, briefly, in
// each writing tool's description (WriteRule).
const Rule = "Read a document before you edit it; keep others' work (edit or append rather than rewrite it whole); change only your part; leave it coherent."

// WriteRule is the rule as the writing tools' descriptions end with it.
const WriteRule = " Read it first (read_document); keep others' work; change only your part."

// Instructions is what the server tells the model once, at the start of a session.
const Instructions = `This server holds the documents and conversations of one shared space.

**What you make goes into a document of this space, not only into the chat**: a plan, a draft, a decision. A later turn, yours too, won't find the work as you left it unless it is in a document: the chat scrolls away, the document stays.

**The document carries the work, not the chat.** Each document (list_documents, read_document, edit_document, append_document, write_document) is the deliverable of one thing being made and its working memory: the current draft, argument, decision and open questions. ` + Rule + ` Every save is a version people can compare. Update it as you work, not at the end; improve it instead of starting a rival copy in the chat, and link it when you mention it.

**Other conversations here** (list_conversations, read_conversation): read them instead of asking people to repeat themselves.`

// PromptName is the name of the MCP prompt that carries the charter.
const PromptName = "charter"

// PromptDescription is the charter prompt's description.
const PromptDescription = "How to work with this space's documents and conversations."

// Tool descriptions, one a tool. Every version is kept, so no writing tool loses what others
// wrote; rewriting a whole text is still the way their lines get dropped from the latest
// version, which is why the rule says to edit or append.
const (
	ListDocuments = "List this space's documents, latest saved first: each a link, with its id, version, size, who saved it last and when, and how it opens. " +
		"To find something, search instead of listing: query (a question, words, \"a phrase\") ranks the documents that have them, best first, with their best lines."
	ReadDocument = "Read a document (by title or id) as Markdown with its version. version reads an older one; since (a version) shows only what changed after it, as a diff, with who changed it. " +
		"lines (120-180) or section (a heading) reads only part of a long document, numbered. A whole read ends with its links."
	WriteDocument = "Make a new document (title and text), or, naming one (document), replace its whole text (and title, if given). To change part of a document, edit_document or append_document keep the rest as it is. " +
		"When replacing, give version (the one your text was based on): changes made since are merged with yours, and a clash is refused, not saved." + WriteRule
	AppendDocument    = "Add text at the end of a document, after one blank line; everything already there stays." + WriteRule
	EditDocument      = "Replace text that occurs exactly once in a document (old, copied exactly from read_document) with new: the way to change part of a document without rewriting the rest." + WriteRule
	CommentDocument   = "Comment on a document's lines (lines, text), reply (reply_to, text) or resolve one. Ask the person here rather than guess; resolve once your edit answers it." + WriteRule
	ListConversations = "List the other conversations people shared into this space, latest first: how each opened and where it is now. query searches what was said instead, with the matching lines."
	ReadConversation  = "Read a conversation of this space (by id), a page at a time, oldest first; before pages back."
)
