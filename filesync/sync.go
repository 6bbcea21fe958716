package filesync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
)

// The errors a pass stops with, having changed nothing.
var (
	// ErrFolderMissing is returned when the folder isn't there (or isn't a folder): an
	// unmounted drive must not read as every file deleted.
	ErrFolderMissing = errors.New("the folder is missing")
	// ErrFolderEmpty is returned when the folder has no Markdown file left but the last pass
	// left it with some: an unmounted or emptied folder must not delete every document.
	ErrFolderEmpty = errors.New("the folder has no Markdown files left, and the last sync left some: is it unmounted? (--allow-deletes deletes their documents)")
	// ErrTooManyDeletes is returned when a pass would delete more than a fifth of the
	// documents the folder held (and more than one).
	ErrTooManyDeletes = errors.New("too many deletes")
	// ErrOtherStore is returned when none of the documents the folder's state names is in
	// the space, not even deleted: the folder was synced with another store or server.
	ErrOtherStore = errors.New("the folder was synced with another store")
)

// Sync keeps one folder and one space the same, a pass at a time (Once).
type Sync struct {
	// Space is the space kept in step: a Local store, or a team server (Remote). Nil: Store's,
	// as Local{Store, By}.
	Space Space
	Store *docstore.Store
	Dir   string
	// By is who the versions made from files are by, on Store: the agent sync, for the person.
	By docstore.Author
	// AllowDeletes lets a pass delete more than a fifth of the documents, or all of them
	// when the folder is empty.
	AllowDeletes bool
	// Say gets what the person should know, a line each: clashes, edits that won over a
	// delete, files skipped. Nil: io.Discard.
	Say io.Writer
	// Workers is how many documents are made at once from new files (their commits are
	// grouped by the store): 8 when 0.
	Workers int
	// Now is the clock the guards' window is read by (nil: time.Now).
	Now func() time.Time

	folders []string // the last pass's folders, for Run to watch

	// Set only by tests (export_test.go): crash, asked at each named point where a sync
	// can be killed (crashPoints), true to stop there as a kill would, the state not
	// saved; scanning, run as the scan enters each folder.
	crash    func(point string) bool
	scanning func(rel string)

	mu   sync.Mutex
	said map[string]bool // sayOnce's keys
}

// Report counts what a pass did.
type Report struct {
	Created int // documents made from new files
	Joined  int // files and documents of the same title found on a first run
	Saved   int // files saved as versions (merged or not)
	Clashes int // saves where both sides changed the same lines: the agents' side is a proposal
	Written int // files written from the space
	Renamed int // documents renamed for a file moved or renamed, and files moved for a document renamed
	Deleted int // documents deleted (softly) for a file removed
	Removed int // files removed for a document deleted in the space
	Skipped int // files left alone: a title the space refuses or has, a text it can't hold
}

// Changed reports whether the pass changed anything (a file skipped again is no change).
func (r Report) Changed() bool { r.Skipped = 0; return r != Report{} }

func (y *Sync) space() Space {
	if y.Space == nil {
		y.Space = Local{Store: y.Store, By: y.By}
	}
	return y.Space
}

// sayOnce says what say says, once for key while this Sync runs (a continuous sync
// would else repeat a skip every pass).
func (y *Sync) sayOnce(key, format string, args ...any) {
	y.mu.Lock()
	if y.said == nil {
		y.said = map[string]bool{}
	}
	seen := y.said[key]
	y.said[key] = true
	y.mu.Unlock()
	if !seen {
		y.say(format, args...)
	}
}

func (y *Sync) say(format string, args ...any) {
	if y.Say != nil {
		fmt.Fprintf(y.Say, format+"\n", args...)
	}
}

// pass is one pass's working set.
type pass struct {
	y     *Sync
	ctx   context.Context
	st    *State
	ig    ignorer // the folder's .compassignore, as this pass read it
	files map[string]*file
	byID  map[string]docstore.Document
	taken map[string]docstore.Document // folded title → document not deleted
	rep   Report
	texts map[string][]byte // rel → bytes read this pass
	// unsure are the documents whose entry is a file a killed pass was about to write
	// (adoptWritten): it may never have been written.
	unsure map[string]bool
	// stillUnsure are those of them this pass leaves for the next (the folder changed
	// while it was scanned): kept noted as files about to be written, not written again.
	stillUnsure map[string]*Entry
}

// Once makes the folder and the space the same, once: each file changed since the last
// pass is saved (merged with what agents wrote since), each document changed in the space
// is written to its file, renames, moves and deletes on either side are carried to the
// other. A first pass joins files and documents of the same title. What a pass would do
// is checked for the guards before anything is changed: ErrFolderMissing,
// ErrFolderEmpty, ErrTooManyDeletes (wrapped, with how many).
//
// A pass loads the state, scans the folder, lists the space, looks where each known
// document's file is now (reading what the plan compares), plans its steps (a pure
// function of those: plan.go), guards, applies the steps, and saves the state.
func (y *Sync) Once(ctx context.Context) (Report, error) {
	p, err := y.load()
	if err != nil {
		return Report{}, err
	}
	if err := p.scan(); err != nil {
		return Report{}, err
	}
	if err := p.list(ctx); err != nil {
		return Report{}, err
	}
	in := p.look()
	pl := makePlan(in)
	if err := p.guard(in, pl); err != nil {
		return Report{}, err
	}
	err = p.apply(pl)
	if errors.Is(err, errKilled) {
		return p.rep, err // as a kill leaves it: the state not saved
	}
	return p.rep, p.saveState(err) // however the steps ended
}

