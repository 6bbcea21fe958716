package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// The seed's parity list, end to end through the command line and the tools: creates,
// saves that merge, clashes on lines and on titles, invalid versions, renames, restores,
// list, history, deletes; then an agent's write from a stale version merges, and from a
// clashing one is refused with the lines shown.
func TestPersonsSide(t *testing.T) {
	t.Parallel()
	data := newData(t)
	run := func(stdin string, args ...string) (string, bool) {
		t.Helper()
		out, err := cliResult(data, stdin, args...)
		return out, err == nil
	}
	must := func(want, stdin string, args ...string) string {
		t.Helper()
		out, ok := run(stdin, args...)
		if !ok || !strings.Contains(out, want) {
			t.Fatalf("compass-mcp %s: ok %v, said %q; want %q", strings.Join(args, " "), ok, out, want)
		}
		return out
	}
	refused := func(want, stdin string, args ...string) {
		t.Helper()
		out, ok := run(stdin, args...)
		if ok || !strings.Contains(out, want) {
			t.Fatalf("compass-mcp %s: ok %v, said %q; want a refusal with %q", strings.Join(args, " "), ok, out, want)
		}
	}
	v1 := "# Launch\n\nRecord the trailer.\nReview the course page.\nBook the studio.\n"
	must("as version 1", v1, "docs", "save", "--new", "Launch plan")
	refused("taken", "x\n", "docs", "save", "--new", "launch PLAN")
	// North edits line 3 through the tools.
	must("as version 2", "", "call", "--agent", "north", "edit_document", "document=launch", "old=Record the trailer.", "new=Record the trailer on Monday.")
	// Ana saves from version 1, changing line 5: merged with North's change.
	must("version 3, merged", strings.Replace(v1, "Book the studio.", "Book the studio for Tuesday.", 1), "docs", "save", "launch plan", "--base", "1")
	show := must("", "", "docs", "show", "launch plan")
	if !strings.Contains(show, "on Monday.") || !strings.Contains(show, "for Tuesday.") {
		t.Fatalf("the merge lost a side:\n%s", show)
	}
	// From version 1 again, changing North's line too: a clash, nothing saved.
	clash := strings.Replace(v1, "Record the trailer.", "Record the trailer twice.", 1)
	refused("both changed the same lines", clash, "docs", "save", "launch plan", "--base", "1")
	if out := must("", "", "docs", "show", "launch plan"); out != show {
		t.Fatalf("a clash changed the text:\n%s", out)
	}
	must("version 4, merged", clash, "docs", "save", "launch plan", "--base", "1", "--mine")
	refused("there's no version 9", "x\n", "docs", "save", "launch plan", "--base", "9")
	refused("there's no version 9", "", "docs", "show", "launch plan", "--version", "9")
	refused("a version is a number", "", "docs", "restore", "launch plan", "zero")
	must("as version 5", "", "docs", "rename", "launch plan", "Trailer plan")
	must("Trailer plan", "", "docs", "list")
	must("as version 6", "", "docs", "restore", "trailer plan", "1")
	if out := must("", "", "docs", "show", "trailer plan"); out != v1 {
		t.Errorf("restore 1 gave %q, want version 1's text", out)
	}
	hist := must("6 versions", "", "docs", "history", "trailer plan")
	for _, kind := range []string{"restore", "rename", "merge", "edit", "save"} {
		if !strings.Contains(hist, kind) {
			t.Errorf("history lacks a %s version:\n%s", kind, hist)
		}
	}
	must("+Book the studio for Tuesday.", "", "docs", "diff", "trailer plan", "1", "3")

	// The agent writes from a stale version: merged; from a clashing one: refused, lines shown.
	c := stdioClient(t, data, "--agent", "north")
	stale := strings.Replace(v1, "Review the course page.", "Review the course page with Ana.", 1)
	if a := callTool(t, c, "write_document", map[string]any{"document": "trailer plan", "text": stale, "version": 6}); a.isError {
		t.Fatalf("a write from the latest version: %s", a.text)
	}
	must("as version 8", strings.Replace(v1, "# Launch", "# Launch (Ana's)", 1), "docs", "save", "trailer plan", "--base", "6")
	merged := callTool(t, c, "write_document", map[string]any{"document": "trailer plan", "text": strings.Replace(stale, "Book the studio.", "Book the big studio.", 1), "version": 7})
	if merged.isError || !strings.Contains(merged.text, "merged with the changes made since your version") {
		t.Fatalf("a write from a stale version: %s", merged.text)
	}
	refusal := callTool(t, c, "write_document", map[string]any{"document": "trailer plan", "text": strings.Replace(v1, "# Launch", "# Launch (North's)", 1), "version": 7})
	if !refusal.isError || !strings.Contains(refusal.text, "# Launch (Ana's)") || !strings.Contains(refusal.text, "# Launch (North's)") || !strings.Contains(refusal.text, "version: 9") {
		t.Fatalf("a clashing write: %s", refusal.text)
	}
	since := callTool(t, c, "read_document", map[string]any{"document": "trailer plan", "since": 7})
	if !strings.Contains(since.text, "+# Launch (Ana's)") || !strings.Contains(since.text, "version 8 · merge · by ana") {
		t.Errorf("read_document since 7:\n%s", since.text)
	}
	c.Close()

	// Deletes: out of listings and lookups, listed as deleted, brought back.
	must("Deleted", "", "docs", "delete", "trailer plan")
	if out := must("", "", "docs", "list"); strings.Contains(out, "Trailer plan") {
		t.Errorf("a deleted document is listed: %s", out)
	}
	must("Trailer plan", "", "docs", "list", "--deleted")
	refused("No document", "", "call", "read_document", "document=trailer plan")
	must("Brought back", "", "docs", "undelete", "trailer plan")
	must("version 9 of 9", "", "call", "read_document", "document=trailer plan")
}

