package kvtest_test

import (
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

func TestBolt(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.DB { return kvtest.OpenBolt(t) })
}