// load reads the folder's state (a folder missing: ErrFolderMissing).
func (y *Sync) load() (*pass, error) {
	info, err := os.Stat(y.Dir)
	if err != nil || !info.IsDir() {
		return nil, fmt.Errorf("%w: %s", ErrFolderMissing, y.Dir)
	}
	st, err := loadState(y.Dir, y.space().Name())
	if err != nil {
		return nil, err
	}
	return &pass{y: y, st: st, byID: map[string]docstore.Document{}, taken: map[string]docstore.Document{}, texts: map[string][]byte{}, unsure: map[string]bool{}, stillUnsure: map[string]*Entry{}}, nil
}

// scan reads the folder's .compassignore and lists its files.
func (p *pass) scan() error {
	p.ig = readIgnore(p.y.Dir)
	files, folders, err := scan(p.y.Dir, p.ig, p.y.scanning)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFolderMissing, err)
	}
	p.files, p.y.folders = files, folders
	return nil
}

// list reads the space's listing, with nothing decided without it (a server that answered
// nothing must not read as every document gone); then it finishes what a killed pass
// noted ahead, and stops if the folder is empty where the last pass left files
// (ErrFolderEmpty).
func (p *pass) list(ctx context.Context) error {
	p.ctx = ctx
	docs, err := p.y.space().Documents(ctx)
	if err != nil {
		return err
	}
	for _, d := range docs {
		p.byID[d.ID] = d
		if d.Deleted == nil {
			p.taken[docstore.FoldTitle(d.Title)] = d
		}
	}
	if err := p.finishPending(); err != nil {
		return err
	}
	p.adoptCreated()
	p.adoptJoined()
	p.adoptWritten()
	// Files a killed pass was about to write (unsure) may never have been there.
	if len(p.files) == 0 && len(p.st.Docs) > len(p.unsure) && !p.y.AllowDeletes {
		return fmt.Errorf("%w: %s", ErrFolderEmpty, p.y.Dir)
	}
	return nil
}

// seen is what a pass's look found: which file each document the state knows is now, and
// what waits for the next pass.
type seen struct {
	ids       []string          // the state's documents, by path
	claimed   map[string]string // rel → id: the files a known document has
	moved     map[string]string // id → rel: a known document's file, moved
	gone      []string          // known documents whose file is gone
	postponed map[string]bool   // known documents left for the next pass
	freshWait bool              // the new files (and new documents) wait for the next pass
}

// look finds which file each document the state knows is now (match), reads the files
// whose bytes the plan compares (a known file whose stat changed, or that moved; each new
// file), and gives the plan what it decides from.
func (p *pass) look() *input {
	lk := p.match()
	in := &input{st: p.st, files: p.files, texts: p.texts, unread: map[string]error{}, docs: p.byID, look: lk, noted: p.stillUnsure, ig: p.ig, writable: p.y.space().Writable()}
	for rel, f := range p.files {
		id, known := lk.claimed[rel]
		switch {
		case !known && lk.freshWait:
			continue
		case known && (p.st.Docs[id] == nil || lk.postponed[id]):
			continue
		case known && unchanged(f, p.st.Docs[id]) && rel == p.st.Docs[id].Path && p.st.Docs[id].Hash != "":
			// (No hash: a join a killed pass noted and didn't save, adoptJoined.)
			f.hash = p.st.Docs[id].Hash
			continue
		}
		if _, err := p.read(rel); err != nil {
			in.unread[rel] = err
		}
	}
	return in
}

// match finds which file each document known to the state is now: at its path, else moved
// (the same inode, else the same bytes, else mostly the same lines, among the files no
// document has), else gone; a file the sync ignores or can't reach is neither.
func (p *pass) match() seen {
	st, files := p.st, p.files
	lk := seen{ids: sortedIDs(st), claimed: map[string]string{}, moved: map[string]string{}, postponed: map[string]bool{}}
	for id, e := range st.Docs {
		if files[e.Path] != nil {
			lk.claimed[e.Path] = id
		}
	}
	for _, id := range lk.ids {
		e := st.Docs[id]
		if files[e.Path] != nil {
			continue
		}
		if rel := p.findMoved(e, lk.claimed); rel != "" {
			lk.claimed[rel], lk.moved[id] = id, rel
			continue
		}
		// Renamed in the space since the state noted it (by a pass killed before its state
		// was saved, or an agent), and a file of the new title no document has: its file,
		// moved, whatever an editor saved into it since (else it would be left alone for
		// ever, its title being this document's, and this one's file written back).
		if d, ok := p.byID[id]; ok && d.Deleted == nil && d.Title != e.Title {
			if rel := fileFor(d.Title); files[rel] != nil && lk.claimed[rel] == "" {
				lk.claimed[rel], lk.moved[id] = id, rel
				continue
			}
		}
		// A file the sync now ignores (.compassignore got a pattern for it), or can't reach
		// (a folder on its way became a link), is not gone: it is no longer synced, and its
		// document is left as it is.
		if p.notSynced(id, e.Path) {
			lk.postponed[id] = true
			continue
		}
		lk.gone = append(lk.gone, id)
	}
	lk.gone = p.findSimilar(lk.gone, lk.claimed, lk.moved)
	p.lookAgain(&lk)
	// A file noted as about to be written and found nowhere was never written (or was
	// deleted before any pass saw it): not a delete, a file to write (newDocs).
	lk.gone = slices.DeleteFunc(lk.gone, func(id string) bool {
		if p.unsure[id] {
			delete(st.Docs, id)
			return true
		}
		return false
	})
	return lk
}

