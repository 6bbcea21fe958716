package claudecode

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// Options says what an Importer imports.
type Options struct {
	Dir     string // the folder of projects, like ~/.claude/projects
	Project string // if set, only the sessions of the project at this path (or of this folder of Dir)
	Me      string // the person whose prompts these are: an id, or person:<id>
	Log     *slog.Logger
	// NoNotify makes Follow look for changes every poll even where the system notifies
	// them: for folders on file systems that don't (network mounts), and to measure.
	NoNotify bool
}

// Origin is the conversations' origin that an Importer makes, and the only one it adds to
// (threads.Store.ImportParts): a transcript can't write into a conversation that came from
// elsewhere (a chat bridge's, a person's say).
var Origin = threads.Origin{Name: "claude-code", Agent: Agent}

// Summary says what one pass of an Importer did.
type Summary struct {
	Files         int // transcripts read (the new part of each)
	Conversations int // conversations created or changed
	Messages      int // messages added
	Skipped       int // messages already there
	Unreadable    int // lines that are not JSON, skipped
	Pending       int // files with more to read than one pass reads (passBudget): the next pass goes on
}

// Importer imports Claude Code's session transcripts into a space, from where it last
// stopped: how far each file was read is kept in the store with the messages read from it,
// in the same transaction (threads.Store.ImportParts), so a restart (or another process)
// reads only what is new.
//
// # Caveats
//
// Files are read and parsed outside any transaction; what they give is written in short
// transactions (at most writeBatch messages each), so another process sharing the data file
// is never kept waiting for long. Two followers of the same folder share the work: each
// reads the offsets the other wrote, and a message read twice is added once (by its uuid).
type Importer struct {
	s      *threads.Store
	opt    Options
	me     string
	seen   map[string]fileStamp // what each file looked like when last read, to skip it unchanged
	mu     sync.Mutex
	faults map[string]string // the fault last said of each file that can't be read
}

// fileStamp is what a stat says of a file: if it is the same file (not another renamed
// into its place) and neither its size nor its time changed, neither did it.
type fileStamp struct {
	size int64
	mod  time.Time
	fi   os.FileInfo
}

func (a fileStamp) same(b fileStamp) bool {
	return a.size == b.size && a.mod.Equal(b.mod) && a.fi != nil && b.fi != nil && os.SameFile(a.fi, b.fi)
}

// source is a followed file's state as stored.
type source struct {
	Offset int64  `json:"offset"` // read up to here
	Head   string `json:"head"`   // hash of the file's first min(Offset, headSize) bytes: another file in its place has other ones
	// Tail is the hash of the headSize bytes (or fewer) that end at Offset: a file cut back
	// and grown again past Offset between two looks has other ones there, unless it was
	// rewritten as it was. "" (offsets stored before it was kept) checks nothing.
	Tail string `json:"tail,omitempty"`
	transcript
}

// passBudget is about how many bytes one pass reads of one file: the rest waits for the next.
var passBudget int64 = 16 << 20

const (
	headSize   = 1024
	writeBatch = 50_000 // messages a transaction
	readChunk  = 8 << 20
	maxLine    = 64 << 20 // a longer line is skipped: a transcript line holding a huge tool output
	writeDelay = 100 * time.Millisecond
)

