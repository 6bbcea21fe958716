package bolt_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv/bolt"
)

// A file that isn't a compass-mcp data file (--data given the wrong file) is refused saying
// what it seems to hold and what to do, and is left as it was; before, bbolt's words alone:
// "invalid database".
func TestOpenNotADataFile(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		content []byte
		what    string
	}{
		"notes.md":   {[]byte(strings.Repeat("# Launch plan\n\nRecord the trailer on Monday.\n", 200)), "text"},
		"tiny.txt":   {[]byte("hello\n"), "text"},
		"export.zip": {append([]byte("PK\x03\x04"), make([]byte, 8000)...), "zip"},
		"app.sqlite": {append([]byte("SQLite format 3\x00"), make([]byte, 8000)...), "SQLite"},
		"blob.bin":   {bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 4096), "data"},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, c.content, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := bolt.OpenFile(path, time.Second, 0)
		if err == nil || !strings.Contains(err.Error(), "not a compass-mcp data file") || !strings.Contains(err.Error(), c.what) || !strings.Contains(err.Error(), "--data") {
			t.Errorf("opening %s: %v; want it named not a compass-mcp data file, holding %s, and what to do", name, err, c.what)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, c.content) {
			t.Errorf("%s was changed by the attempt", name)
		}
	}
}
