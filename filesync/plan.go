package filesync

import (
	"fmt"
	"slices"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// A pass is decided before anything is done: plan takes what the pass read (the state, the
// folder's scan with the texts of the files that looked changed, the space's listing, and
// which file each known document is now) as plain values, and returns the steps that make
// the folder and the space the same; apply does them. plan does no I/O (no Space, no file
// system, no clock), so each rule of docs/SYNC.md is a row of its table test (plan_test.go),
// and the guards count the steps apply will do.
//
// Where a rule's outcome needs what only the doing tells, the step says so and apply
// decides: a join compares the file's text with the document's (read then); a read-only
// sync's edited file may be exactly a later version (catch up, reading those versions); a
// rename made on top of another writer's version leaves the file behind (write if behind);
// a move or a new document's file may find its place taken by what the scan doesn't list
// (a folder, an ignored file) or reached through a link (apply looks, and says).

// stepKind is what a step does.
type stepKind int

const (
	stepSay      stepKind = iota // say why something is left as it is (and count it skipped)
	stepUndelete                 // bring a document deleted in the space back: its file was edited
	stepRename                   // rename a document to its file's new title (moved in the folder)
	stepMove                     // move a file to its document's new title (renamed in the space)
	stepEntry                    // note the file's path and the document's title
	stepRecord                   // in step: note the file's stat
	stepWrite                    // write the document's latest text to its file
	stepSave                     // save the file's text as a version, merged with the space's
	stepCatchUp                  // a read-only sync's edited file: one of the versions since?
	stepDelete                   // delete (softly) the document whose file is gone
	stepRemove                   // remove the file whose document was deleted in the space
	stepForget                   // forget a document's entry
	stepJoin                     // join a new file and the document of its title (a first run)
	stepCreate                   // make a document of a new file
	stepWriteNew                 // write a file for a document the folder has none of
)

var stepNames = [...]string{"say", "undelete", "rename", "move", "entry", "record", "write", "save", "catch up", "delete", "remove", "forget", "join", "create", "write new"}

func (k stepKind) String() string { return stepNames[k] }

// phase is when apply does a step, in syncthing's order: the moves (with the undeletes
// and the notes of paths and titles they go with) first, then the saves and writes (and
// what is said), then the deletes and removes; then the new files, joined or made
// documents, and the space's new documents' files, after the deletes: a delete frees the
// title or the file name a new one takes.
func (k stepKind) phase() int {
	switch k {
	case stepUndelete, stepRename, stepMove, stepEntry:
		return 0
	case stepDelete, stepRemove, stepForget:
		return 2
	case stepJoin, stepCreate, stepWriteNew:
		return 3
	}
	return 1
}

// step is one thing a pass does, to one document or file.
type step struct {
	kind stepKind
	id   string // the document's id ("" for a create)
	// rel is the file's path: where it is (remove, join, create, rename), where it moves
	// from (move), where it is noted (entry; "" keeps it), where it is written (write new).
	// The steps after a move or rename of the same document read where its entry says, as
	// a move may not be made.
	rel    string
	to     string // move: where to
	title  string // rename, create: the title
	expect string // write, remove: the hash the file must still have ("" absent)
	text   []byte // save, join, create: the file's bytes, as the pass read them
	// behind, on a write after a rename: write only if the document is past the version
	// the entry notes (another writer came between the listing and the rename).
	behind bool
	say    string // said when the step is done (say: all it does)
	once   string // say's key: said once while the Sync runs ("" every time)
	skip   bool   // say: counted as skipped
}

func (s step) String() string {
	out := s.kind.String()
	for _, f := range []struct{ k, v string }{{"", s.id}, {"", s.rel}, {"to ", s.to}, {"title ", s.title}} {
		if f.v != "" {
			out += " " + f.k + f.v
		}
	}
	if s.behind {
		out += " if behind"
	}
	return out
}

// input is what a pass plans from, read by load and look; plan changes none of it.
type input struct {
	st       *State
	files    map[string]*file             // the scan; the hash of each file plan compares
	texts    map[string][]byte            // the bytes of the files read
	unread   map[string]error             // the files that couldn't be read, and why
	docs     map[string]docstore.Document // the listing, by id
	look     seen
	noted    map[string]*Entry // new documents' files a killed pass noted, left noted (not written)
	ig       ignorer
	writable bool
}

// plan is what a pass will do: its steps, in the order apply does them, and whether the
// new files and the space's new documents wait for the next pass.
type plan struct {
	steps []step
	wait  bool
}

// count is how many steps of kind k the plan has.
func (pl plan) count(k stepKind) int {
	n := 0
	for _, s := range pl.steps {
		if s.kind == k {
			n++
		}
	}
	return n
}

// planner is plan's working set: the steps so far, and what they will have made of the
// state and the space, for the rules decided after them.
type planner struct {
	in     *input
	steps  []step
	forgot map[string]bool   // documents whose entries the steps forget
	titles map[string]string // folded title → the document not deleted that has it
	freed  map[string]bool   // files whose document was purged: new files now
	gone   map[string]bool   // documents the steps delete
	joined map[string]string // document → the new file it is joined to
	taken  map[string]bool   // files the new documents are written to
}

// makePlan decides a pass: each known document brought in step with its file, then the new
// files made documents (or joined), then the space's new documents written to files.
func makePlan(in *input) plan {
	pl := &planner{in: in, forgot: map[string]bool{}, titles: map[string]string{}, freed: map[string]bool{}, gone: map[string]bool{}, joined: map[string]string{}, taken: map[string]bool{}}
	for id, d := range in.docs {
		if d.Deleted == nil {
			pl.titles[docstore.FoldTitle(d.Title)] = id
		}
	}
	for _, id := range in.look.ids {
		if in.st.Docs[id] == nil || in.look.postponed[id] {
			continue
		}
		rel := in.st.Docs[id].Path
		if m := in.look.moved[id]; m != "" {
			rel = m
		}
		pl.known(id, rel, in.files[rel] != nil && in.look.claimed[rel] == id)
	}
	slices.SortStableFunc(pl.steps, func(a, b step) int { return a.kind.phase() - b.kind.phase() })
	if in.look.freshWait {
		return plan{steps: pl.steps, wait: true}
	}
	pl.newFiles()
	pl.newDocs()
	return plan{steps: pl.steps}
}

func (pl *planner) add(s step) { pl.steps = append(pl.steps, s) }

// skip says that the file at rel is left as it is, and why, once until the file changes.
func (pl *planner) skip(rel, format string, args ...any) {
	key := "skip " + rel
	if f := pl.in.files[rel]; f != nil {
		key = fmt.Sprintf("skip %s %d %d %d", rel, f.size, f.mtime.UnixNano(), f.inode)
	}
	pl.add(step{kind: stepSay, rel: rel, say: fmt.Sprintf("sync: %s left as it is"+format, append([]any{rel}, args...)...), once: key + " " + format, skip: true})
}

// writable reports whether the sync may change the space; if not, the file at rel is left
// as it is, and said why.
func (pl *planner) writable(rel, why string) bool {
	if pl.in.writable {
		return true
	}
	pl.skip(rel, " (this token may only read the space, or its changes are reviewed): %s", why)
	return false
}

// retitle notes that document id will have title now ("": deleted).
func (pl *planner) retitle(id, was, now string) {
	if pl.titles[docstore.FoldTitle(was)] == id {
		delete(pl.titles, docstore.FoldTitle(was))
	}
	if now != "" {
		pl.titles[docstore.FoldTitle(now)] = id
	}
}

// known brings one document the state knows in step with its file, which is at rel now
// (present false: gone).
func (pl *planner) known(id, rel string, present bool) {
	in := pl.in
	e := in.st.Docs[id]
	d, inSpace := in.docs[id]
	var f *file
	if present {
		f = in.files[rel]
	}
	fileChanged := false
	if f != nil {
		if err := in.unread[rel]; err != nil {
			pl.skip(rel, ": %v", err)
			return
		}
		fileChanged = f.hash != e.Hash
	}
	if !inSpace || d.Deleted != nil {
		if pl.deletedInSpace(id, e, d, inSpace, f, rel, fileChanged) {
			return
		}
		d.Deleted = nil
		pl.retitle(id, "", d.Title)
	}
	if f == nil {
		pl.goneFromFolder(id, e, d)
		return
	}
	renamed, ok := pl.follow(id, e, &d, rel)
	if !ok {
		return
	}
	spaceChanged := d.Version != e.Version
	switch {
	case !fileChanged && !spaceChanged && renamed:
		pl.add(step{kind: stepWrite, id: id, rel: rel, expect: f.hash, behind: true})
	case !fileChanged && !spaceChanged:
		pl.add(step{kind: stepRecord, id: id, rel: rel})
	case !fileChanged:
		pl.add(step{kind: stepWrite, id: id, rel: rel, expect: f.hash})
	case !in.writable && spaceChanged:
		// A sync killed after it wrote a later version to the file and before its state
		// noted it left the file exactly that version: apply reads the versions since
		// (versionIs). A sync that may write asks SaveKeeping, which looks where the space is.
		pl.add(step{kind: stepCatchUp, id: id, rel: rel, expect: f.hash})
	case !pl.writable(rel, "its edit is not sent, and the space's changes to it wait"):
	default:
		if err := docstore.CheckText(string(in.texts[rel])); err != nil {
			pl.skip(rel, ": %v", err)
			return
		}
		pl.add(step{kind: stepSave, id: id, rel: rel, text: in.texts[rel], expect: f.hash})
	}
}

// deletedInSpace brings in step a document deleted (or purged) in the space, whose file f
// (nil: gone) is at rel: the file removed if unchanged, else the edit wins and the document
// is back (undeleted, then saved) or, purged, the file becomes a new document. done:
// nothing more to plan for it.
func (pl *planner) deletedInSpace(id string, e *Entry, d docstore.Document, inSpace bool, f *file, rel string, fileChanged bool) (done bool) {
	switch {
	case f == nil:
		pl.add(step{kind: stepForget, id: id})
		pl.forgot[id] = true
		return true
	case !fileChanged:
		pl.add(step{kind: stepRemove, id: id, rel: rel, expect: e.Hash})
		pl.forgot[id] = true
		return true
	case !inSpace:
		pl.add(step{kind: stepForget, id: id, rel: rel, say: fmt.Sprintf("sync: %s was edited, and its document was purged from the space: it becomes a new document", rel)})
		pl.forgot[id] = true
		pl.freed[rel] = true
		return true
	}
	if !pl.writable(rel, "its document was deleted in the space") {
		return true
	}
	pl.add(step{kind: stepUndelete, id: id, rel: rel})
	return false
}

// goneFromFolder brings in step a document whose file is gone: deleted (softly) if the
// space has no change since the file's version, else the change wins and the file is back.
func (pl *planner) goneFromFolder(id string, e *Entry, d docstore.Document) {
	if d.Version != e.Version {
		pl.add(step{kind: stepWrite, id: id, rel: e.Path, say: fmt.Sprintf("sync: %s was deleted, but %q changed in the space since: the change wins, the file is back", e.Path, d.Title)})
		return
	}
	if !pl.writable(e.Path, "it was deleted: its document is kept") {
		return
	}
	pl.add(step{kind: stepDelete, id: id, rel: e.Path})
	pl.forgot[id], pl.gone[id] = true, true
	pl.retitle(id, d.Title, "")
}

// follow carries a rename either way: a file moved in the folder renames its document
// (d's title is then the file's); a document renamed in the space moves its file, unless
// its new name is ignored (or taken, or not beneath the folder: apply looks). renamed: a
// rename is planned; false ok: the move is not sent (this sync may not write), and
// nothing more is planned for it.
func (pl *planner) follow(id string, e *Entry, d *docstore.Document, rel string) (renamed, ok bool) {
	switch {
	case rel != e.Path:
		if want := TitleFor(rel); want != d.Title {
			if !pl.writable(rel, fmt.Sprintf("it was moved from %s: its document keeps its title", e.Path)) {
				return false, false
			}
			pl.add(step{kind: stepRename, id: id, rel: rel, title: want})
			pl.retitle(id, d.Title, want)
			d.Title, renamed = want, true
		}
		pl.add(step{kind: stepEntry, id: id, rel: rel})
	case d.Title != e.Title && fileFor(d.Title) != rel:
		to := fileFor(d.Title)
		if pl.in.ig.ignoredPath(to) {
			pl.add(step{kind: stepSay, id: id, once: fmt.Sprintf("ignored %s %d", id, d.Version), say: fmt.Sprintf("sync: %q was renamed %q in the space, but the sync ignores %s (.compassignore): its file stays %s", e.Title, d.Title, to, rel)})
		} else {
			// Its entry takes the new title when the move is made: a move not made now (its
			// place taken, by a file this pass removes, say) is tried again by the next.
			pl.add(step{kind: stepMove, id: id, rel: rel, to: to})
			break
		}
		pl.add(step{kind: stepEntry, id: id})
	case d.Title != e.Title:
		pl.add(step{kind: stepEntry, id: id})
	}
	return renamed, true
}

// newFiles makes a document of each new file, or joins it to the document of its title
// that no file has yet (a first run). The creates come after the joins.
func (pl *planner) newFiles() {
	in := pl.in
	var fresh []string
	for rel := range in.files {
		if _, ok := in.look.claimed[rel]; !ok || pl.freed[rel] {
			fresh = append(fresh, rel)
		}
	}
	slices.Sort(fresh)
	var creates []step
	for _, rel := range fresh {
		b := in.texts[rel]
		err := in.unread[rel]
		if err == nil {
			err = docstore.CheckText(string(b))
		}
		if err != nil {
			pl.skip(rel, ": %v", err)
			continue
		}
		title, err := docstore.CleanTitle(TitleFor(rel))
		if err != nil {
			pl.skip(rel, ": its name is no title: %v", err)
			continue
		}
		id, ok := pl.titles[docstore.FoldTitle(title)]
		if !ok {
			if pl.writable(rel, "a new file is not sent") {
				creates = append(creates, step{kind: stepCreate, rel: rel, title: title, text: b})
			}
			continue
		}
		if other, has := pl.fileOf(id); has {
			pl.skip(rel, ": its title %q is the document of %s", in.docs[id].Title, other)
			continue
		}
		pl.add(step{kind: stepJoin, id: id, rel: rel, text: b})
		pl.joined[id] = rel
	}
	pl.steps = append(pl.steps, creates...)
}

// fileOf is the file document id will have after the steps planned so far, if any.
func (pl *planner) fileOf(id string) (string, bool) {
	if rel, ok := pl.joined[id]; ok {
		return rel, true
	}
	if e := pl.in.st.Docs[id]; e != nil && !pl.forgot[id] {
		if m := pl.in.look.moved[id]; m != "" {
			return m, true
		}
		return e.Path, true
	}
	return "", false
}

// newDocs writes a file for each document of the space that has none: at its title's
// name, or with its id in it when a file is there (or another new document's is).
func (pl *planner) newDocs() {
	in := pl.in
	ids := make([]string, 0, len(in.docs))
	for id, d := range in.docs {
		if _, has := pl.fileOf(id); !has && d.Deleted == nil && !pl.gone[id] && in.noted[id] == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		d := in.docs[id]
		rel := fileFor(d.Title)
		if in.ig.ignoredPath(rel) {
			pl.add(step{kind: stepSay, id: id, once: "ignored " + id, say: fmt.Sprintf("sync: %q is not synced: the sync ignores its file %s (.compassignore); the document is left as it is", d.Title, rel), skip: true})
			continue
		}
		if in.files[rel] != nil && !in.writable {
			continue // its file has another text, which this sync may not send: said by join
		}
		if in.files[rel] != nil || pl.taken[rel] {
			rel = withID(rel, id)
		}
		pl.taken[rel] = true
		pl.add(step{kind: stepWriteNew, id: id, rel: rel})
	}
}
