package filesync

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// Exported says what ExportGit added to a repository.
type Exported struct {
	Branch   string // the branch the space's history is on: refs/heads/<space>
	Versions int    // commits made for versions
	Deletes  int    // commits made for documents deleted (or purged) since the last export
	Restores int    // commits made for documents brought back since the last export
	Moves    int    // commits that moved a file an older export committed at a path git won't check out
}

// gitState is what the last export wrote, kept in the repository itself as state.json on
// the ref refs/compass/<space> (a commit of its own, so that a clone carries it and a
// re-run anywhere adds only what is new): for each document, the last version exported,
// the file it is at and whether it is deleted there.
type gitState struct {
	Space string              `json:"space"`
	Docs  map[string]gitDocAt `json:"docs"`
}

type gitDocAt struct {
	Version int    `json:"version"`
	Path    string `json:"path"`
	Deleted bool   `json:"deleted,omitempty"`
}

// gitEvent is one commit to make: a version (Mark set: its text's blob), a delete or a restore.
type gitEvent struct {
	id      string
	at      time.Time
	n       int // the version's number, 0 for a delete or restore
	title   string
	kind    string
	author  docstore.Author
	mark    int
	deleted bool // a delete (else, with n 0, a restore or a move)
	move    bool // a move of a file exported before at a path git won't check out
}

// ErrNoGit is returned by ExportGit when no git program is found on the PATH.
var ErrNoGit = errors.New("export --git needs the git program, and none is on the PATH")

// ExportGit writes the space's history into the git repository at dir, made (git init) if
// dir is missing or empty: one commit a version, oldest first across documents, on the
// branch refs/heads/<space>. A commit's author is who saved the version (the agent, or the
// person), its committer the person it was saved for (or who accepted it), its time the
// version's; its message names the document, the version's kind and number. A document
// is the file gitFileFor(title) at the repository's top, so a rename is a commit that moves
// the file (git log --follow finds it). A document deleted in the space is a commit that
// removes its file, at the time it was deleted; one brought back, a commit that puts it
// back, at the time of the export that saw it.
//
// Run again, it adds only what happened since: the last version exported of each
// document is kept in the repository (refs/compass/<space>, state.json). The commits are
// streamed to one git fast-import, the texts read a snapshot at a time (Store.Walk); if
// dir's work tree has the branch checked out, it is brought forward to the new commit
// (git read-tree -m -u: files edited there and changed by the export stop it, with git's
// words).
//
// A repository it didn't make (one without refs/compass/<space>, and with any ref) is
// refused with ErrNotExported unless opt.IntoExisting. Exports into one repository take
// turns: each holds a lock in its git directory (compass-export.lock) from before it reads
// what was exported until the work tree is brought forward.
func ExportGit(ctx context.Context, s *docstore.Store, dir string, opt GitOptions) (Exported, error) {
	x := &gitExport{ctx: ctx, s: s, dir: dir}
	git, err := exec.LookPath("git")
	if err != nil {
		return x.ex, ErrNoGit
	}
	x.git, x.branch, x.stateRef = git, "refs/heads/"+s.Space(), "refs/compass/"+s.Space()
	x.ex.Branch = x.branch
	if out, err := exec.CommandContext(ctx, git, "check-ref-format", x.branch).CombinedOutput(); err != nil {
		return x.ex, fmt.Errorf("the space %q can't be a git branch's name: %v %s", s.Space(), err, out)
	}
	made, release, err := gitOpen(ctx, git, dir, s.Space(), opt.lockWait())
	if err != nil {
		return x.ex, err
	}
	defer release()
	if err := x.readState(made, opt.IntoExisting); err != nil {
		return x.ex, err
	}
	docs, err := docstore.ReadIn(ctx, s, (*docstore.Reader).Documents)
	if err != nil {
		return x.ex, fmt.Errorf("exporting %s to git: %w", s.Space(), err)
	}
	if err := x.start(); err != nil {
		return x.ex, err
	}
	if err := x.blobs(docs); err != nil {
		return x.failed(err)
	}
	if err := x.commits(); err != nil {
		return x.failed(err)
	}
	if err := x.finish(); err != nil {
		return x.ex, err
	}
	if len(x.events) == 0 {
		return x.ex, nil
	}
	return x.ex, x.forward()
}

