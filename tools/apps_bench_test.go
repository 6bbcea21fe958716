package tools_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/tools"
)

// What the change view costs a write: the same edit_document on a 100 KB document (one line
// changed), and a rewrite of half the lines of 1 MB, for a client without MCP Apps and one
// with them (one more read, the diff, the view's data in _meta).
//
//	go test ./tools -run '^$' -bench BenchmarkChangeView -benchtime 50x -count 3
func BenchmarkChangeView(b *testing.B) {
	for _, size := range []struct {
		name  string
		lines int
		half  bool
	}{{"edit-100KB", 2000, false}, {"rewrite-half-1MB", 20000, true}} {
		for _, apps := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/apps=%v", size.name, apps), func(b *testing.B) {
				db := kvtest.Open(b)
				s := newAppsSession(b, db, tools.Config{Agent: "north", For: "ana", LinkBase: appsBase}, apps)
				text := func(round int) string {
					var sb strings.Builder
					for i := range size.lines {
						if size.half && i%2 == 0 {
							fmt.Fprintf(&sb, "L%05d of round %d, changed on every round %s\n", i, round, strings.Repeat("y", 12))
						} else {
							fmt.Fprintf(&sb, "L%05d stays as it was, %s\n", i, strings.Repeat("x", 20))
						}
					}
					return sb.String()
				}
				s.call(b, "write_document", map[string]any{"title": "Bench", "text": text(0)})
				texts := []string{text(1), text(2)}
				for i := 0; b.Loop(); i++ {
					args := map[string]any{"document": "Bench", "old": fmt.Sprintf("L%05d stays", i), "new": fmt.Sprintf("L%05d moved", i)}
					tool := "edit_document"
					if size.half {
						tool, args = "write_document", map[string]any{"document": "Bench", "text": texts[i%2]}
					}
					if res := s.call(b, tool, args); res.IsError {
						b.Fatal(textOf(res))
					}
				}
			})
		}
	}
}
