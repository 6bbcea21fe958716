package docstore_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
)

// ExportDir writes each document's latest text and its history, newest first, each
// version with what it changed and, with whole, its text byte for byte; a deleted
// document goes under deleted/; a title no file system takes is made a safe name.
func TestExportDirKeepsEveryVersion(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	texts := []string{"one\n", "one\ntwo", "ünïcödé\r\nand CRLF\r\n", "", "last\n\n\n"}
	saved, err := s.Create(ctx, "Odd: a/b?", texts[0], docstore.KindSave, north)
	if err != nil {
		t.Fatal(err)
	}
	id := saved.Document.ID
	for _, text := range texts[1:] {
		if _, err := s.Save(ctx, id, 0, text, north, linediff.Clash); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := s.Create(ctx, "../Gone", "bye\n", docstore.KindSave, north)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, gone.Document.ID, north); err != nil {
		t.Fatal(err)
	}
	type version struct {
		N       int     `json:"n"`
		Changes string  `json:"changes"`
		Text    *string `json:"text"`
	}
	read := func(path string) (versions []version) {
		t.Helper()
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			ID       string    `json:"id"`
			Order    string    `json:"order"`
			Versions []version `json:"versions"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatalf("%v\n%s", err, raw)
		}
		if h.Order != "newest first" || !strings.Contains(path, h.ID) {
			t.Errorf("%s: id %q, order %q", path, h.ID, h.Order)
		}
		return h.Versions
	}
	for _, whole := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "export")
		n, err := s.ExportDir(ctx, dir, whole)
		if err != nil || n != 2 {
			t.Fatalf("ExportDir: %d, %v; want 2 documents", n, err)
		}
		base := filepath.Join(dir, "Odd- a-b."+id)
		vs := read(base + ".history.json")
		if len(vs) != len(texts) {
			t.Fatalf("%d versions exported, want %d", len(vs), len(texts))
		}
		for i, v := range vs {
			n := len(texts) - i
			if v.N != n {
				t.Errorf("entry %d is version %d, want %d", i, v.N, n)
			}
			before := ""
			if n > 1 {
				before = texts[n-2]
			}
			if before != texts[n-1] && !strings.Contains(v.Changes, "@@") {
				t.Errorf("version %d's changes: %q, want a unified diff", n, v.Changes)
			}
			if whole != (v.Text != nil) || whole && *v.Text != texts[n-1] {
				t.Errorf("version %d with whole %v exported text %v, want %q", n, whole, v.Text, texts[n-1])
			}
		}
		if md, err := os.ReadFile(base + ".md"); err != nil || string(md) != texts[len(texts)-1] {
			t.Errorf("the .md file has %q (%v), want the latest text", md, err)
		}
		deleted, _ := filepath.Glob(filepath.Join(dir, "deleted", "Gone."+gone.Document.ID+".*"))
		if len(deleted) != 2 {
			t.Errorf("the deleted document's files: %v", deleted)
		}
		if all, _ := filepath.Glob(filepath.Join(dir, "*")); len(all) != 3 { // two files and deleted/
			t.Errorf("the folder holds %v", all)
		}
	}
}

// A folder that can't be made is an error naming it, not a partial success.
func TestExportDirSaysWhereItFailed(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	if _, err := s.Create(ctx, "A", "a\n", docstore.KindSave, north); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ExportDir(ctx, file, false); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("exporting into a file: %d, %v; want an error naming it", n, err)
	}
}