// gitExport is one ExportGit's working set.
type gitExport struct {
	ctx              context.Context
	s                *docstore.Store
	dir, git         string
	branch, stateRef string
	tip, stateTip    string // the branch's and the state ref's commits before ("": none)
	st               gitState
	ex               Exported
	fi               *exec.Cmd // git fast-import
	fiErr            bytes.Buffer
	in               io.WriteCloser
	w                *bufio.Writer
	events           []gitEvent
	mark             int
	holder           map[string]string // lower(path) → id: which file each document is at
}

// run runs git in the repository, and returns its output.
func (x *gitExport) run(args ...string) (string, error) {
	cmd := exec.CommandContext(x.ctx, x.git, args...)
	cmd.Dir = x.dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// readState reads what the last export wrote (state.json on the state ref), refusing a
// repository the export didn't make unless intoExisting.
func (x *gitExport) readState(made, intoExisting bool) error {
	x.tip, _ = x.run("rev-parse", "--verify", "-q", x.branch+"^{commit}")
	x.stateTip, _ = x.run("rev-parse", "--verify", "-q", x.stateRef+"^{commit}")
	if !made && x.stateTip == "" && !intoExisting {
		if refs, err := x.run("for-each-ref", "--count=1", "--format=%(refname)"); err != nil || refs != "" {
			return fmt.Errorf("%w: %s has no %s, so the export would mix the space's history (the branch %s) with what the repository holds; export into a new folder, or give --into-existing to write into it anyway", ErrNotExported, x.dir, x.stateRef, x.branch)
		}
	}
	x.st = gitState{Space: x.s.Space(), Docs: map[string]gitDocAt{}}
	if x.stateTip == "" {
		return nil
	}
	raw, err := x.run("show", x.stateRef+":state.json")
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(raw), &x.st); err != nil {
		return fmt.Errorf("reading %s:state.json in %s, which the last export wrote: %w", x.stateRef, x.dir, err)
	}
	if x.st.Docs == nil {
		x.st.Docs = map[string]gitDocAt{}
	}
	return nil
}

// start starts git fast-import.
func (x *gitExport) start() error {
	x.fi = exec.CommandContext(x.ctx, x.git, "fast-import", "--quiet", "--done")
	x.fi.Dir = x.dir
	x.fi.Stderr = &x.fiErr
	in, err := x.fi.StdinPipe()
	if err != nil {
		return err
	}
	if err := x.fi.Start(); err != nil {
		return fmt.Errorf("starting git fast-import: %w", err)
	}
	x.in, x.w = in, bufio.NewWriterSize(in, 1<<20)
	return nil
}

// failed stops fast-import, and says err with what it said.
func (x *gitExport) failed(err error) (Exported, error) {
	x.in.Close()
	x.fi.Wait()
	return x.ex, fmt.Errorf("exporting %s to git: %w %s", x.s.Space(), err, strings.TrimSpace(x.fiErr.String()))
}

// blobs writes the new versions' texts to fast-import as blobs, document by document
// (Walk reads each text once), and notes the commits that name them, and the deletes,
// returns, purges and moves, sorted in time order.
func (x *gitExport) blobs(docs []docstore.Document) error {
	seen := map[string]bool{}
	for _, d := range docs {
		seen[d.ID] = true
		if err := x.versions(d); err != nil {
			return err
		}
		if err := x.lifecycle(d); err != nil {
			return err
		}
	}
	for id, was := range x.st.Docs { // purged since: its file goes
		if !seen[id] && !was.Deleted {
			x.events = append(x.events, gitEvent{id: id, at: time.Now(), title: strings.TrimSuffix(was.Path, ".md"), kind: "purge", deleted: true})
		}
	}
	slices.SortStableFunc(x.events, func(a, b gitEvent) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.id, b.id), cmp.Compare(a.n, b.n))
	})
	return nil
}