// New returns an importer of the transcripts that opt names, into s's space.
func New(s *threads.Store, opt Options) (*Importer, error) {
	me, err := spaces.ParseActor(opt.Me)
	if err != nil || me.Agent {
		return nil, fmt.Errorf("importing Claude Code sessions needs the person whose prompts they are (person:<id>), got %q", opt.Me)
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Dir, err = filepath.Abs(opt.Dir); err != nil {
		return nil, err
	}
	c := &Importer{s: s, opt: opt, me: me.String(), seen: map[string]fileStamp{}, faults: map[string]string{}}
	if opt.Project != "" {
		if err := c.projectThere(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// projectThere checks that Options.Project names a project folder of Dir: a path mistyped
// would import nothing, and say nothing of why.
func (c *Importer) projectThere() error {
	projects, err := os.ReadDir(c.opt.Dir)
	if err != nil {
		return fmt.Errorf("reading Claude Code's projects: %w", err)
	}
	var names []string
	for _, p := range projects {
		if p.IsDir() {
			if c.wanted(p.Name()) {
				return nil
			}
			names = append(names, p.Name())
		}
	}
	list := "it has none"
	if len(names) > 0 {
		if len(names) > 5 {
			names = append(names[:5], "…")
		}
		list = "it has " + strings.Join(names, ", ")
	}
	return fmt.Errorf("%w: no project folder of %s in %s (%s); give the path of a project as Claude Code ran in it, or one of these folders' names", ErrNoProject, c.opt.Project, c.opt.Dir, list)
}

// ErrNoProject is returned by New when Options.Project names no project folder of Options.Dir.
var ErrNoProject = errors.New("no such project")

// DefaultDir is where Claude Code keeps its projects: $CLAUDE_CONFIG_DIR/projects when set
// (Claude Code's own setting), else ~/.claude/projects.
func DefaultDir() (string, error) {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "projects"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding Claude Code's projects (give the folder): %w", err)
	}
	return filepath.Join(home, ".claude", "projects"), nil
}

// CurrentSession is the id of the Claude Code session that started this process, if Claude
// Code did: recent versions give the MCP servers they start CLAUDECODE=1 and
// CLAUDE_CODE_SESSION_ID. Imported, that session is the conversation with this id.
func CurrentSession() string {
	if os.Getenv("CLAUDECODE") != "1" {
		return ""
	}
	return os.Getenv("CLAUDE_CODE_SESSION_ID")
}

// walk lists the transcripts under the folder, and the folders that hold them or may.
func (c *Importer) walk() (files, dirs []string, err error) {
	projects, err := os.ReadDir(c.opt.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading Claude Code's projects: %w", err)
	}
	for _, p := range projects {
		if !p.IsDir() || !c.wanted(p.Name()) {
			continue
		}
		_ = filepath.WalkDir(filepath.Join(c.opt.Dir, p.Name()), func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil // a folder that went away or can't be read: the others still can
			case d.IsDir() && d.Name() == "tool-results":
				return fs.SkipDir // Claude Code's copies of large tool outputs: thousands of files, no transcript
			case d.IsDir():
				dirs = append(dirs, path)
			case strings.HasSuffix(d.Name(), ".jsonl"):
				files = append(files, path)
			}
			return nil
		})
	}
	slices.Sort(files)
	return files, dirs, nil
}

// wanted reports whether the project folder name is one to import. Claude Code names a
// project's folder after its path, each character other than a letter or digit a '-'
// (older versions replaced only '/'): both are matched, and so is the folder's own name.
func (c *Importer) wanted(name string) bool {
	p := c.opt.Project
	if p == "" {
		return true
	}
	if name == p {
		return true
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	p = filepath.ToSlash(p)
	all := strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, p)
	return name == all || name == strings.ReplaceAll(p, "/", "-")
}

// sourceKey is where the store keeps how far the file at path was read.
func sourceKey(path string) string { return "claude-code:" + path }

// Pass imports what is new in every transcript, and returns what it did. It reads about
// passBudget bytes of each file at most: a file with more to read counts in Summary.Pending,
// and the next pass goes on from where this one stopped.
func (c *Importer) Pass(ctx context.Context) (Summary, error) { return c.pass(ctx, nil) }

// pass is Pass, reading no further once ctx ends (what was read is written), and watching,
// if w is not nil, the folders it finds.
func (c *Importer) pass(ctx context.Context, w *watcher) (Summary, error) {
	files, dirs, err := c.walk()
	if err != nil {
		return Summary{}, err
	}
	if w != nil {
		w.watch(c.opt.Dir, dirs)
	}
	changed, stamps := c.changed(files)
	var sum Summary
	if len(changed) == 0 {
		return sum, nil
	}
	stored, err := c.sources(ctx, changed)
	if err != nil {
		return sum, err
	}
	b := &batch{c: c, states: map[string]source{}}
	var done []string // read to their end without fault: not read again until they change
	var werr error
	// What was read is written within writeDelay, or once it is writeBatch messages, so
	// that a file slow to read keeps no other's lines waiting, and many small files are
	// written in few transactions.
	var due <-chan time.Time
	results := c.readAll(ctx, changed, stored)
	for results != nil {
		select {
		case <-due:
			werr, due = cmp.Or(werr, b.write(ctx, &sum)), nil
			continue
		case r, ok := <-results:
			if !ok {
				results = nil
				continue
			}
			if werr != nil {
				continue // drain: the workers finish the files they were given
			}
			if c.failed(r.file, r.err) {
				continue
			}
			if r.more {
				sum.Pending++
			} else {
				done = append(done, r.file)
			}
			if r.read {
				sum.Files++
			}
			b.merge(r.b)
			if b.n >= writeBatch {
				werr, due = b.write(ctx, &sum), nil
			} else if due == nil {
				due = time.After(writeDelay)
			}
		}
	}
	if werr != nil {
		return sum, werr
	}
	if err := b.write(ctx, &sum); err != nil {
		return sum, err
	}
	for _, f := range done {
		c.seen[f] = stamps[f]
	}
	return sum, nil
}

// failed reports whether reading file failed with err, saying so on the log once for each
// file and fault (a file that can't be read is looked at again at each pass, and is read
// when it can be).
func (c *Importer) failed(file string, err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		delete(c.faults, file)
		return false
	}
	if c.faults[file] != err.Error() {
		c.faults[file] = err.Error()
		c.opt.Log.Warn("skipping a Claude Code transcript that can't be read", "file", file, "err", err)
	}
	return true
}

