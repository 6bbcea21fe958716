package filesync_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
)

// hostileServer serves the sync API's shape on 127.0.0.1 with the listing given: each
// document's text is "pwn".
func hostileServer(t *testing.T, docs []map[string]any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/sync/documents"):
			json.NewEncoder(w).Encode(map[string]any{"writable": true, "by": map[string]string{"by": "agent:sync"}, "documents": docs})
		case strings.HasSuffix(r.URL.Path, "/sync/version"):
			title := ""
			for _, d := range docs {
				if d["id"] == r.URL.Query().Get("id") {
					title = d["title"].(string)
				}
			}
			json.NewEncoder(w).Encode(map[string]any{"n": 1, "title": title, "text": "pwn\n"})
		default:
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"error": "no"})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSyncRefusesAHostileListing: a server whose listing has an id that is a path
// (x/../../../../OUTSIDE/pwn) for a document whose title's file is taken (a folder a.md),
// so that the id goes into the file's name. Before, the sync wrote OUTSIDE/pwn).md four folders above
// the folder; now the listing is refused and nothing is written anywhere.
func TestSyncRefusesAHostileListing(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "c", "vault")
	// A folder a.md: the name of the title "a" is taken, so its document's file gets its id.
	if err := os.MkdirAll(filepath.Join(dir, "a.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := hostileServer(t, []map[string]any{
		{"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "title": "a", "v": 1},
		{"id": "x/../../../../OUTSIDE/pwn", "title": "a", "v": 1},
	})
	var said strings.Builder
	y := &filesync.Sync{Space: &filesync.Remote{URL: srv.URL, Space: "personal"}, Dir: dir, Say: &said}
	_, err := y.Once(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no compass-mcp server makes") {
		t.Errorf("a listing with a path for an id: %v, want it refused", err)
	}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, ".compass") {
			t.Errorf("the sync wrote %s", p)
		}
		return nil
	})
	for _, bad := range []string{"", "01ARZ3NDEKTSV4RRFFQ69G5FA", "01ARZ3NDEKTSV4RRFFQ69G5FAVV", "01arz3ndektsv4rrffq69g5fav", "81ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAI", "01ARZ3NDEKTSV4RRFFQ69G5F/V"} {
		if docstore.ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

// TestSyncKeepsFilesBeneathTheFolder: a link inside the folder to a folder outside it
// (link -> elsewhere). An agent's document "link/evil" was written to elsewhere/evil.md,
// and the next pass, whose scan (rightly) doesn't follow the link, deleted the document; a
// document renamed to "link/moved" had its file moved out the same way. Now neither file
// leaves the folder, both documents stay, and each is said once.
func TestSyncKeepsFilesBeneathTheFolder(t *testing.T) {
	f := newFolder(t)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
	evil := check[docstore.Saved](t)(f.s.Create(f.ctx, "link/evil", "# evil\n", docstore.KindWrite, north))
	plain := check[docstore.Saved](t)(f.s.Create(f.ctx, "plain", "# plain\n", docstore.KindWrite, north))
	f.once()
	if f.get("plain.md") != "# plain\n" {
		t.Fatalf("plain.md: %q", f.get("plain.md"))
	}
	check[docstore.Saved](t)(f.s.Rename(f.ctx, plain.Document.ID, "link/moved", north))
	for range 3 {
		f.once()
	}
	entries, _ := os.ReadDir(elsewhere)
	for _, e := range entries {
		t.Errorf("the sync wrote %s outside the folder", filepath.Join(elsewhere, e.Name()))
	}
	for _, id := range []string{evil.Document.ID, plain.Document.ID} {
		if d, _ := f.doc(id); d.Deleted != nil {
			t.Errorf("%q was deleted", d.Title)
		}
	}
	if f.get("plain.md") != "# plain\n" {
		t.Errorf("plain.md, whose document's new name is through the link: %q, want it kept", f.get("plain.md"))
	}
	if n := strings.Count(f.say.String(), `"link/evil" is not synced`); n != 1 {
		t.Errorf("the skip of link/evil was said %d times, want once:\n%s", n, f.say)
	}
	if !strings.Contains(f.say.String(), "can't move to link/moved.md") {
		t.Errorf("the move through the link was not said:\n%s", f.say)
	}
}

// TestSyncNeverDeletesWhatItIgnores: an agent's titles whose files the scan would ignore
// ("#", "~", "4913", ".tmp", a folder in .compassignore) were written and, read as gone
// by the next pass, deleted; a pattern added to .compassignore deleted the documents of
// files synced already. Now such titles get names the scan reads, a document whose file
// the sync ignores is left alone and said once, and a file that becomes ignored stops
// syncing with its document kept.
func TestSyncNeverDeletesWhatItIgnores(t *testing.T) {
	f := newFolder(t)
	f.put(".compassignore", "Drafts/\n")
	f.put("Private/a.md", "# a\n")
	f.put("b.md", "# b\n")
	f.once()
	titles := []string{"#tags", "backup~", "4913", "notes.tmp", "Drafts/x", "#folder/y"}
	for _, title := range titles {
		check[docstore.Saved](t)(f.s.Create(f.ctx, title, "# "+title+"\n", docstore.KindWrite, north))
	}
	for range 3 {
		f.once()
	}
	f.put(".compassignore", "Drafts/\nPrivate/\n")
	for range 3 {
		f.once()
	}
	live := f.titles()
	for _, title := range append(titles, "Private/a", "b") {
		if live[title] == "" {
			t.Errorf("%q was deleted\nsaid: %s", title, f.say)
		}
	}
	for rel, want := range map[string]string{"_tags.md": "# #tags\n", "backup-.md": "# backup~\n", "4913_.md": "# 4913\n", "notes.tmp_.md": "# notes.tmp\n", "_folder/y.md": "# #folder/y\n", "Drafts/x.md": "<none>"} {
		if got := f.get(rel); got != want {
			t.Errorf("%s: %q, want %q", rel, got, want)
		}
	}
	for _, says := range []string{`"Drafts/x" is not synced`, `"Private/a" is not synced`} {
		if n := strings.Count(f.say.String(), says); n != 1 {
			t.Errorf("%s: said %d times, want once:\n%s", says, n, f.say)
		}
	}
}

// TestSyncGuardCountsAWindow: files removed one at a time (a cloud client evicting them,
// a script with a sleep) deleted every document but the last: the guard counted a pass.
// Now the deletes of the last ten minutes count together against the folder's largest
// size then: twelve removals a second apart stop as twelve at once would, at the third
// (more than a fifth of 12), and once the window has passed, a removal is one again. The
// clock is the test's.
func TestSyncGuardCountsAWindow(t *testing.T) {
	f := newFolder(t)
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	f.y.Now = func() time.Time { return now }
	for i := range 12 {
		f.put(fmt.Sprintf("n%02d.md", i), fmt.Sprintf("# %d\n", i))
	}
	f.once()
	var err error
	removed := 0
	for i := range 12 {
		now = now.Add(time.Second)
		os.Remove(filepath.Join(f.dir, fmt.Sprintf("n%02d.md", i)))
		removed++
		if _, err = f.y.Once(f.ctx); err != nil {
			break
		}
	}
	if !errors.Is(err, filesync.ErrTooManyDeletes) || removed != 3 {
		t.Fatalf("after %d removals a second apart: %v, want the third stopped", removed, err)
	}
	if n := len(f.titles()); n != 10 {
		t.Errorf("%d documents left, want 10 (two deleted)", n)
	}
	now = now.Add(11 * time.Minute)
	if rep := f.once(); rep.Deleted != 1 {
		t.Errorf("after the window, a removal: %+v", rep)
	}
}

// TestSyncRefusesNestedFolders: syncs of DIR and DIR/sub copied each other's documents a
// folder deeper every pass. A folder inside, or holding, one whose lock another sync
// holds is refused, naming it; a lock left by a sync that ended is no lock.
func TestSyncRefusesNestedFolders(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "notes", "sub")
	os.MkdirAll(sub, 0o755)
	release, err := filesync.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := filesync.Lock(sub); !errors.Is(err, filesync.ErrNested) || !strings.Contains(err.Error(), dir) {
		t.Errorf("a folder inside a synced one: %v", err)
	}
	release()
	release, err = filesync.Lock(sub)
	if err != nil {
		t.Fatalf("the folder inside, once the outer sync ended: %v", err)
	}
	if _, err := filesync.Lock(dir); !errors.Is(err, filesync.ErrNested) || !strings.Contains(err.Error(), sub) {
		t.Errorf("a folder holding a synced one: %v", err)
	}
	release()
	if release, err = filesync.Lock(dir); err != nil {
		t.Errorf("the outer folder, once the inner sync ended: %v", err)
	} else {
		release()
	}
}
