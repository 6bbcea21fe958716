package command

import (
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// Each version records its door and session: an MCP client by its name, its connection
// one session (stdio: the process's; HTTP: the Mcp-Session-Id's hash, never the id); the
// command line with none. docs history says the door.
func TestVersionsRecordDoorAndSession(t *testing.T) {
	data := newData(t)
	one := stdioClient(t, data, "--agent", "north")
	callTool(t, one, "write_document", map[string]any{"title": "Launch plan", "text": "# Launch plan\n\none\n"})
	callTool(t, one, "append_document", map[string]any{"document": "Launch plan", "text": "two"})
	two := stdioClient(t, data, "--agent", "north")
	callTool(t, two, "append_document", map[string]any{"document": "Launch plan", "text": "three"})
	url, _ := httpServer(t, data, "--agent", "south")
	over := httpClient(t, url, "Other Client")
	callTool(t, over, "append_document", map[string]any{"document": "Launch plan", "text": "four"})
	callTool(t, over, "append_document", map[string]any{"document": "Launch plan", "text": "five"})
	cliResult(data, "# Launch plan\n\nmine\n", "docs", "save", "Launch plan")

	db := kvtest.OpenData(t, data)
	vs, err := view(t, docstore.New(db, "personal"), versionsOf("Launch plan"))
	db.Close()
	if err != nil || len(vs) != 6 {
		t.Fatalf("versions: %v, %v", vs, err)
	}
	a := func(n int) docstore.Author { return vs[len(vs)-n].Author }
	for n := 1; n <= 5; n++ {
		if a(n).Door != docstore.DoorMCP || a(n).Session == "" {
			t.Errorf("version %d: door %q, session %q", n, a(n).Door, a(n).Session)
		}
	}
	if a(1).Client != "test-client" || a(4).Client != "Other Client" {
		t.Errorf("clients: %q, %q", a(1).Client, a(4).Client)
	}
	if a(1).Session != a(2).Session || a(2).Session == a(3).Session || a(4).Session != a(5).Session || a(3).Session == a(4).Session {
		t.Errorf("sessions: %q %q | %q | %q %q", a(1).Session, a(2).Session, a(3).Session, a(4).Session, a(5).Session)
	}
	if a(6).Door != docstore.DoorCLI || a(6).Session != "" {
		t.Errorf("the command line's version: %+v", a(6))
	}
	out := cli(t, data, "docs", "history", "Launch plan")
	for _, want := range []string{"(via the command line)", "(via test-client)", "(via Other Client)"} {
		if !strings.Contains(out, want) {
			t.Errorf("docs history lacks %q:\n%s", want, out)
		}
	}
}