// lookAgain looks at the folder again when the first look found files gone or new.
//
// A scan is no snapshot. A file moved from a folder not read yet to one read already
// passes it by, and reads as gone; one moved from a folder read already to one not read
// yet is seen twice, and reads as a new file beside its document's. When a second look
// finds a file the first didn't, the gone documents wait for the next pass (the move's
// event wakes one), rather than being deleted or their files written back beside the
// moved; a file noted ahead stays noted so (persist). When it misses one the first
// found, the new files wait, rather than being made second documents, and so do the
// documents whose file that was (not written back beside the moved one), and the space's
// new documents (not written beside a waiting file of their title). A folder that
// changes under every pass's scan keeps its new files waiting: passes run once its
// events have settled (Watch.Settle).
func (p *pass) lookAgain(lk *seen) {
	if fresh := unclaimed(p.files, lk.claimed); len(lk.gone) > 0 || fresh > 0 {
		if again, _, err := scan(p.y.Dir, readIgnore(p.y.Dir), p.y.scanning); err == nil {
			if len(lk.gone) > 0 && appeared(p.files, again) {
				for _, id := range lk.gone {
					lk.postponed[id] = true
					if p.unsure[id] {
						p.stillUnsure[id] = p.st.Docs[id]
						delete(p.st.Docs, id)
					}
				}
				lk.gone = nil
			}
			if fresh > 0 && appeared(again, p.files) {
				lk.freshWait = true
				for rel, id := range lk.claimed {
					if again[rel] == nil {
						lk.postponed[id] = true
					}
				}
			}
		}
	}
}

// guard stops a pass before it changes anything when its plan would delete or remove more
// than a fifth of what the folder had in the window (deleteWindow): it counts the planned
// delete and remove steps, which are what apply does. Or when none of the documents the
// folder was synced with is in the space (ErrOtherStore).
func (p *pass) guard(in *input, pl plan) error {
	deletes, removes := pl.count(stepDelete), pl.count(stepRemove)
	w := p.window()
	if tooMany(deletes, len(w.Deleted), w.peak()) && !p.y.AllowDeletes {
		return fmt.Errorf("%w: this pass would delete %d of the %d documents the folder had in the last %v (their files are gone from %s)%s; nothing was changed. If that is what you meant, run again with --allow-deletes", ErrTooManyDeletes, deletes, w.peak(), deleteWindow, p.y.Dir, alsoRecent(len(w.Deleted), "deleted"))
	}
	// Every document the folder was synced with missing from the space (not even deleted)
	// is no delete anyone made: the folder was synced with another store, or another
	// server, whose space has the same name.
	unknown := 0
	for id := range p.st.Docs {
		if _, in := in.docs[id]; !in {
			unknown++
		}
	}
	if unknown > 0 && unknown == len(p.st.Docs) && !p.y.AllowDeletes {
		return fmt.Errorf("%w: none of the %d documents %s was synced with is in this space %q, not even deleted: was it synced with another data file or server? Nothing was changed. To sync the folder with this space afresh (its files and the space's documents of the same titles joined, nothing removed), move %s away", ErrOtherStore, len(p.st.Docs), p.y.Dir, p.y.space().Name(), statePath(p.y.Dir, p.y.space().Name()))
	}
	if tooMany(removes, len(w.Removed), w.peak()) && !p.y.AllowDeletes {
		return fmt.Errorf("%w: this pass would remove %d of the %d files %s had in the last %v (their documents were deleted in the space)%s; nothing was changed. If that is what you meant, run again with --allow-deletes", ErrTooManyDeletes, removes, w.peak(), p.y.Dir, deleteWindow, alsoRecent(len(w.Removed), "removed"))
	}
	return nil
}

// persist writes the state, with the files noted ahead that this pass leaves noted.
func (p *pass) persist() error {
	for id, e := range p.stillUnsure {
		if p.st.Writing == nil {
			p.st.Writing = map[string]*Entry{}
		}
		p.st.Writing[id] = e
	}
	return p.st.save(p.y.Dir)
}

// unclaimed counts the files no document has.
func unclaimed(files map[string]*file, claimed map[string]string) int {
	n := 0
	for rel := range files {
		if _, ok := claimed[rel]; !ok {
			n++
		}
	}
	return n
}

// appeared reports whether a second scan found a file the first didn't.
func appeared(first, again map[string]*file) bool {
	for rel := range again {
		if first[rel] == nil {
			return true
		}
	}
	return false
}

func (p *pass) saveState(err error) error {
	if w := p.st.Window; w != nil {
		if p.y.AllowDeletes {
			// Deletes said yes to: the window starts again from the folder as it is now.
			p.st.Window = &Window{}
			p.st.Window.sized(p.y.now(), len(p.st.Docs))
		} else {
			w.Deleted = note(w.Deleted, p.y.now(), p.rep.Deleted)
			w.Removed = note(w.Removed, p.y.now(), p.rep.Removed)
		}
	}
	if serr := p.persist(); err == nil {
		err = serr
	}
	return err
}

func sortedIDs(st *State) []string {
	ids := make([]string, 0, len(st.Docs))
	for id := range st.Docs {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return strings.Compare(st.Docs[a].Path, st.Docs[b].Path) })
	return ids // read once a pass: known deletes entries as it goes
}

