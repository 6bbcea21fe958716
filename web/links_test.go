package web

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// The link base is the one given, else this process's page once it serves one, else
// (no page anywhere) the documents' resource URIs.
func TestLinks(t *testing.T) {
	db := kvtest.Open(t)
	path := filepath.Join(t.TempDir(), "compass.db")
	if got := NewLinks("https://compass.example.com/", db, path).Base(); got != "https://compass.example.com" {
		t.Errorf("given: %q", got)
	}
	l := NewLinks("", db, path)
	if got := l.Base(); got != NoPage {
		t.Errorf("no page served: %q, want %q", got, NoPage)
	}
	l.Serving("http://127.0.0.1:7411")
	if got := l.Base(); got != "http://127.0.0.1:7411" {
		t.Errorf("serving: %q", got)
	}
}

func TestURLOf(t *testing.T) {
	for addr, want := range map[string]string{
		"0.0.0.0:7411":   "http://127.0.0.1:7411",
		"[::]:7411":      "http://127.0.0.1:7411",
		"127.0.0.1:7411": "http://127.0.0.1:7411",
		"[::1]:7411":     "http://[::1]:7411",
	} {
		tcp, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := URLOf(tcp); got != want {
			t.Errorf("URLOf(%s) = %q, want %q", addr, got, want)
		}
	}
}