// versions writes the blobs of d's versions after the last exported, and notes their commits.
func (x *gitExport) versions(d docstore.Document) error {
	was := x.st.Docs[d.ID]
	if d.Version <= was.Version {
		return nil
	}
	errEnough := errors.New("enough")
	err := x.s.Walk(x.ctx, d.ID, func(v docstore.Version) error {
		if v.Number <= was.Version {
			return errEnough
		}
		x.mark++
		fmt.Fprintf(x.w, "blob\nmark :%d\ndata %d\n", x.mark, len(v.Text))
		x.w.WriteString(v.Text)
		x.w.WriteByte('\n')
		x.events = append(x.events, gitEvent{id: d.ID, at: v.At, n: v.Number, title: v.Title, kind: string(v.Kind), author: v.Author, mark: x.mark})
		return nil
	})
	if err != nil && err != errEnough {
		return err
	}
	return nil
}

// lifecycle notes d's delete, return, or move to a path git checks out, since the last export.
func (x *gitExport) lifecycle(d docstore.Document) error {
	was, known := x.st.Docs[d.ID]
	switch {
	case d.Deleted != nil && (!known || !was.Deleted):
		x.events = append(x.events, gitEvent{id: d.ID, at: d.Deleted.At, title: d.Title, kind: "delete", author: d.Deleted.By, deleted: true})
	case d.Deleted == nil && known && was.Deleted:
		// Brought back: its file returns with the latest text.
		v, err := docstore.ReadIn(x.ctx, x.s, func(r *docstore.Reader) (docstore.Version, error) {
			_, v, err := r.Read(d.ID, 0)
			return v, err
		})
		if err != nil {
			return err
		}
		x.mark++
		fmt.Fprintf(x.w, "blob\nmark :%d\ndata %d\n%s\n", x.mark, len(v.Text), v.Text)
		x.events = append(x.events, gitEvent{id: d.ID, at: time.Now(), title: v.Title, kind: "undelete", author: d.Author, mark: x.mark})
	case d.Deleted == nil && known && !was.Deleted && d.Version == was.Version && checkGitPath(was.Path) != nil:
		// Committed by an export before paths were checked (GIT~1/config.md): the
		// branch can't be checked out until the file moves where it can.
		x.events = append(x.events, gitEvent{id: d.ID, at: time.Now(), title: d.Title, kind: "move", author: d.Author, move: true})
	}
	return nil
}

// fileOf is the file document id titled title is committed at: a title whose file another
// document has (two titles made the same by FileFor) gets the id in its name.
func (x *gitExport) fileOf(id, title string) (string, error) {
	p := gitFileFor(title)
	if h, ok := x.holder[strings.ToLower(p)]; ok && h != id {
		p = withID(p, id)
	}
	if err := checkGitPath(p); err != nil {
		return "", fmt.Errorf("the file of document %s (%q): %w", id, title, err)
	}
	return p, nil
}

// commits writes a commit for each event, in order.
func (x *gitExport) commits() error {
	x.holder = map[string]string{}
	for id, at := range x.st.Docs {
		if !at.Deleted && at.Path != "" {
			x.holder[strings.ToLower(at.Path)] = id
		}
	}
	for i, e := range x.events {
		ops, err := x.ops(e)
		if err != nil {
			return err
		}
		writeCommit(x.w, x.branch, e, ops, i == 0, x.tip)
	}
	return nil
}

// ops are the file operations of event e's commit; the state notes where its file is now.
func (x *gitExport) ops(e gitEvent) ([]string, error) {
	at := x.st.Docs[e.id]
	var ops []string
	if e.deleted {
		if at.Path != "" && !at.Deleted {
			ops = append(ops, "D "+quotePath(at.Path))
			delete(x.holder, strings.ToLower(at.Path))
		}
		at.Deleted = true
		x.ex.Deletes++
		x.st.Docs[e.id] = at
		return ops, nil
	}
	p, err := x.fileOf(e.id, e.title)
	if err != nil {
		return nil, err
	}
	switch {
	case e.n > 0:
		if at.Path != "" && !at.Deleted && at.Path != p {
			ops = append(ops, "R "+quotePath(at.Path)+" "+quotePath(p))
			delete(x.holder, strings.ToLower(at.Path))
		}
		ops = append(ops, fmt.Sprintf("M 100644 :%d %s", e.mark, quotePath(p)))
		at.Path, at.Version, at.Deleted = p, e.n, false
		x.ex.Versions++
	case e.move:
		ops = append(ops, "R "+quotePath(at.Path)+" "+quotePath(p))
		delete(x.holder, strings.ToLower(at.Path))
		at.Path = p
		x.ex.Moves++
	default: // brought back
		ops = append(ops, fmt.Sprintf("M 100644 :%d %s", e.mark, quotePath(p)))
		at.Path, at.Deleted = p, false
		x.ex.Restores++
	}
	x.holder[strings.ToLower(p)] = e.id
	x.st.Docs[e.id] = at
	return ops, nil
}