// findMoved finds the file e's document moved to: one no document has, with e's inode,
// else with e's bytes.
func (p *pass) findMoved(e *Entry, claimed map[string]string) string {
	var same []string
	for rel, f := range p.files {
		if _, ok := claimed[rel]; ok {
			continue
		}
		// The same inode, size and time: a rename (mv keeps them). An inode alone could be
		// one freed by a delete and given to a new file.
		if e.Inode != 0 && f.inode == e.Inode && f.size == e.Size && f.mtime.UnixNano() == e.MTime {
			return rel
		}
		if f.size == e.Size {
			same = append(same, rel)
		}
	}
	slices.Sort(same)
	for _, rel := range same {
		if b, err := p.read(rel); err == nil && hashOf(b) == e.Hash {
			return rel
		}
	}
	return ""
}

// findSimilar matches documents whose files are gone to new files whose lines are mostly
// theirs: a file saved by an editor (a new inode, new bytes) and renamed while the sync
// wasn't looking. It returns the documents still gone. Bounded: only when at most 200 are
// gone and 2,000 files are new, and each text is read once.
func (p *pass) findSimilar(gone []string, claimed map[string]string, moved map[string]string) []string {
	var fresh []string
	for rel := range p.files {
		if _, ok := claimed[rel]; !ok {
			fresh = append(fresh, rel)
		}
	}
	if len(gone) == 0 || len(fresh) == 0 || len(gone) > 200 || len(fresh) > 2000 {
		return gone
	}
	slices.Sort(fresh)
	var still []string
	for _, id := range gone {
		// The text the file was last in step with, and the latest: a sync stopped before its
		// state noted a write of the latest leaves the file that, grown by the agents' lines.
		e := p.st.Docs[id]
		var olds []string
		if v, err := p.y.space().Read(p.ctx, id, e.Version); err == nil {
			olds = append(olds, v.Text)
		}
		if d, ok := p.byID[id]; ok && d.Version != e.Version {
			if v, err := p.y.space().Read(p.ctx, id, 0); err == nil {
				olds = append(olds, v.Text)
			}
		}
		// The file whose lines are most alike; else (an editor's saves since the move added
		// more lines than the note had) the one file that kept nearly all the note's lines:
		// two such files (a template's?) are no move.
		best, bestScore := "", 0.5
		kept := map[string]bool{}
		for _, old := range olds {
			for _, rel := range fresh {
				if _, ok := claimed[rel]; ok {
					continue
				}
				b, err := p.read(rel)
				if err != nil {
					continue
				}
				alike, share := similarity(old, string(b))
				if alike >= bestScore {
					best, bestScore = rel, alike
				}
				if share > keptEnough {
					kept[rel] = true
				}
			}
		}
		if best == "" && len(kept) == 1 {
			for rel := range kept {
				best = rel
			}
		}
		if best == "" {
			still = append(still, id)
			continue
		}
		claimed[best], moved[id] = id, best
	}
	return still
}

// keptEnough is the share of a gone note's lines a new file must keep (more than it) to be
// that note moved and then edited, when the two are not alike by similarity (and no other
// new file kept as many): the note has at least keptLines non-blank lines.
const (
	keptEnough = 0.8
	keptLines  = 2
)

// similarity is the share of the longer text's non-blank lines that the two texts have in
// common (as a multiset): 1 for the same lines, 0 for none alike. And kept, the share of
// a's non-blank lines that b has (0 when a has fewer than keptLines): a note of two lines
// moved, then saved with four more, is a third alike, and has kept all of a's.
func similarity(a, b string) (alike, kept float64) {
	count := map[string]int{}
	na, nb := 0, 0
	for _, l := range strings.Split(a, "\n") {
		if strings.TrimSpace(l) != "" {
			count[l]++
			na++
		}
	}
	common := 0
	for _, l := range strings.Split(b, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		nb++
		if count[l] > 0 {
			count[l]--
			common++
		}
	}
	if na >= keptLines {
		kept = float64(common) / float64(na)
	}
	if n := max(na, nb); n > 0 {
		alike = float64(common) / float64(n)
	}
	return alike, kept
}

// read reads a file's bytes once a pass, and sets its hash.
func (p *pass) read(rel string) ([]byte, error) {
	if b, ok := p.texts[rel]; ok {
		return b, nil
	}
	f := p.files[rel]
	if f != nil && f.size > docstore.MaxText {
		return nil, fmt.Errorf("%w: %s is %d MiB, more than a document holds (%d MiB)", docstore.ErrBadText, rel, f.size>>20, docstore.MaxText>>20)
	}
	b, err := readBeneath(p.y.Dir, rel)
	if err != nil {
		return nil, err
	}
	if len(b) > docstore.MaxText {
		return nil, fmt.Errorf("%w: %s is more than a document holds (%d MiB)", docstore.ErrBadText, rel, docstore.MaxText>>20)
	}
	p.texts[rel] = b
	if f != nil {
		f.hash = hashOf(b)
	}
	return b, nil
}

// unchanged reports whether the file at rel is as e last saw it, by stat alone: the same
// size, mtime and inode (rsync -a restores an mtime, but writes a new inode).
func unchanged(f *file, e *Entry) bool {
	return f.size == e.Size && f.mtime.UnixNano() == e.MTime && f.inode == e.Inode
}

// adoptCreated finds the documents a pass killed while it made documents of new files
// (State.Creating) did make: a document of that title the state doesn't know, whose first
// version is the file's text as it was read, is that file's, in step with that version, as
// a pass that finished would have noted it (an agent's document of the same title, made
// meanwhile, is not). A file not made into a document is new to this pass too.
func (p *pass) adoptCreated() {
	known := map[string]bool{}
	for id := range p.st.Docs {
		known[id] = true
	}
	for _, c := range p.st.Creating {
		d, ok := p.taken[docstore.FoldTitle(c.Title)]
		if !ok || known[d.ID] {
			continue
		}
		if v, err := p.y.space().Read(p.ctx, d.ID, 1); err != nil || hashOf([]byte(v.Text)) != c.Hash {
			continue
		}
		e := *c
		e.Title = d.Title
		p.st.Docs[d.ID] = &e
		known[d.ID] = true
	}
	p.st.Creating = nil
}

