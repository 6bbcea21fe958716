package transport

import (
	"os"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// TestMain hands the transport the tools' limits, as the command does.
func TestMain(m *testing.M) {
	SetLimits(Limits{Text: docstore.MaxText})
	os.Exit(m.Run())
}