// export writes what every version changed, newest first, and with --whole every
// version's text, byte for byte.
func TestExportKeepsEveryVersion(t *testing.T) {
	t.Parallel()
	data := newData(t)
	texts := []string{"one\n", "one\ntwo", "ünïcödé\r\nand CRLF\r\n", "", "last\n\n\n"}
	cli(t, data, "call", "write_document", "title=Odd: a/b?", "text="+texts[0])
	for _, text := range texts[1:] {
		args := []string{"docs", "save", "Odd: a/b?"}
		if text == "" {
			args = append(args, "--empty") // an empty stdin saves nothing without it
		}
		if out, err := cliResult(data, text, args...); err != nil {
			t.Fatal(out)
		}
	}
	type version struct {
		N       int     `json:"n"`
		Changes string  `json:"changes"`
		Text    *string `json:"text"`
	}
	read := func(dir string) []version {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(dir, "*.history.json"))
		if len(files) != 1 {
			t.Fatalf("export wrote %v", files)
		}
		raw, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Versions []version `json:"versions"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatalf("%v\n%s", err, raw)
		}
		if len(h.Versions) != len(texts) {
			t.Fatalf("export has %d versions, want %d", len(h.Versions), len(texts))
		}
		return h.Versions
	}
	dir := filepath.Join(t.TempDir(), "export")
	cli(t, data, "docs", "export", dir)
	for i, v := range read(dir) {
		n := len(texts) - i
		before := ""
		if n > 1 {
			before = texts[n-2]
		}
		if v.N != n || v.Text != nil {
			t.Errorf("entry %d is version %d with text %v, want version %d without text", i, v.N, v.Text != nil, n)
		}
		if before != texts[n-1] && !strings.Contains(v.Changes, "@@") {
			t.Errorf("version %d's changes: %q, want a unified diff", n, v.Changes)
		}
	}
	whole := filepath.Join(t.TempDir(), "whole")
	cli(t, data, "docs", "export", "--whole", whole)
	for i, v := range read(whole) {
		if n := len(texts) - i; v.N != n || v.Text == nil || *v.Text != texts[n-1] {
			t.Errorf("version %d exported as %v, want %q", n, v.Text, texts[n-1])
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.history.json"))
	md, _ := os.ReadFile(strings.TrimSuffix(files[0], ".history.json") + ".md")
	if string(md) != texts[len(texts)-1] {
		t.Errorf("the .md file has %q, want the latest text", md)
	}
}

// backup copies the data file while a server is using it, and the copy reads. On
// PostgreSQL, backup refuses and names copy, which makes the same bbolt copy of the
// database while the server goes on.
func TestBackupWhileServing(t *testing.T) {
	t.Parallel()
	data := newData(t)
	url, _ := httpServer(t, data, "--agent", "north")
	c := httpClient(t, url, "backup-test")
	if a := callTool(t, c, "write_document", map[string]any{"title": "Kept", "text": "safe\n"}); a.isError {
		t.Fatal(a.text)
	}
	copyPath := filepath.Join(t.TempDir(), "backup.db")
	if kvtest.OnPostgres() {
		if out, err := cliResult(data, "", "backup", copyPath); err == nil || !strings.Contains(out, "compass-mcp copy --from") {
			t.Errorf("backup of a PostgreSQL database: %v, %q; want it refused, naming copy", err, out)
		}
		if out := cli(t, data, "copy", "--from", data, "--to", copyPath); !strings.Contains(out, "Copied") {
			t.Fatalf("copy said %q", out)
		}
	} else if out := cli(t, data, "backup", copyPath); !strings.Contains(out, "Backed up") {
		t.Fatalf("backup said %q", out)
	}
	// The server goes on while the copy is read.
	if a := callTool(t, c, "append_document", map[string]any{"document": "Kept", "text": "after"}); a.isError {
		t.Fatal(a.text)
	}
	if out := cli(t, copyPath, "docs", "show", "Kept"); out != "safe\n" {
		t.Errorf("the backup has %q", out)
	}
}