// finish writes the state (a commit on the state ref) and ends fast-import.
func (x *gitExport) finish() error {
	stateJSON, err := json.MarshalIndent(x.st, "", " ")
	if err != nil {
		_, err = x.failed(err)
		return err
	}
	if len(x.events) > 0 || x.stateTip == "" {
		const msg = "compass-mcp export --git: what was exported\n"
		fmt.Fprintf(x.w, "commit %s\ncommitter compass-mcp <export@compass> %d +0000\ndata %d\n%s", x.stateRef, time.Now().Unix(), len(msg), msg)
		if x.stateTip != "" {
			fmt.Fprintf(x.w, "from %s\n", x.stateTip)
		}
		fmt.Fprintf(x.w, "deleteall\nM 100644 inline state.json\ndata %d\n%s\n\n", len(stateJSON), stateJSON)
	}
	x.w.WriteString("done\n")
	if err := x.w.Flush(); err != nil {
		_, err = x.failed(err)
		return err
	}
	if err := x.in.Close(); err != nil {
		_, err = x.failed(err)
		return err
	}
	if err := x.fi.Wait(); err != nil {
		return fmt.Errorf("git fast-import in %s: %w: %s", x.dir, err, strings.TrimSpace(x.fiErr.String()))
	}
	return nil
}

// forward brings the work tree forward when it has the branch checked out.
func (x *gitExport) forward() error {
	head, _ := x.run("symbolic-ref", "-q", "HEAD")
	if head != x.branch {
		return nil
	}
	args := []string{"read-tree", "-m", "-u", x.branch}
	if x.tip != "" {
		args = []string{"read-tree", "-m", "-u", x.tip, x.branch}
	}
	if _, err := x.run(args...); err != nil {
		return fmt.Errorf("the export is on %s, but the files in %s were left as they were: %w", x.branch, x.dir, err)
	}
	return nil
}

// writeCommit writes one commit of e to fast-import: the first of a run continues from the
// branch's tip, when it has one.
func writeCommit(w *bufio.Writer, branch string, e gitEvent, ops []string, first bool, tip string) {
	author := ident(e.author.By)
	committer := author
	switch {
	case e.author.Accepted != "":
		committer = ident(e.author.Accepted)
	case e.author.For != "":
		committer = ident(e.author.For)
	}
	when := fmt.Sprintf("%d +0000", e.at.Unix())
	var msg strings.Builder
	if e.n > 0 {
		fmt.Fprintf(&msg, "%s %s (version %d)\n\nDocument: %s\nVersion: %d\nKind: %s\n", e.kind, e.title, e.n, e.id, e.n, e.kind)
	} else {
		fmt.Fprintf(&msg, "%s %s\n\nDocument: %s\nKind: %s\n", e.kind, e.title, e.id, e.kind)
	}
	if e.author.By != "" {
		fmt.Fprintf(&msg, "By: %s\n", e.author.By)
	}
	if e.author.For != "" {
		fmt.Fprintf(&msg, "For: %s\n", e.author.For)
	}
	fmt.Fprintf(w, "commit %s\nauthor %s %s\ncommitter %s %s\ndata %d\n%s", branch, author, when, committer, when, msg.Len(), msg.String())
	if first && tip != "" {
		fmt.Fprintf(w, "from %s\n", tip)
	}
	for _, op := range ops {
		w.WriteString(op)
		w.WriteByte('\n')
	}
	w.WriteByte('\n')
}

// ident is git's "Name <email>" for an actor ("agent:north" is north <agent:north>); git
// refuses < > and line breaks in either, so they go.
func ident(actor string) string {
	if actor == "" {
		actor = "person:unknown"
	}
	clean := strings.Map(func(r rune) rune {
		if r == '<' || r == '>' || r == '\n' || r == '\r' || r == 0 {
			return -1
		}
		return r
	}, actor)
	name := clean
	if _, id, ok := strings.Cut(clean, ":"); ok && strings.TrimSpace(id) != "" {
		name = id
	}
	return strings.TrimSpace(name) + " <" + clean + ">"
}

