// Package docstore keeps a space's Markdown documents and every version of them in the store
// (package kv: a bbolt file or a PostgreSQL database, the same on both).
//
// A Store is one space's view of the store: every lookup, by id or by title, goes
// through that space's bucket (see package spaces), so another space's document is not
// found, exactly as if it did not exist.
//
// # Caveats
//
// Every change (Create, Write, Append, Edit) reads the document and writes its new version
// in one write transaction, and a store runs one at a time (a PostgreSQL database across
// every server on it): nothing can come between, so a change is never made
// from an old version. A change that leaves both text and title as they are makes no
// version and says so (Saved.Unchanged).
//
// Ids are ULIDs made inside the write transaction from one monotonic source, so they sort
// by creation even when many goroutines create documents at once.
//
// # Layout
//
// Inside the space's bucket:
//
//	docs/<id>                     the document's record (JSON): title, latest version, who, when
//	doc_titles/<lower(title)>     id: titles are unique in a space, compared case-insensitively
//	doc_alike/<alike(title)>      id: a title's look-alike key (NFKC, spaces folded: alike.go)
//	doc_recent/<saved ns><id>     nothing: the listing index, latest saved last
//	doc_versions/<id><n>          each version (see record), n as 8 bytes big-endian;
//	                              files written before keep doc_versions/<id>/<n>
//	doc_meta/count                how many documents there are
//	doc_search/...                the search index of the latest titles and texts (see
//	                              search.Index), of documents not deleted
//	doc_proposals/<id><n>         the agents' proposals (see Proposing), n as 8 bytes
//	doc_open/<id><n>              nothing: the proposals waiting for the person
//	doc_decisions/<id><n>         what the person decided of them, the n-th decision of the document
//	doc_comments/<id><n>          comments on lines, and replies (see Comment)
//	doc_unresolved/<id><n>        nothing: the comments not resolved
//	doc_anchors/<id>              where the open comments are in the latest version
//	doc_links/...                 the links index: each document's links, the links to each,
//	                              the broken ones by the title they name (see links.go)
//	doc_inbox/<who>0<at><id><k><n>
//	                              nothing: what waits for whom (see inbox.go)
//	doc_inbox_n/n<who>            how many wait for them; and the key that says the inbox is built
//	doc_activity/<at ns><id><what><n>
//	                              what happened, by time (see activity.go): an Event each
//
// A new version changes the record and the indexes in the order of indexes.go's list, which
// also says which indexes a store written before them is given by View when a read needs one.
package docstore

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// Kind says what made a version.
type Kind string

// The kinds of version. Agents' tools make write, append and edit; the person's side makes the rest.
const (
	KindWrite   Kind = "write"
	KindAppend  Kind = "append"
	KindEdit    Kind = "edit"
	KindSave    Kind = "save"
	KindMerge   Kind = "merge"
	KindRestore Kind = "restore"
	KindRename  Kind = "rename"
	// KindAccept is a proposal the person accepted (see Store.Accept): its Author is the
	// agent that proposed it, for whom, and who accepted it.
	KindAccept Kind = "accept"
	// KindRelink is a document's [[links]] to another one rewritten to its new title, by
	// that one's change of title (see Store.Rename), by whoever made it.
	KindRelink Kind = "relink"
)

// Limits on what a document may hold.
const (
	// MaxText is the largest text a version may have, in bytes.
	MaxText = 8 << 20
	// MaxTitle is the longest title, in characters.
	MaxTitle = 200
)

// Author says who saved a version: By is "agent:north" or "person:ana"; For, when an agent
// saved it, is the person it was saved for.
type Author struct {
	By  string `json:"by"`
	For string `json:"for,omitempty"`
	// Accepted, on a version of kind accept, is the person who accepted the proposal By
	// made: "person:ana".
	Accepted string `json:"accepted,omitempty"`
	// Door is how the change came in (DoorMCP, DoorPage, DoorCLI, DoorSync, DoorAccept);
	// "" on what was made before doors were recorded.
	Door string `json:"door,omitempty"`
	// Client is, through DoorMCP, the MCP client's name as it gave it ("claude-code").
	Client string `json:"client,omitempty"`
	// Session is the run of changes the change belongs to (see SessionGap): one MCP
	// session, one browser signed in, one pass of a sync; "" when it has none (the command
	// line, and what was made before sessions were recorded).
	Session string `json:"session,omitempty"`
}

