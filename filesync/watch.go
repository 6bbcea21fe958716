package filesync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch is how Run follows the folder and the space.
type Watch struct {
	// Every is how often the whole folder is compared with the space whatever the watcher
	// said (watchers miss events: an overflowed queue, a network folder): 2 minutes when 0.
	Every time.Duration
	// Settle is how long a folder must have no new events before a pass runs, so that a
	// file being written (an editor's save in several steps, a git checkout) is read once
	// its size and time are still: 300 ms when 0.
	Settle time.Duration
	// Store, if it tells of its commits (PostgreSQL's LISTEN/NOTIFY: a Changes method),
	// wakes a pass at once when the space changes.
	Store any
	// Data, else, is the bbolt file, whose size and time are looked at every second (a
	// stat: every commit changes them).
	Data string
	// Poll, if set, is how often a pass asks the space what changed when nothing tells
	// (a team server: a pass that finds nothing changed costs one listing).
	Poll time.Duration
	// Passed, if set, gets each pass's report.
	Passed func(Report)
}

// changes is what a store that tells of its commits has (kv/pg's DB).
type changes interface {
	Changes(ctx context.Context) <-chan struct{}
}

// Run keeps the folder and the space the same until ctx ends: a pass at start (edits made
// while the sync was stopped arrive then: the folder is the queue), a pass when the
// folder's events have settled, when the space changes, and every Watch.Every. Only
// Create, Write, Remove and Rename events count, and only for files the sync doesn't
// ignore; the sync's own writes come back as events, and the pass they wake finds the
// files as it left them (by size, time and inode, else by hash) and does nothing. New
// folders are watched as passes find them. A pass that stops on a guard
// (ErrFolderMissing, ErrFolderEmpty, ErrTooManyDeletes), or on a token a server refuses
// (ErrUnauthorized, ErrForbidden), ends Run with its error; other failures (a server that
// doesn't answer) are said and tried again at the next pass.
func (y *Sync) Run(ctx context.Context, w Watch) error {
	if w.Every <= 0 {
		w.Every = 2 * time.Minute
	}
	if w.Settle <= 0 {
		w.Settle = 300 * time.Millisecond
	}
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", y.Dir, err)
	}
	defer watcher.Close()
	r := &runner{y: y, ctx: ctx, w: w, watcher: watcher, watched: map[string]bool{}, ig: readIgnore(y.Dir), settle: time.NewTimer(time.Hour)}
	r.settle.Stop()
	if err := r.pass(); err != nil {
		return err
	}
	return r.loop()
}

// runner is Run's working set.
type runner struct {
	y       *Sync
	ctx     context.Context
	w       Watch
	watcher *fsnotify.Watcher
	watched map[string]bool // the folders watched
	ig      ignorer
	settle  *time.Timer // a pass once the events have been still for w.Settle
}

// pass runs a pass, and watches the folders it found; it returns the errors that end Run.
func (r *runner) pass() error {
	y, w := r.y, r.w
	rep, err := y.Once(r.ctx)
	if errors.Is(err, ErrFolderMissing) || errors.Is(err, ErrFolderEmpty) || errors.Is(err, ErrTooManyDeletes) ||
		errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden) {
		return err
	}
	if err != nil && r.ctx.Err() == nil {
		y.say("sync: a pass failed, tried again at the next: %v", err)
	}
	added := false
	for _, f := range y.folders {
		if !r.watched[f] {
			added = true
			if err := r.watcher.Add(f); err != nil {
				y.say("sync: %s is not watched (%v): its changes arrive with the pass every %s", f, err, w.Every)
			}
			r.watched[f] = true
		}
	}
	if w.Passed != nil {
		w.Passed(rep)
	}
	r.ig = readIgnore(y.Dir)
	if added {
		// What was written in a new folder between the scan and its watch made no
		// event: a pass again, once it is watched, finds it.
		r.settle.Reset(w.Settle)
	}
	return nil
}

// loop waits for what wakes a pass: the folder's events, settled; the space's commits (or
// the bbolt file's stat, or a poll of a server); every w.Every.
func (r *runner) loop() error {
	w := r.w
	var space <-chan struct{}
	var poll <-chan time.Time
	if c, ok := w.Store.(changes); ok {
		space = c.Changes(r.ctx)
	} else if w.Data != "" {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		poll = t.C
	}
	var asked <-chan time.Time
	if w.Poll > 0 {
		t := time.NewTicker(w.Poll)
		defer t.Stop()
		asked = t.C
	}
	lastData := statKey(w.Data)
	every := time.NewTicker(w.Every)
	defer every.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return nil
		case ev, ok := <-r.watcher.Events:
			if !ok {
				return nil
			}
			r.event(ev)
		case err, ok := <-r.watcher.Errors:
			if !ok {
				return nil
			}
			r.y.say("sync: the watcher says %v: comparing the whole folder", err)
			r.settle.Reset(w.Settle)
		case <-r.settle.C:
			if err := r.pass(); err != nil {
				return err
			}
		case <-space:
			r.settle.Reset(w.Settle)
		case <-poll:
			if k := statKey(w.Data); k != lastData {
				lastData = k
				r.settle.Reset(w.Settle)
			}
		case <-asked:
			if err := r.pass(); err != nil {
				return err
			}
		case <-every.C:
			if err := r.pass(); err != nil {
				return err
			}
		}
	}
}

// event takes one of the watcher's events: only Create, Write, Remove and Rename of what
// the sync doesn't ignore count (they put the next pass off until the folder is still);
// a new folder is watched.
func (r *runner) event(ev fsnotify.Event) {
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) && !ev.Has(fsnotify.Remove) && !ev.Has(fsnotify.Rename) {
		return // Chmod: a read, an indexer, touch -a
	}
	rel, err := filepath.Rel(r.y.Dir, ev.Name)
	if err != nil {
		return
	}
	info, err := os.Lstat(ev.Name)
	isDir := err == nil && info.IsDir()
	if r.ig.ignored(filepath.ToSlash(rel), isDir) && !(err != nil && filepath.Ext(ev.Name) == "") {
		return // a dotfile, a swap file, an attachment; a folder gone is not ignored
	}
	if isDir && ev.Has(fsnotify.Create) && !r.watched[ev.Name] {
		if r.watcher.Add(ev.Name) == nil {
			r.watched[ev.Name] = true
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		delete(r.watched, ev.Name)
	}
	r.settle.Reset(r.w.Settle)
}

// statKey is a file's size and modification time, which every commit to a bbolt file changes.
func statKey(p string) string {
	if p == "" {
		return ""
	}
	info, err := os.Stat(p)
	if err != nil {
		return ""
	}
	return fmt.Sprint(info.Size(), info.ModTime().UnixNano())
}
