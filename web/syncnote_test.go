package web

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
)

// A folder's first sync that meets a document of a file's title saves the file's text and
// keeps the space's as a proposal whose Note says where it came from ("kept from the space
// when the folder joined", as docs proposals prints it); every page that shows the
// proposal says it too: the inbox, the document's banner, its proposals, the proposal's
// own page. A note is text: escaped, and cut at about NoteBytes.
func TestJoinNoteOnThePage(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	made, err := f.docs.Create(ctx, "Road", "road\nthe agent's line\n", docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Road.md"), []byte("road\nmy line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sync := &filesync.Sync{Store: f.docs, Dir: dir, By: docstore.Author{By: "agent:sync", For: "person:ana"}, Say: io.Discard}
	if rep, err := sync.Once(ctx); err != nil || rep.Joined != 1 || rep.Clashes != 1 {
		t.Fatalf("the sync's first pass: %+v, %v; want the file joined to Road, the space's text kept", rep, err)
	}
	c := f.client()
	f.signIn(c, "/")
	const note = `<p class="sync-note">kept from the space when the folder joined: the file&#39;s text was saved, and this is the document&#39;s text as it was</p>`
	for _, path := range []string{"/inbox", "/document/" + id, "/document/" + id + "/proposal/1"} {
		if got := body(t, f.get(c, path)); !strings.Contains(strings.ReplaceAll(got, ` id="note"`, ""), note) {
			t.Errorf("%s lacks the join's note %q:\n%s", path, note, got)
		}
	}
	if got := body(t, f.get(c, "/document/"+id+"/proposals")); !strings.Contains(got, `<tr class="sync-note"><td colspan="6">kept from the space when the folder joined: the file&#39;s text`) {
		t.Errorf("the document's proposals lack the join's note:\n%s", got)
	}

	// A note the store took from elsewhere: markup stays text, and a long one is cut.
	hostile := "<script>alert(1)</script> " + strings.Repeat("é", 400)
	if _, p, err := f.docs.SaveKeeping(ctx, id, 0, "road\nanother line\n", docstore.Author{By: "person:ana"}, hostile); err != nil || p == nil {
		t.Fatalf("a second proposal with a note: %v, %v", p, err)
	}
	for _, path := range []string{"/inbox", "/document/" + id, "/document/" + id + "/proposals", "/document/" + id + "/proposal/2"} {
		got := body(t, f.get(c, path))
		if strings.Contains(got, "<script>alert") || !strings.Contains(got, "&lt;script&gt;alert(1)&lt;/script&gt; "+strings.Repeat("é", 137)+"…<") {
			t.Errorf("%s shows the note unescaped or uncut:\n%s", path, got)
		}
	}
}