// The doors a change comes in by (Author.Door).
const (
	DoorMCP    = "mcp"    // an agent's tool call; Author.Client names the client
	DoorPage   = "page"   // the person's page
	DoorCLI    = "cli"    // the command line (compass-mcp docs ...)
	DoorSync   = "sync"   // the folder sync
	DoorAccept = "accept" // a proposal the person accepted (its Session is the proposal's)
)

// SessionGap is how long a stateless client (MCP's 2026-07-28 protocol, which has no
// sessions) may stay silent and its next change still be of the same session: its client
// and agent, for the same person, with no gap longer than this.
const SessionGap = 30 * time.Minute

// NewSession returns a new session id: prefix (one letter: 'm' an MCP connection, 'p' a
// browser, 'y' a sync) and 16 hex digits.
func NewSession(prefix byte) string {
	var b [8]byte
	rand.Read(b[:])
	return string(prefix) + hex.EncodeToString(b[:])
}

// SessionOf is the session id a secret (an MCP session's id, a browser's cookie) is
// recorded as: a hash, never the secret, since who made a version is shown to everyone
// who may see the space.
func SessionOf(prefix byte, secret string) string {
	h := sha256.Sum256([]byte(secret))
	return string(prefix) + hex.EncodeToString(h[:8])
}

// Via says the door in words: "via Claude Code" (the client's name), "via the page", ...;
// "before sessions were recorded" for a change made before doors were.
func (a Author) Via() string {
	switch a.Door {
	case "":
		return "before sessions were recorded"
	case DoorMCP:
		if a.Client != "" {
			return "via " + a.Client
		}
		return "via MCP"
	case DoorPage:
		return "via the page"
	case DoorCLI:
		return "via the command line"
	case DoorSync:
		return "via the folder sync"
	case DoorAccept:
		if a.Client != "" {
			return "proposed via " + a.Client
		}
		return "proposed"
	}
	return "via " + a.Door
}

// Document is what is known of a document without reading its text.
type Document struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Version int       `json:"version"`           // the latest version's number
	Saved   time.Time `json:"saved"`             // when the latest version was saved
	Author  Author    `json:"author"`            // who saved the latest version
	Bytes   int       `json:"bytes"`             // size of the latest text
	Opens   string    `json:"opens"`             // the latest text's first non-empty line, at most 400 bytes
	Deleted *Deletion `json:"deleted,omitempty"` // set while the document is deleted
	Review  *Review   `json:"review,omitempty"`  // its proposals and comments; nil when it never had any

	// Largest is the size of the largest text a version of it has had, as far as its
	// record knows: saves since it was kept count every version's, a record written
	// before counts from its last two (0 until its next save: Bytes stands for it). It
	// weighs what rebuilding an old version may hold (Weight).
	Largest int `json:"largest,omitempty"`
}

// Review counts what a document has beside its versions: the agents' proposals and the
// comments on its lines. A document that never had either has none (Document.Review nil),
// so reading it costs nothing more.
type Review struct {
	Proposals  int `json:"proposals,omitempty"`  // the last proposal's number
	Open       int `json:"open,omitempty"`       // proposals waiting for the person
	Decided    int `json:"decided,omitempty"`    // the last decision's number (accepted, merged or declined)
	Comments   int `json:"comments,omitempty"`   // the last comment's number (replies too)
	Unresolved int `json:"unresolved,omitempty"` // comments (not replies) not resolved
}

// Version is one saved state of a document.
type Version struct {
	Number  int       `json:"n"`
	Title   string    `json:"title"`
	Text    string    `json:"text"`
	Kind    Kind      `json:"kind"`
	Author  Author    `json:"author"`
	At      time.Time `json:"at"`
	Added   int       `json:"added"`   // lines added against the version before
	Removed int       `json:"removed"` // lines removed against the version before
}

