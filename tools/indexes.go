package tools

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/threads"
)

// EnsureIndexes builds the search indexes of the space's documents and conversations, and
// the links index of its documents, if the data has none yet (it was written before search,
// or before links), so that the first list_documents or list_conversations with a query
// doesn't pay for it: a server calls it before it serves. Past a second, progress is said on
// log, every second.
func EnsureIndexes(ctx context.Context, db kv.DB, space string, log *slog.Logger) error {
	progress := func(what string) func(done, total int) {
		start := time.Now()
		shown := start // the last line shown; the first comes a second in
		return func(done, total int) {
			if now := time.Now(); now.Sub(shown) >= time.Second || (done == total && shown != start) {
				log.Info(what, "done", done, "total", total)
				shown = now
			}
		}
	}
	if err := docstore.New(db, space).EnsureIndex(ctx, progress("indexing documents for search")); err != nil {
		return fmt.Errorf("building the search index of the documents: %w", err)
	}
	if err := threads.New(db, space).EnsureIndex(ctx, progress("indexing conversations for search")); err != nil {
		return fmt.Errorf("building the search index of the conversations: %w", err)
	}
	// The links index is a step of its own, with its own progress.
	if err := docstore.New(db, space).EnsureLinks(ctx, progress("reading the documents' links")); err != nil {
		return fmt.Errorf("building the links index of the documents: %w", err)
	}
	return nil
}