// changed is those of files that are new or changed since they were last read, and what a
// stat said of each. One that is not a regular file (a FIFO, a device, a socket named
// *.jsonl) is skipped, and said once.
func (c *Importer) changed(files []string) ([]string, map[string]fileStamp) {
	var changed []string
	stamps := map[string]fileStamp{}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			continue // gone since it was listed
		}
		if !fi.Mode().IsRegular() {
			c.failed(f, notRegular(fi))
			continue
		}
		st := fileStamp{fi.Size(), fi.ModTime(), fi}
		if old, ok := c.seen[f]; ok && old.same(st) {
			continue
		}
		changed = append(changed, f)
		stamps[f] = st
	}
	return changed, stamps
}

// errNotRegular is what reading a transcript that is not a regular file fails with.
var errNotRegular = errors.New("not a regular file: only regular files are read")

func notRegular(fi os.FileInfo) error {
	return fmt.Errorf("%w (a %s)", errNotRegular, fi.Mode().Type())
}

// openRegular opens file for reading if it is a regular file. It opens it non-blocking, as
// a FIFO opened for reading otherwise waits for a writer, for good; then what the open file
// is (not what a stat before said it was: it may have been replaced since) decides.
func openRegular(file string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// readResult is what reading one file gave.
type readResult struct {
	file string
	b    *batch
	read bool // there was something new to read
	more bool // there is more to read than one pass reads
	err  error
}

// readAll reads files, each from where stored says it was read to, by as many workers as
// there are processors, outside any transaction (the caller writes what they give), and
// stops reading once ctx ends. The channel is closed when every file given out was read.
func (c *Importer) readAll(ctx context.Context, files []string, stored map[string]source) <-chan readResult {
	todo := make(chan string)
	results := make(chan readResult, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range todo {
				r := readResult{file: f, b: &batch{c: c, states: map[string]source{}}}
				r.read, r.more, r.err = c.read(ctx, f, stored[f], r.b)
				results <- r
			}
		}()
	}
	go func() {
		defer close(todo)
		for _, f := range files {
			select {
			case todo <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	return results
}

// batch is what was read and not yet written: parts of conversations, and where each file
// was read up to.
type batch struct {
	c      *Importer
	parts  []threads.Part
	states map[string]source
	n      int // messages in parts
	sum    Summary
}

// merge moves what o holds into b.
func (b *batch) merge(o *batch) {
	b.parts = append(b.parts, o.parts...)
	for f, st := range o.states {
		b.states[f] = st
	}
	b.n += o.n
	b.sum.Unreadable += o.sum.Unreadable
}

// read reads file from where src says it was read up to, adding what it says to b, and
// reports whether there was anything new to read, and whether more is left than this pass
// read of it.
func (c *Importer) read(ctx context.Context, file string, src source, b *batch) (read, more bool, err error) {
	f, fi, err := openRegular(file)
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	head := make([]byte, headSize)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return false, false, err
	}
	head = head[:n]
	if src, err = c.resume(f, file, fi.Size(), head, src); err != nil {
		return false, false, err
	}
	src.stem = strings.TrimSuffix(filepath.Base(file), ".jsonl")
	if !isSession(src.stem) {
		src.stem = "claude-code:" + headHash([]byte(file))
	}
	src.mod = fi.ModTime()
	if threads.CheckTime(src.mod) != nil {
		src.mod = time.Now()
	}
	if src.Offset == fi.Size() {
		return false, false, nil
	}
	from := src.Offset
	if more, err = c.readLines(ctx, f, fi.Size(), &src, b); err != nil {
		return false, false, err
	}
	if src.Pending {
		// A summary whose conversation has no message yet: it titles it if it exists, and
		// stays pending to title it with its first message otherwise.
		b.parts = append(b.parts, threads.Part{Conversation: src.own(), Title: src.Title})
	}
	if src.Offset == from {
		return false, more, nil // only the start of a line still being written
	}
	src.Head = headHash(head[:min(int64(n), src.Offset)])
	if src.Tail, err = tailHash(f, src.Offset); err != nil {
		return false, false, err
	}
	b.states[file] = src
	return true, more, nil
}

// resume is src when f (of size bytes, starting with head) is still the file that was read
// up to src.Offset; else, a file cut back, replaced, or rewritten before that offset, it is
// a source that reads it again from its start.
func (c *Importer) resume(f *os.File, file string, size int64, head []byte, src source) (source, error) {
	if src.Offset == 0 {
		return src, nil
	}
	why := ""
	switch {
	case size < src.Offset:
		why = "a Claude Code transcript is shorter than what was read of it: reading it again"
	case headHash(head[:min(int64(len(head)), src.Offset)]) != src.Head:
		why = "a Claude Code transcript was replaced: reading it again"
	case src.Tail != "":
		tail, err := tailHash(f, src.Offset)
		if err != nil {
			return src, err
		}
		if tail != src.Tail {
			why = "a Claude Code transcript was rewritten before where it was read to: reading it again"
		}
	}
	if why == "" {
		return src, nil
	}
	c.opt.Log.Info(why, "file", file)
	return source{}, nil
}

// readLines reads f (of size bytes when it was opened) from src.Offset, a chunk at a time, adding what each whole line says to
// b and moving src.Offset past it, until its end, ctx's, or (more) passBudget bytes were
// read. A line over maxLine, or holding a NUL byte, is skipped and counted unreadable: NUL
// bytes are no JSON text's, and a hole in a sparse file (which reads as NUL bytes) is
// skipped without reading it. The start of a line still being written is left for the next
// read.
func (c *Importer) readLines(ctx context.Context, f *os.File, size int64, src *source, b *batch) (more bool, err error) {
	buf := make([]byte, 0, max(1, min(readChunk, passBudget, size-src.Offset+1)))
	pos := src.Offset // where the next read starts: src.Offset + len(buf), or further on while skipping
	skipping := false // within a line that is skipped
	var read int64    // bytes read this pass
	start := src.Offset
	for {
		if ctx.Err() != nil {
			return true, nil
		}
		// Past the budget, stop at the end of a line, or within one that is skipped (its
		// rest is skipped at the next pass); a line longer than the budget that this pass
		// began with is read to its end (maxLine at most), else it would never be.
		if read >= passBudget && (len(buf) == 0 || skipping || src.Offset > start) {
			if skipping {
				src.Offset = pos
			}
			return true, nil
		}
		if data, err := nextData(f, pos); err != nil {
			return false, err
		} else if data > pos {
			// A hole: the line it is in is skipped, from its start to its '\n'.
			pos, skipping = data, true
			buf = buf[:0]
			src.Offset = pos
		}
		if len(buf) == cap(buf) {
			if len(buf) >= maxLine {
				buf, skipping = buf[:0], true
				src.Offset = pos
			} else {
				buf = slices.Grow(buf, len(buf))
			}
		}
		m, rerr := f.ReadAt(buf[len(buf):cap(buf)], pos)
		buf = buf[:len(buf)+m]
		pos += int64(m)
		read += int64(m)
		if skipping {
			if i := bytes.IndexByte(buf, '\n'); i < 0 {
				buf = buf[:0]
				src.Offset = pos
			} else {
				b.sum.Unreadable++
				src.Offset = pos - int64(len(buf)) + int64(i+1)
				buf = buf[:copy(buf, buf[i+1:])]
				skipping = false
			}
		}
		if !skipping {
			end := splitLines(buf, src.Offset, func(line []byte, _ int64) { c.take(line, src, b) })
			buf = buf[:copy(buf, buf[end-src.Offset:])]
			src.Offset = end
			if bytes.IndexByte(buf, 0) >= 0 { // the line being read is no JSON
				buf, skipping = buf[:0], true
				src.Offset = pos
			}
		}
		if rerr == io.EOF || m == 0 && rerr == nil {
			return false, nil
		}
		if rerr != nil {
			return false, rerr
		}
	}
}

// take adds what one line of a transcript says to b.
func (c *Importer) take(line []byte, src *source, b *batch) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	p, ok := src.parseLine(line, c.me)
	if !ok {
		b.sum.Unreadable++
		return
	}
	if p = src.titled(p); len(p.Messages) > 0 || p.Title != "" {
		b.parts = append(b.parts, p)
		b.n += len(p.Messages)
	}
}

// tailHash is the hash of the headSize bytes (or fewer, from the start) of f that end at offset.
func tailHash(f *os.File, offset int64) (string, error) {
	from := max(0, offset-headSize)
	b := make([]byte, offset-from)
	if _, err := f.ReadAt(b, from); err != nil {
		return "", err
	}
	return headHash(b), nil
}

func headHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// write stores what b holds in one transaction and empties it. What was read is written
// even when ctx ends meanwhile (a follower stopping): the write is not left half way to
// be read again.
func (b *batch) write(ctx context.Context, sum *Summary) error {
	if len(b.parts) == 0 && len(b.states) == 0 {
		return nil
	}
	sources := make(map[string][]byte, len(b.states))
	for file, st := range b.states {
		val, err := json.Marshal(st)
		if err != nil {
			return err
		}
		sources[sourceKey(file)] = val
	}
	got, err := b.c.s.ImportParts(context.WithoutCancel(ctx), Origin, b.parts, sources)
	if err != nil {
		return fmt.Errorf("importing Claude Code sessions: %w", err)
	}
	for _, id := range got.Refused {
		b.c.opt.Log.Warn("a Claude Code transcript names a conversation that Claude Code's import did not make: its lines are not added to it", "conversation", id)
	}
	sum.Conversations += got.Conversations
	sum.Messages += got.Messages
	sum.Skipped += got.Skipped
	sum.Unreadable += b.sum.Unreadable
	b.parts, b.states, b.n, b.sum = nil, map[string]source{}, 0, Summary{}
	return nil
}

// sources reads how far each of files was read.
func (c *Importer) sources(ctx context.Context, files []string) (map[string]source, error) {
	keys := make([]string, len(files))
	for i, f := range files {
		keys[i] = sourceKey(f)
	}
	var raw map[string][]byte
	err := c.s.View(ctx, func(r *threads.Reader) error { raw = r.Sources(keys); return nil })
	if err != nil {
		return nil, err
	}
	out := map[string]source{}
	for _, f := range files {
		val, ok := raw[sourceKey(f)]
		if !ok {
			continue
		}
		var src source
		if err := json.Unmarshal(val, &src); err != nil {
			// Read again from the start: the messages' ids keep it from adding twice.
			continue
		}
		out[f] = src
	}
	return out, nil
}

// Follow imports what is new whenever a transcript grows or a new one appears, until ctx
// ends. It waits on the system's file notifications where there are (Linux), looking again
// at least every rescan; elsewhere it looks every poll. A pass that fails is logged and
// tried again at the next change.
func (c *Importer) Follow(ctx context.Context, poll time.Duration) error {
	w := newWatcher(c.opt.Log, !c.opt.NoNotify)
	defer w.close()
	for {
		sum, err := c.pass(ctx, w)
		switch {
		case err != nil:
			c.opt.Log.Warn("importing Claude Code sessions", "err", err)
		case sum.Messages > 0 || sum.Conversations > 0:
			c.opt.Log.Info("imported from Claude Code", "messages", sum.Messages, "conversations", sum.Conversations)
		}
		wait := poll
		switch {
		case sum.Pending > 0:
			wait = 0 // a file has more to read: on with it
		case w.live():
			wait = rescan
		}
		if !w.wait(ctx, wait) {
			return nil
		}
	}
}

// rescan is how often a follower with file notifications looks at every file anyway: a
// change it was not told of (a folder made before it was watched) waits at most this long.
const rescan = 30 * time.Second

// Start follows (Follow) in the background until ctx ends or stop is called. stop waits
// for the follower to end, but at most grace: it reports whether it ended, so that a
// server stopping is never held for good by a read or a write that doesn't return (it
// says so on the log, and leaves it).
func (c *Importer) Start(ctx context.Context, poll time.Duration) (stop func(grace time.Duration) bool) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.Follow(ctx, poll); err != nil {
			c.opt.Log.Warn("following Claude Code's sessions stopped", "err", err)
		}
	}()
	return func(grace time.Duration) bool {
		cancel()
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
			return true
		case <-t.C:
			c.opt.Log.Warn("the Claude Code follower did not stop in time: leaving it", "waited", grace)
			return false
		}
	}
}

