package web

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/icon"
)

// The icon is served to anyone, signed in or not (MCP clients fetch it for the server's
// tools, browsers as the favicon), as the icon package has it, and every page names it.
func TestIconServedToAnyone(t *testing.T) {
	f := newFixture(t)
	for path, want := range map[string]struct {
		mime string
		b    []byte
	}{
		icon.SVGPath:   {"image/svg+xml", icon.SVG},
		icon.PNGPath:   {"image/png", icon.PNG48},
		"/favicon.ico": {"image/png", icon.PNG48},
	} {
		resp := f.get(http.DefaultClient, path)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want.mime || !bytes.Equal(b, want.b) {
			t.Errorf("GET %s: %d %s, %d bytes; want 200 %s, %d bytes", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(b), want.mime, len(want.b))
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: without the page's headers", path)
		}
	}
	page := body(t, f.get(f.client(), "/"))
	if !strings.Contains(page, `<link rel="icon" href="/icon.svg" type="image/svg+xml">`) {
		t.Errorf("the sign-in page names no icon:\n%s", page)
	}
}