// Saved is the outcome of a change.
type Saved struct {
	Document  Document
	Added     int
	Removed   int
	Kind      Kind // the kind of the version made
	Unchanged bool // the change left text and title as they were: no version was made
	// Proposal, on a Store made by Proposing, is the proposal the change was kept as:
	// no version was made, and Added and Removed count its lines against its base.
	Proposal *Proposal
	// Names, with a Proposal, has the name of the person its author works for (By.For) as
	// the write's transaction had it: its answer names who is to review it, with no read of
	// its own.
	Names spaces.Names
	// Diff is the line diff the write worked out, from the latest version to the version
	// made (or to the Proposal's text): what a front door shows of the change, with no read
	// or diff of its own. Nil for a new document and when nothing changed.
	Diff *Diff
	// Relinked, for a change of title, is how many documents of the space (this one too,
	// for its links to itself) had their [[links]] to it rewritten to the new title, each
	// as a version of kind relink by the same author (see Store.Rename); RelinkLeft, how
	// many were to be and were left as they were, a later transaction of them having failed.
	Relinked, RelinkLeft int
}

// Diff is a change's line diff: Old and New are the texts' lines, each ending in "\n" (a
// text without a final line break is given one), and Ops the runs that turn Old into New.
type Diff struct {
	Old, New []string
	Ops      []linediff.Op
}

var (
	// ErrNotFound is returned when the space has no document of that id or title; lookups
	// by name return it as a *NotFoundError, which says which titles are close.
	ErrNotFound = errors.New("no such document in this space")
	// ErrEmptyOld is returned by Edit when the text to replace is empty.
	ErrEmptyOld = errors.New("the text to replace is empty")
	// ErrBadTitle is returned (wrapped, with the reason) for an empty, over-long or multi-line title.
	ErrBadTitle = errors.New("bad title")
	// ErrBadText is returned (wrapped, with the reason) for a text that is too large, not UTF-8, or has NUL bytes.
	ErrBadText = errors.New("bad text")
)

// NotFoundError is returned when no document has a name: it is ErrNotFound (errors.Is
// says so), with the titles close to the name, closest first, for the refusal to suggest.
type NotFoundError struct {
	Name  string
	Close []Document // at most three; none when no title is close
}

func (e *NotFoundError) Error() string {
	if len(e.Close) == 0 {
		return ErrNotFound.Error()
	}
	titles := make([]string, len(e.Close))
	for i, d := range e.Close {
		titles[i] = fmt.Sprintf("%q", d.Title)
	}
	return fmt.Sprintf("%s (close: %s)", ErrNotFound, strings.Join(titles, ", "))
}

// Is tells errors.Is that a NotFoundError is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// AmbiguousError is returned when a name is no id or exact title and several titles contain it.
type AmbiguousError struct {
	Name    string
	Matches []Document // at most 10
	More    int        // matches beyond those
}

func (e *AmbiguousError) Error() string {
	titles := make([]string, len(e.Matches))
	for i, d := range e.Matches {
		titles[i] = fmt.Sprintf("%q", d.Title)
	}
	return fmt.Sprintf("%q could be %s", e.Name, strings.Join(titles, ", "))
}

// TitleTakenError is returned when a new title is already another document's in the space,
// or (Alike) looks the same as another's: alike.go.
type TitleTakenError struct {
	Title string
	Other Document
	Alike bool // Other's title is not Title but looks the same (alikeKey)
}

func (e *TitleTakenError) Error() string {
	if e.Alike {
		return fmt.Sprintf("the title %q looks the same as %q, document %s's", e.Title, e.Other.Title, e.Other.ID)
	}
	return fmt.Sprintf("the title %q is taken by document %s", e.Title, e.Other.ID)
}

// NoVersionError is returned when a version number outside 1..Document.Version is asked for.
type NoVersionError struct {
	Document Document
	Asked    int
}

func (e *NoVersionError) Error() string {
	return fmt.Sprintf("%s has versions 1 to %d, not %d", e.Document.Title, e.Document.Version, e.Asked)
}
