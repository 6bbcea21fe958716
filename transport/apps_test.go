package transport

import (
	"net/http"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

const (
	appsInit  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}},"clientInfo":{"name":"apps-host","version":"1"}}}`
	toolsList = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	// The 2026-07-28 form: no initialize, the capabilities in each request's _meta.
	modernList = `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"apps-host","version":"1"},"io.modelcontextprotocol/clientCapabilities":{%s}}}}`
)

// The MCP Apps extension a client declared in initialize is the session's, kept in the
// store: another server on the same store links the view for it too, and still not for a
// session whose client didn't declare it. A 2026-07-28 request declares it in its _meta.
func TestAppsAreTheSessions(t *testing.T) {
	db := kvtest.Open(t)
	a, b := serveTools(t, db), serveTools(t, db)
	code, apps, body := send(t, http.MethodPost, a, "", appsInit)
	if code != http.StatusOK || apps == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	code, plain, body := send(t, http.MethodPost, a, "", initBody)
	if code != http.StatusOK || plain == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	for _, url := range []string{a, b} {
		_, _, got := send(t, http.MethodPost, url, apps, toolsList)
		if !strings.Contains(got, `"ui/resourceUri":"ui://compass/change"`) || !strings.Contains(got, `"undo_change"`) {
			t.Errorf("tools/list on %s for the apps session: no view links in %.300s", url, got)
		}
		_, _, got = send(t, http.MethodPost, url, plain, toolsList)
		if strings.Contains(got, "ui://") || strings.Contains(got, "undo_change") || !strings.Contains(got, "write_document") {
			t.Errorf("tools/list on %s for a session without apps: %.300s", url, got)
		}
	}
	modern := func(caps string) string {
		_, _, got := send(t, http.MethodPost, b, "", strings.Replace(modernList, "%s", caps, 1), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list")
		return got
	}
	if got := modern(`"extensions":{"io.modelcontextprotocol/ui":{}}`); !strings.Contains(got, `"ui/resourceUri":"ui://compass/change"`) {
		t.Errorf("a 2026-07-28 tools/list declaring apps: %.300s", got)
	}
	if got := modern(``); strings.Contains(got, "ui://") || !strings.Contains(got, "write_document") {
		t.Errorf("a 2026-07-28 tools/list without apps: %.300s", got)
	}
}