// adoptJoined finds the documents a pass killed while it joined new files to documents
// of their titles (State.Joining) was joining: a document of that title the state doesn't
// know is that file's. In step with its latest version if that is the file's text as it
// was read (the join saved it, or the two were the same); else (killed before the join's
// save) noted as no version and no text, so that the file is saved as a join saves it,
// from no base, the space's side kept as a proposal. A file moved meanwhile is then a
// rename of it, not a second document beside it.
func (p *pass) adoptJoined() {
	for _, j := range p.st.Joining {
		d, ok := p.taken[docstore.FoldTitle(j.Title)]
		if !ok || p.st.Docs[d.ID] != nil {
			continue
		}
		v, err := p.y.space().Read(p.ctx, d.ID, 0)
		if err != nil {
			continue
		}
		e := *j
		e.Title = d.Title
		if e.Version = v.Number; hashOf([]byte(v.Text)) != j.Hash {
			e.Version, e.Hash = 0, ""
		}
		p.st.Docs[d.ID] = &e
	}
	p.st.Joining = nil
}

// adoptWritten takes the files a pass killed while it wrote new documents' files
// (State.Writing) was about to write as those documents', in step with the version
// written: where the file is, or where it moved to (by its bytes, or its lines), is found
// as for any file; one found nowhere is written again, not taken for a delete (unsure).
func (p *pass) adoptWritten() {
	for id, w := range p.st.Writing {
		if d, ok := p.byID[id]; !ok || d.Deleted != nil || p.st.Docs[id] != nil {
			continue
		}
		e := *w
		p.st.Docs[id] = &e
		p.unsure[id] = true
	}
	p.st.Writing = nil
}

// versionIsLimit is how many of a document's versions after the one its file was last in
// step with versionIs reads, newest first.
const versionIsLimit = 10

// versionIs returns the version after from, up to to, whose text has hash (0: none of the
// newest versionIsLimit of them).
func (p *pass) versionIs(id string, from, to int, hash string) int {
	for n := to; n > from && n > to-versionIsLimit; n-- {
		v, err := p.y.space().Read(p.ctx, id, n)
		if err != nil {
			return 0
		}
		if hashOf([]byte(v.Text)) == hash {
			return n
		}
	}
	return 0
}

// retitled notes in the pass's maps that document was became now (renamed, deleted or
// back): a new file of its old title, later in the pass, must not be joined to it.
func (p *pass) retitled(was, now docstore.Document) {
	p.byID[now.ID] = now
	if t, ok := p.taken[docstore.FoldTitle(was.Title)]; ok && t.ID == was.ID {
		delete(p.taken, docstore.FoldTitle(was.Title))
	}
	if now.Deleted == nil {
		p.taken[docstore.FoldTitle(now.Title)] = now
	}
}

// writable reports whether the sync may change the space; if not, it says that the file
// at rel is left as it is, and why.
func (p *pass) writable(rel, why string) bool {
	if p.y.space().Writable() {
		return true
	}
	p.skip(rel, " (this token may only read the space, or its changes are reviewed): %s", why)
	p.rep.Skipped++
	return false
}

// saveFile saves a changed file's text as the person's version, from the version it
// derives from (derivedBase): merged with what changed in the space since, and the merge
// written back to the file when it differs. Where both changed the same lines, the file's
// lines are saved and the space's kept as a proposal by whoever made the latest version,
// in the same commit (Space.SaveKeeping): one store call, one request over HTTP.
func (p *pass) saveFile(id string, e *Entry, rel string, text []byte) error {
	y := p.y
	if err := docstore.CheckText(string(text)); err != nil {
		p.skip(rel, ": %v", err)
		p.rep.Skipped++
		return nil
	}
	kept, err := y.space().SaveKeeping(p.ctx, id, e.Version, e.Held, string(text))
	if err != nil {
		return fmt.Errorf("saving %s as %q: %w", rel, e.Title, err)
	}
	if err := p.crash(crashSaved); err != nil {
		return err
	}
	base := kept.Base
	if base < e.Version {
		y.say("sync: %s was saved from an older text than the sync last wrote to it (version %d, not %d: an editor's buffer kept from before?): it is merged from version %d, so the changes since stay", rel, base, e.Version, base)
	}
	if !kept.Saved.Unchanged {
		p.rep.Saved++
	}
	if pr := kept.Proposal; pr != nil {
		p.rep.Clashes++
		y.say("sync: the file of %q and %s both changed the same lines: the file's lines are saved (version %d), and %s's are proposal %d, waiting for your review (docs proposals %q)",
			pr.Title, pr.Author.By, kept.Saved.Document.Version, pr.Author.By, pr.Number, pr.Title)
	}
	// A merge, or a save that changed nothing (the space has the file's edits, and more of
	// its own): the space's text may not be the file's, which is written if it differs. The
	// file's text, in an editor's buffer, derives from base: kept as a version it held.
	if kept.Latest != nil {
		if kept.Saved.Kind == docstore.KindMerge {
			e.Held = held(e.Held, base)
		}
		return p.writeText(id, rel, *kept.Latest, hashOf(text))
	}
	p.record(e, p.files[rel], hashOf(text), kept.Saved.Document.Version)
	return nil
}

// heldLimit is how many of the versions a file held before the sync wrote later ones
// over it the state keeps (Entry.Held), for derivedBase.
const heldLimit = 4

