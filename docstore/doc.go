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
//	doc_recent/<saved ns><id>     nothing: the listing index, latest saved last
//	doc_versions/<id><n>          each version (see record), n as 8 bytes big-endian;
//	                              files written before keep doc_versions/<id>/<n>
//	doc_meta/count                how many documents there are
//	doc_search/...                the search index of the latest titles and texts (see
//	                              search.Index), of documents not deleted
//	doc_links/...                 the links index: each document's links, the links to each,
//	                              the broken ones by the title they name (see links.go)
package docstore

import (
	"errors"
	"fmt"
	"strings"
	"time"
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
}

var (
	// ErrNotFound is returned when the space has no document of that id or title.
	ErrNotFound = errors.New("no such document in this space")
	// ErrEmptyOld is returned by Edit when the text to replace is empty.
	ErrEmptyOld = errors.New("the text to replace is empty")
	// ErrBadTitle is returned (wrapped, with the reason) for an empty, over-long or multi-line title.
	ErrBadTitle = errors.New("bad title")
	// ErrBadText is returned (wrapped, with the reason) for a text that is too large, not UTF-8, or has NUL bytes.
	ErrBadText = errors.New("bad text")
)

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

// TitleTakenError is returned when a new title is already another document's in the space.
type TitleTakenError struct {
	Title string
	Other Document
}

func (e *TitleTakenError) Error() string {
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
