package linediff

import (
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testtool"
)

// tool finds a program a test compares against (testtool.Find: skipped without it, failed
// with CI=true).
func tool(t *testing.T, name string) string {
	t.Helper()
	return testtool.Find(t, name, "apt-get install "+name)
}