// held is versions with n added (newest last), at most heldLimit.
func held(versions []int, n int) []int {
	versions = append(slices.DeleteFunc(versions, func(v int) bool { return v == n }), n)
	return versions[max(0, len(versions)-heldLimit):]
}

// derivedBase is the version a changed file's text derives from: base, the one the file
// was last in step with, unless the text is nearer (fewer lines added and removed) to one
// of held, versions the file held before the sync wrote later ones over it: an editor
// that kept its buffer from before the write (vim, asked whether to write over a changed
// file, answered yes) saves an older text with the person's lines, and saved from the
// newer version it would take out what agents wrote between. A tie keeps the newer:
// nothing says the text is older. read reads a version of the document.
//
// And a text that is one of the newest versionIsLimit versions after base is that
// version's: a sync killed after it wrote a later version to the file and before its state
// noted it left the file exactly that version, in step with it, not an edit to merge from
// the older one (where the agents' lines since would clash with their own).
func derivedBase(read func(n int) (docstore.Version, error), base int, held []int, text string) (int, error) {
	if base < 1 {
		return base, nil
	}
	latest, err := read(0)
	if err != nil {
		return 0, err
	}
	for n := latest.Number; n > base && n > latest.Number-versionIsLimit; n-- {
		v := latest
		if n != latest.Number {
			if v, err = read(n); err != nil {
				return 0, err
			}
		}
		if v.Text == text {
			return n, nil
		}
	}
	if len(held) == 0 {
		return base, nil
	}
	lines := linediff.Lines(text)
	best, bestDist := base, -1
	candidates := []int{base} // newest first: a tie keeps the newer
	for _, n := range slices.Backward(held) {
		if n >= 1 && n < base {
			candidates = append(candidates, n)
		}
	}
	for _, n := range candidates {
		v, err := read(n)
		if err != nil {
			return 0, err
		}
		if d := distance(linediff.Lines(v.Text), lines); bestDist < 0 || d < bestDist {
			best, bestDist = n, d
		}
	}
	return best, nil
}

// distance is how many lines a diff of a to b adds and removes.
func distance(a, b []string) int {
	n := 0
	for _, op := range linediff.Diff(a, b) {
		switch op.Kind {
		case linediff.Insert:
			n += op.B1 - op.B0
		case linediff.Delete:
			n += op.A1 - op.A0
		}
	}
	return n
}

// finishPending makes the proposals of clashes an older sync noted in its state
// (State.Pending) and stopped before proposing: that sync saved and proposed in two steps;
// this one saves a clash in one commit (SaveKeeping). Read for one release: on a data
// file, propose finds the save and makes the proposal once; over HTTP, whose server has no
// such step any more, the clash is said and left to the person.
func (p *pass) finishPending() error {
	if !p.y.space().Writable() {
		return nil // kept for a sync that may write
	}
	l, local := p.y.space().(Local)
	for id, pend := range p.st.Pending {
		if !local {
			p.y.say("sync: an older sync stopped between saving a clash of document %s and keeping the space's side as a proposal: its versions (docs log) hold both sides", id)
			delete(p.st.Pending, id)
			continue
		}
		got, err := propose(p.ctx, l.Store, l.By, Clash{ID: id, Base: pend.Base, Text: pend.Text})
		if errors.Is(err, docstore.ErrNotFound) {
			delete(p.st.Pending, id)
			continue
		}
		if err != nil {
			return err
		}
		if got.Made {
			p.y.say("sync: the file of %q and %s both changed the same lines: the file's lines were saved, and %s's are proposal %d, waiting for your review (docs proposals %q)",
				got.Title, got.By, got.By, got.Number, got.Title)
		}
		delete(p.st.Pending, id)
	}
	return nil
}

// writeOut writes document id's latest text to the file at rel, if the file is still what
// expect says (its hash; "" absent), and records it.
func (p *pass) writeOut(id, rel, expect string) error {
	v, err := p.y.space().Read(p.ctx, id, 0)
	if err != nil {
		return err
	}
	return p.writeText(id, rel, v, expect)
}

// writeText is writeOut of version v, read already.
func (p *pass) writeText(id, rel string, v docstore.Version, expect string) error {
	y, e := p.y, p.st.Docs[id]
	hash := hashOf([]byte(v.Text))
	if hash != expect && e != nil && expect == e.Hash && e.Version > 0 && e.Version < v.Number {
		e.Held = held(e.Held, e.Version) // an editor's buffer may keep it (derivedBase)
	}
	if hash != expect {
		f, err := p.write(rel, []byte(v.Text), expect)
		if err != nil {
			y.say("sync: %s was not written (the next pass merges it): %v", rel, err)
			return nil
		}
		p.files[rel] = f
		p.rep.Written++
		if err := p.crash(crashWritten); err != nil {
			return err
		}
	}
	if e == nil {
		e = &Entry{}
		p.st.Docs[id] = e
	}
	e.Path, e.Title = rel, v.Title
	p.record(e, p.files[rel], hash, v.Number)
	return nil
}

// record notes that e's file, f, has hash and is in step with version n.
func (p *pass) record(e *Entry, f *file, hash string, n int) {
	e.Hash, e.Version = hash, n
	if f != nil { // stat as the scan saw it (or as the sync wrote it), never after: a save
		// that came between would be taken for what hash was read from
		e.Size, e.MTime, e.Inode = f.size, f.mtime.UnixNano(), f.inode
	}
}

// errChangedUnder is returned when a file is not as the sync expects it just before it
// writes or removes it: a person's edit came between.
var errChangedUnder = errors.New("it changed meanwhile")

