package filesync

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// State is what the sync remembers of a folder and a space between passes, kept in the
// folder's .compass/sync-SPACE.json (the sync ignores dot folders, and the file is the
// folder's, so it moves with it): for each document, the file it is in step with and
// what that file was when it last was.
type State struct {
	Space string            `json:"space"`
	Docs  map[string]*Entry `json:"docs"` // by document id
	// Pending are clashes whose proposal an older sync had not made yet, by document id:
	// read for one release (finishPending); this sync saves a clash in one commit.
	Pending map[string]*Pending `json:"pending,omitempty"`
	// Creating are the new files a pass is making documents of, written before it makes
	// them: a sync killed before its pass's end finds the documents they made (by their
	// titles) and keeps them as those files' (adoptCreated), instead of making a second
	// document of a file moved meanwhile.
	Creating []*Entry `json:"creating,omitempty"`
	// Joining are the new files a pass is joining to the documents of their titles (a
	// first run), written before it joins them: a sync killed meanwhile finds those
	// documents as the files' (adoptJoined), instead of making a second document of a file
	// moved before it starts again.
	Joining []*Entry `json:"joining,omitempty"`
	// Writing are the files a pass is writing for new documents, by document id, written
	// before it writes them: a sync killed before its pass's end finds those files (moved,
	// too) as the documents' (adoptWritten), instead of making a document of each; a file
	// it never wrote is written by the next pass.
	Writing map[string]*Entry `json:"writing,omitempty"`
	// Window is what the guards remember of the last passes (deleteWindow).
	Window *Window `json:"window,omitempty"`

	read []byte // the bytes loaded, so that a pass that changed nothing writes nothing
}

// Pending is a clash saved (or about to be) whose proposal is still to make: the version
// the file's text was made from, and that text.
type Pending struct {
	Base int    `json:"base"`
	Text string `json:"text"`
}

// Entry is one document's file as the sync last left it in step with the space.
type Entry struct {
	Path    string `json:"path"`    // slash-separated, relative to the folder
	Title   string `json:"title"`   // the document's title then
	Version int    `json:"version"` // the version the file's text is (or was merged into)
	Hash    string `json:"hash"`    // sha256 of the file's bytes, hex
	Size    int64  `json:"size"`
	MTime   int64  `json:"mtime"` // nanoseconds since 1970
	Inode   uint64 `json:"inode,omitempty"`
	// Held are versions the file held before the sync wrote later ones over it (newest
	// last, at most heldLimit): a save from an editor's buffer kept from before derives
	// from one of them (derivedBase).
	Held []int `json:"held,omitempty"`
}

func statePath(dir, space string) string {
	return filepath.Join(dir, ".compass", "sync-"+space+".json")
}

// loadState reads the folder's state for space; a folder never synced has none (empty).
func loadState(dir, space string) (*State, error) {
	st := &State{Space: space, Docs: map[string]*Entry{}}
	raw, err := readRegularUpTo(statePath(dir, space), 1<<30)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	st.read = raw
	if err := json.Unmarshal(raw, st); err != nil {
		return nil, fmt.Errorf("reading the sync's state %s: %w (move it away to sync the folder afresh: files and documents of the same titles are joined)", statePath(dir, space), err)
	}
	if st.Docs == nil {
		st.Docs = map[string]*Entry{}
	}
	return st, nil
}

// save writes the state atomically (a temporary file, fsync, rename).
func (st *State) save(dir string) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if bytes.Equal(raw, st.read) {
		return nil
	}
	st.read = raw
	p := statePath(dir, st.Space)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// A vault in git must not commit the state: a checkout of another branch would then
	// take it away or bring another's.
	ignore := filepath.Join(filepath.Dir(p), ".gitignore")
	if _, err := os.Stat(ignore); errors.Is(err, os.ErrNotExist) {
		os.WriteFile(ignore, []byte("# compass-mcp sync's state: this machine's, not the vault's\n*\n"), 0o644)
	}
	return writeAtomic(p, raw)
}

// writeAtomic writes b to p through a temporary file in p's folder, synced, then renamed
// over p: a reader (an editor, Obsidian, a crash) sees the old bytes or the new, never half.
func writeAtomic(p string, b []byte) error {
	tmp, _, err := writeTemp(p, b)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(p)
	return nil
}

// writeTemp writes b to a new temporary file beside p (a dotfile: the sync ignores it),
// synced, and returns its name and what stat said of it (a rename keeps its inode, size
// and time, so a stat after the rename, which could see another's save, is not needed).
func writeTemp(p string, b []byte) (string, fs.FileInfo, error) {
	f, err := createTemp(filepath.Dir(p))
	if err != nil {
		return "", nil, err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	var info fs.FileInfo
	if err == nil {
		info, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", nil, err
	}
	return f.Name(), info, nil
}

// syncDir makes a rename or link in p's folder durable.
func syncDir(p string) {
	if d, err := os.Open(filepath.Dir(p)); err == nil {
		d.Sync()
		d.Close()
	}
}

// createTemp makes a new temporary file in dir (".compass-RANDOM.tmp": a dotfile, which
// the sync ignores) with the mode an editor's new file gets, 0666 less the umask (0644
// typically): os.CreateTemp's 0600 would make the sync's files unlike their neighbours.
func createTemp(dir string) (*os.File, error) {
	for range 100 {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(filepath.Join(dir, ".compass-"+hex.EncodeToString(r[:])+".tmp"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("no temporary file could be made in %s", dir)
}
