package main

import (
	"fmt"
	"os"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/threads"
)

// ensureIndexes builds the search indexes of the space's documents and conversations, and
// the links index of its documents, if the file has none yet (it was written before
// search, or before links), before serving, so the first search doesn't pay for it. Past a
// second, progress is shown on stderr.
func ensureIndexes(db kv.DB, space string) error {
	start := time.Now()
	shown := start // the last line shown; the first comes a second in
	progress := func(what string) func(done, total int) {
		return func(done, total int) {
			if now := time.Now(); now.Sub(shown) >= time.Second || (done == total && shown != start) {
				fmt.Fprintf(os.Stderr, "compass-mcp: indexing %s for search: %d of %d\n", what, done, total)
				shown = now
			}
		}
	}
	if err := docstore.New(db, space).EnsureIndex(progress("documents")); err != nil {
		return fmt.Errorf("building the search index of the documents: %w", err)
	}
	if err := threads.New(db, space).EnsureIndex(progress("conversations")); err != nil {
		return fmt.Errorf("building the search index of the conversations: %w", err)
	}
	return ensureLinks(db, space)
}

// ensureLinks builds the links index of the space's documents if the file has none yet
// (it was written before links), as ensureIndexes does the search indexes: a step of its
// own, with its own progress past a second.
func ensureLinks(db kv.DB, space string) error {
	start := time.Now()
	shown := start
	progress := func(done, total int) {
		if now := time.Now(); now.Sub(shown) >= time.Second || (done == total && shown != start) {
			fmt.Fprintf(os.Stderr, "compass-mcp: reading the documents' links: %d of %d\n", done, total)
			shown = now
		}
	}
	if err := docstore.New(db, space).EnsureLinks(progress); err != nil {
		return fmt.Errorf("building the links index of the documents: %w", err)
	}
	return nil
}