// write writes b to the file at rel atomically, only if the file is still what expect
// says (its hash; "" absent). The new bytes are written and synced to a temporary file
// first; then the file is looked at and replaced in one step where the system allows
// (exchange, then a look at what was replaced, put back if it was someone's new save),
// else looked at and renamed over at once: an editor's save that comes meanwhile is never
// written over, and the next pass merges it.
func (p *pass) write(rel string, b []byte, expect string) (*file, error) {
	dir, name, closeDir, err := folderOf(p.y.Dir, rel, true)
	if err != nil {
		return nil, err
	}
	defer closeDir()
	abs := filepath.Join(dir, name)
	tmp, info, err := writeTemp(abs, b)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	done := &file{rel: rel, size: info.Size(), mtime: info.ModTime(), inode: inodeOf(info), hash: hashOf(b)}
	if expect == "" { // must not be there: a hard link makes it only if it isn't
		if err := os.Link(tmp, abs); err != nil {
			if errors.Is(err, os.ErrExist) {
				return nil, errChangedUnder
			}
			return nil, err
		}
		syncDir(abs)
		return done, nil
	}
	if err := exchange(tmp, abs); err == nil {
		was, rerr := os.ReadFile(tmp)
		if rerr != nil || hashOf(was) != expect {
			// Someone saved between: put theirs back, unless they saved again since.
			if now, err := os.Lstat(abs); err == nil && inodeOf(now) == done.inode {
				exchange(tmp, abs)
			}
			return nil, errChangedUnder
		}
		syncDir(abs)
		return done, nil
	}
	now, err := readRegular(abs)
	if err != nil || hashOf(now) != expect {
		return nil, errChangedUnder
	}
	if err := os.Rename(tmp, abs); err != nil {
		return nil, err
	}
	syncDir(abs)
	return done, nil
}

// remove removes the file at rel if it still has hash, and the folders it leaves empty.
func (p *pass) remove(rel, hash string) error {
	dir, name, done, err := folderOf(p.y.Dir, rel, false)
	if err != nil {
		return err
	}
	defer done()
	abs := filepath.Join(dir, name)
	now, err := readRegular(abs)
	if err != nil {
		return err
	}
	if hashOf(now) != hash {
		return errChangedUnder
	}
	if err := os.Remove(abs); err != nil {
		return err
	}
	delete(p.files, rel)
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if removeBeneath(p.y.Dir, d) != nil { // not empty: an attachment, another note
			break
		}
	}
	return nil
}

// removeBeneath removes the empty folder rel beneath root.
func removeBeneath(root, rel string) error {
	dir, name, done, err := folderOf(root, rel, false)
	if err != nil {
		return err
	}
	defer done()
	return os.Remove(filepath.Join(dir, name))
}

// move moves the file from to to (both beneath the folder, to's folders made as needed).
func (p *pass) move(from, to string) error {
	src, sname, sdone, err := folderOf(p.y.Dir, from, false)
	if err != nil {
		return err
	}
	defer sdone()
	dst, dname, ddone, err := folderOf(p.y.Dir, to, true)
	if err != nil {
		return err
	}
	defer ddone()
	return os.Rename(filepath.Join(src, sname), filepath.Join(dst, dname))
}

// taken reports whether something is at rel beneath the folder, or rel can't be reached
// there (a link on the way): either way no file of the sync's goes there.
func (p *pass) occupied(rel string) bool {
	dir, name, done, err := folderOf(p.y.Dir, rel, false)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	defer done()
	_, err = os.Lstat(filepath.Join(dir, name))
	return !errors.Is(err, fs.ErrNotExist)
}

// create is a new file to make a document of.
type create struct {
	rel, title string
	text       []byte
}

// create makes a document of each new file of creates, Workers at a time, having noted
// them in the state first.
func (p *pass) create(creates []create) error {
	y := p.y
	if len(creates) == 0 {
		return nil
	}
	// What is about to be made goes to disk first: a sync killed between a create and
	// this pass's end would else not know the document is the file's (adoptCreated).
	p.st.Creating = nil
	for _, c := range creates {
		e := &Entry{Path: c.rel, Title: c.title}
		p.record(e, p.files[c.rel], hashOf(c.text), 1)
		p.st.Creating = append(p.st.Creating, e)
	}
	if err := p.persist(); err != nil {
		return err
	}
	if err := p.crash(crashCreating); err != nil {
		return err
	}
	defer func() { p.st.Creating = nil }()
	workers := y.Workers
	if workers <= 0 {
		workers = 8
	}
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		next  = make(chan create)
	)
	for range min(workers, len(creates)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				saved, err := y.space().Create(p.ctx, c.title, string(c.text))
				if err == nil {
					err = p.crash(crashCreated)
				}
				mu.Lock()
				switch {
				case err == nil:
					e := &Entry{Path: c.rel, Title: saved.Document.Title}
					p.st.Docs[saved.Document.ID] = e
					p.record(e, p.files[c.rel], hashOf(c.text), saved.Document.Version)
					p.taken[docstore.FoldTitle(c.title)] = saved.Document
					p.byID[saved.Document.ID] = saved.Document
					p.rep.Created++
				case errors.Is(err, docstore.ErrBadTitle) || errors.As(err, new(*docstore.TitleTakenError)):
					p.skip(c.rel, ": %v", err)
					p.rep.Skipped++
				case first == nil:
					first = fmt.Errorf("making a document of %s: %w", c.rel, err)
				}
				mu.Unlock()
			}
		}()
	}
	for _, c := range creates {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop {
			break
		}
		next <- c
	}
	close(next)
	wg.Wait()
	return first
}

