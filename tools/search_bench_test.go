package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
)

// BenchmarkReadDocumentLines is read_document of 40 lines in the middle of a 1 MB
// document (20,000 lines), beside reading it whole.
func BenchmarkReadDocumentLines(b *testing.B) {
	s := storeFor(b, "lines-1mb", func(ctx context.Context, db kv.DB) (string, error) {
		saved, err := docstore.New(db, "personal").Create(ctx, "Big", joinLines(noteText(20_000, 1)), docstore.KindWrite, benchAuthor)
		return saved.Document.ID, err
	})
	c := benchClient(b, s.db, "")
	for _, lines := range []string{"10000-10039", ""} {
		name := "lines=" + lines
		if lines == "" {
			name = "whole"
		}
		b.Run(name, func(b *testing.B) {
			args := map[string]any{"document": s.id}
			if lines != "" {
				args["lines"] = lines
			}
			for b.Loop() {
				if got := benchCall(b, c, "read_document", args); !strings.Contains(got, "line 10000,") {
					b.Fatalf("read_document: %.200s", got)
				}
			}
		})
	}
}