// quotePath is a path as fast-import reads it: always quoted, C style, with only " and \
// escaped (strconv.Quote's \u escapes are not git's; FileFor leaves no line breaks or
// control characters, and any other byte is taken as it is).
func quotePath(p string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(p) + `"`
}

// GitOptions are ExportGit's choices.
type GitOptions struct {
	// IntoExisting lets the export write into a repository it didn't make (no
	// refs/compass/<space>): its branch is added beside the repository's own.
	IntoExisting bool
	// LockWait is how long an export waits for another one into the same repository to
	// finish (0: ten minutes).
	LockWait time.Duration
}

func (o GitOptions) lockWait() time.Duration {
	if o.LockWait > 0 {
		return o.LockWait
	}
	return 10 * time.Minute
}

// ErrNotExported is returned (wrapped) by ExportGit for a repository it didn't make.
var ErrNotExported = errors.New("this git repository has no export of the space")

// ErrExportBusy is returned (wrapped, naming the other process) by ExportGit when another
// export into the same repository kept its lock past GitOptions.LockWait.
var ErrExportBusy = errors.New("another export is writing into this repository")

// gitOpen takes the export's lock in dir's git directory, making dir a git repository whose
// HEAD is the space's branch (git init) when it is missing or empty, and says whether it
// made it. A folder with files but no .git is refused: the export would mix the space's
// history with files it doesn't know. The lock is taken before git init, in the .git
// folder the init is to fill, so that two exports into a new folder don't both make it.
func gitOpen(ctx context.Context, git, dir, space string, wait time.Duration) (made bool, release func(), err error) {
	gitDir := filepath.Join(dir, ".git")
	switch fi, err := os.Stat(gitDir); {
	case err == nil && fi.IsDir():
	case err == nil: // a .git file: a linked work tree or a submodule; git says where
		out, err := exec.CommandContext(ctx, git, "-C", dir, "rev-parse", "--path-format=absolute", "--git-common-dir").Output()
		if err != nil {
			return false, nil, fmt.Errorf("finding the git directory of %s: %w", dir, err)
		}
		gitDir = strings.TrimSpace(string(out))
	default:
		if fi, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil && !fi.IsDir() {
			gitDir = dir // a bare repository
			break
		}
		if f, err := os.Open(dir); err == nil {
			// A folder holding only .git was made by another export into the same new
			// folder between the Stat above and this look: it waits for that one's lock.
			names, err := f.Readdirnames(2)
			f.Close()
			if err != io.EOF && !slices.Equal(names, []string{".git"}) {
				return false, nil, fmt.Errorf("%s has files and is not a git repository: export --git writes into a new folder or a repository it wrote before", dir)
			}
		}
		if err := os.MkdirAll(gitDir, 0o755); err != nil {
			return false, nil, err
		}
	}
	release, err = lockExport(ctx, filepath.Join(gitDir, "compass-export.lock"), wait)
	if err != nil {
		return false, nil, err
	}
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err == nil {
		return false, release, nil
	}
	// Made here (or by an export stopped before its git init): nobody else's yet.
	out, err := exec.CommandContext(ctx, git, "init", "-q", "--initial-branch="+space, dir).CombinedOutput()
	if err != nil {
		release()
		return false, nil, fmt.Errorf("git init %s: %w: %s", dir, err, out)
	}
	return true, release, nil
}

// lockExport takes the lock at p, waiting (a look every 50 ms) while another process holds
// it, at most wait. The file holds the holder's pid, so that the one waiting can name it.
func lockExport(ctx context.Context, p string, wait time.Duration) (func(), error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the export's lock %s: %w", p, err)
	}
	deadline := time.Now().Add(wait)
	for {
		held, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", p, err)
		}
		if !held {
			break
		}
		if time.Now().After(deadline) {
			b := make([]byte, 64)
			n, _ := f.ReadAt(b, 0)
			f.Close()
			who := "another process"
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
				who = fmt.Sprintf("process %d", pid)
			}
			return nil, fmt.Errorf("%w: %s has held %s for over %s; try again once it is done", ErrExportBusy, who, p, wait)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		f.Truncate(0)
		unlockFile(f)
		f.Close()
	}, nil
}