// join makes the file at rel and document d, of the same title, one (a first run).
func (p *pass) join(d docstore.Document, rel string, b []byte) error {
	y := p.y
	v, err := y.space().Read(p.ctx, d.ID, 0)
	if err != nil {
		return err
	}
	e := &Entry{Path: rel, Title: d.Title}
	p.st.Docs[d.ID] = e
	p.rep.Joined++
	if v.Text == string(b) {
		p.record(e, p.files[rel], hashOf(b), v.Number)
		return nil
	}
	if !y.space().Writable() {
		delete(p.st.Docs, d.ID)
		p.rep.Joined--
		p.writable(rel, fmt.Sprintf("the document %q has another text", d.Title))
		return nil
	}
	kept, err := y.space().SaveKeeping(p.ctx, d.ID, 0, nil, string(b))
	if err != nil {
		return fmt.Errorf("saving %s as %q: %w", rel, d.Title, err)
	}
	if err := p.crash(crashJoined); err != nil {
		return err
	}
	p.rep.Saved++
	if pr := kept.Proposal; pr != nil {
		p.rep.Clashes++
		y.say("sync: %s and the document %q had different texts: the file's is saved (version %d), and the space's is proposal %d (%s), waiting for your review (docs proposals %q)",
			rel, d.Title, kept.Saved.Document.Version, pr.Number, noteJoin, d.Title)
	}
	if kept.Latest != nil {
		return p.writeText(d.ID, rel, *kept.Latest, hashOf(b))
	}
	p.record(e, p.files[rel], hashOf(b), kept.Saved.Document.Version)
	return nil
}

// writeNew writes the files of a batch of new documents (plan's write new steps): their
// texts are read and noted in the state (State.Writing) before the files are written, so
// that a sync killed meanwhile knows them for the documents'. A file whose name is taken
// by what the scan doesn't list (a folder, an ignored file) gets the document's id in its
// name; one that can't be reached beneath the folder is not written, said once.
func (p *pass) writeNew(news []step) error {
	type out struct {
		id, rel string
		v       docstore.Version
	}
	var outs []out
	p.st.Writing = map[string]*Entry{}
	defer func() { p.st.Writing = nil }()
	for _, s := range news {
		id, rel := s.id, s.rel
		if !strings.HasSuffix(rel, " ("+id+").md") && p.occupied(rel) {
			rel = withID(rel, id)
		}
		if err := p.reachable(rel); err != nil {
			p.y.sayOnce("unreachable "+id, "sync: %q is not synced: its file %s %v; the document is left as it is", p.byID[id].Title, rel, err)
			p.rep.Skipped++
			continue
		}
		v, err := p.y.space().Read(p.ctx, id, 0)
		if err != nil {
			return err
		}
		outs = append(outs, out{id, rel, v})
		p.st.Writing[id] = &Entry{Path: rel, Title: v.Title, Version: v.Number, Hash: hashOf([]byte(v.Text)), Size: int64(len(v.Text))}
	}
	if len(outs) == 0 {
		return nil
	}
	if err := p.persist(); err != nil {
		return err
	}
	if err := p.crash(crashWriting); err != nil {
		return err
	}
	for _, o := range outs {
		if err := p.writeText(o.id, o.rel, o.v, ""); err != nil {
			return err
		}
	}
	return nil
}

// reachable says why the file rel could not be written beneath the folder: a link or a
// file on the way (nil: it can, or its folders are missing and would be made).
func (p *pass) reachable(rel string) error {
	_, _, done, err := folderOf(p.y.Dir, rel, false)
	if errors.Is(err, errNotBeneath) {
		return err
	}
	if err == nil {
		done()
	}
	return nil
}

// notSynced reports whether the file rel of the document id, not seen by the scan, is one
// the sync ignores now, or can't reach (a link on the way), and says so once: the
// document is left as it is, never deleted for it.
func (p *pass) notSynced(id, rel string) bool {
	title := rel
	if d, ok := p.byID[id]; ok {
		title = d.Title
	}
	if p.ig.ignoredPath(rel) {
		p.y.sayOnce("ignored "+id, "sync: %q is not synced: the sync ignores its file %s now (.compassignore); the document is left as it is", title, rel)
		p.rep.Skipped++
		return true
	}
	if err := p.reachable(rel); err != nil {
		p.y.sayOnce("unreachable "+id, "sync: %q is not synced: its file %s %v; the document is left as it is", title, rel, err)
		p.rep.Skipped++
		return true
	}
	return false
}

// window is the guards' memory of the last deleteWindow, with this pass's size noted.
func (p *pass) window() *Window {
	if p.st.Window == nil {
		p.st.Window = &Window{}
	}
	now := p.y.now()
	p.st.Window.since(now)
	p.st.Window.sized(now, len(p.st.Docs))
	return p.st.Window
}

// alsoRecent says how many the window holds already.
func alsoRecent(n int, what string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", and %d were %s by the passes of the last %v", n, what, deleteWindow)
}

func (y *Sync) now() time.Time {
	if y.Now != nil {
		return y.Now()
	}
	return time.Now()
}

// skip says that the file at rel is left as it is, and why, once until the file changes
// (a continuous sync would else say it every pass).
func (p *pass) skip(rel, format string, args ...any) {
	key := "skip " + rel
	if f := p.files[rel]; f != nil {
		key = fmt.Sprintf("skip %s %d %d %d", rel, f.size, f.mtime.UnixNano(), f.inode)
	}
	p.y.sayOnce(key+" "+format, "sync: %s left as it is"+format, append([]any{rel}, args...)...)
}