// Import imports everything new: it passes until no file has more to read (a file over
// passBudget takes several passes, each written before the next), and adds up what they did
// (a file or conversation that several passes read counts once a pass).
func (c *Importer) Import(ctx context.Context) (Summary, error) {
	var sum Summary
	for {
		s, err := c.Pass(ctx)
		sum.Files += s.Files
		sum.Conversations += s.Conversations
		sum.Messages += s.Messages
		sum.Skipped += s.Skipped
		sum.Unreadable += s.Unreadable
		if err != nil || s.Pending == 0 {
			return sum, err
		}
	}
}

// FollowDefault follows the sessions of DefaultDir into s for me (the person), as Start
// does, beside a server: a folder that isn't there, or can't be followed, is said once on
// log, and then nothing is followed (stop does nothing).
func FollowDefault(ctx context.Context, s *threads.Store, me string, log *slog.Logger) (stop func(grace time.Duration) bool) {
	dir, err := DefaultDir()
	if err == nil {
		if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
			err = fmt.Errorf("no folder %s", dir)
		}
	}
	var c *Importer
	if err == nil {
		c, err = New(s, Options{Dir: dir, Me: me, Log: log})
	}
	if err != nil {
		log.Warn("not following Claude Code's sessions", "err", err)
		return func(time.Duration) bool { return true }
	}
	return c.Start(ctx, time.Second)
}
