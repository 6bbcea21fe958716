package docstore

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/linediff"
)

// ExportDir writes every document of the space into dir, made if it isn't there, and
// returns how many it wrote. Each document is two files, named by its title (made safe as
// a file name, at most 80 characters) and its id:
//
//	<name>.<id>.md             its latest text, byte for byte
//	<name>.<id>.history.json   {"id", "title", "deleted" (if it is), "order": "newest first",
//	                            "versions": [{"n", "title", "kind", "author", "at", "added",
//	                            "removed", "changes", "text" (with whole)}, ...]}
//
// where changes is the unified diff of what the version changed from the one before
// (version 1: from nothing), and text, only with whole, the version's whole text. A
// deleted document's files are in dir/deleted. Files of the same names are overwritten.
//
// Versions are streamed to the file a snapshot's worth at a time (see Walk): memory holds
// two versions' texts, and 1,000 versions of a 4 MiB text are not written as 1,000 whole
// copies unless whole asks.
func (s *Store) ExportDir(ctx context.Context, dir string, whole bool) (int, error) {
	docs, err := ReadIn(ctx, s, (*Reader).Documents)
	if err != nil {
		return 0, fmt.Errorf("exporting to %s: %w", dir, err)
	}
	for _, d := range docs {
		if err := s.exportOne(ctx, dir, d, whole); err != nil {
			return 0, fmt.Errorf("exporting %s to %s: %w", d.ID, dir, err)
		}
	}
	return len(docs), nil
}

// exported is one version in a .history.json file.
type exported struct {
	N       int       `json:"n"`
	Title   string    `json:"title"`
	Kind    Kind      `json:"kind"`
	Author  Author    `json:"author"`
	At      time.Time `json:"at"`
	Added   int       `json:"added"`
	Removed int       `json:"removed"`
	Changes string    `json:"changes"`        // unified diff from the version before (version 1: from nothing)
	Text    *string   `json:"text,omitempty"` // with whole
}

func (s *Store) exportOne(ctx context.Context, dir string, d Document, whole bool) (err error) {
	folder := dir
	if d.Deleted != nil {
		folder = filepath.Join(dir, "deleted")
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return err
	}
	base := filepath.Join(folder, exportName(d.Title)+"."+d.ID)
	f, err := os.Create(base + ".history.json")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	head, err := json.Marshal(struct {
		ID      string    `json:"id"`
		Title   string    `json:"title"`
		Deleted *Deletion `json:"deleted,omitempty"`
		Order   string    `json:"order"`
	}{d.ID, d.Title, d.Deleted, "newest first"})
	if err != nil {
		return err
	}
	w.Write(head[:len(head)-1])
	w.WriteString(",\n\"versions\": [")
	first := true
	emit := func(v Version, before *Version) error {
		from, label := "", fmt.Sprintf("%s (nothing)", v.Title)
		if before != nil {
			from, label = before.Text, fmt.Sprintf("%s v%d", before.Title, before.Number)
		}
		e := exported{N: v.Number, Title: v.Title, Kind: v.Kind, Author: v.Author, At: v.At, Added: v.Added, Removed: v.Removed,
			Changes: linediff.Unified(label, fmt.Sprintf("%s v%d", v.Title, v.Number), from, v.Text, 3)}
		if whole {
			e.Text = &v.Text
		}
		raw, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if !first {
			w.WriteString(",")
		}
		first = false
		w.WriteString("\n  ")
		_, err = w.Write(raw)
		return err
	}
	var newer *Version
	err = s.Walk(ctx, d.ID, func(v Version) error {
		if newer == nil {
			if err := os.WriteFile(base+".md", []byte(v.Text), 0o644); err != nil {
				return err
			}
		} else if err := emit(*newer, &v); err != nil {
			return err
		}
		newer = &v
		return nil
	})
	if err != nil {
		return err
	}
	if newer != nil {
		if err := emit(*newer, nil); err != nil {
			return err
		}
	}
	w.WriteString("\n]}\n")
	return w.Flush()
}

// unsafeInName is what exportName replaces: anything but letters, digits and ._ -.
var unsafeInName = regexp.MustCompile(`[^\p{L}\p{N}._ -]+`)

// exportName makes a title safe as a file name on every system.
func exportName(title string) string {
	name := unsafeInName.ReplaceAllString(title, "-")
	name = strings.Trim(name, " .-")
	if len([]rune(name)) > 80 {
		name = string([]rune(name)[:80])
	}
	if name == "" {
		name = "document"
	}
	return name
}
