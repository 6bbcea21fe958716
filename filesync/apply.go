package filesync

import "fmt"

// apply does a plan's steps, with their I/O, until one fails. A step of a document whose
// undelete failed is not done (halted). The creates are done together, Workers at a
// time, and the new documents' files a batch at a time, each noted in the state first
// (create, writeNew).
func (p *pass) apply(pl plan) error {
	if pl.wait {
		p.y.say("sync: the folder changed while it was read: its new files, and the space's new documents, wait for the next pass")
	}
	halted := map[string]bool{}
	for i := 0; i < len(pl.steps); {
		s := pl.steps[i]
		n, err := 1, error(nil)
		switch {
		case halted[s.id] && s.id != "":
		case s.kind == stepCreate:
			var creates []create
			for n = 0; i+n < len(pl.steps) && pl.steps[i+n].kind == stepCreate; n++ {
				c := pl.steps[i+n]
				creates = append(creates, create{c.rel, c.title, c.text})
			}
			if err = p.create(creates); err != nil {
				err = fmt.Errorf("reading the folder's new files: %w", err)
			}
		case s.kind == stepJoin:
			var joins []step
			for n = 0; i+n < len(pl.steps) && pl.steps[i+n].kind == stepJoin; n++ {
				joins = append(joins, pl.steps[i+n])
			}
			err = p.joins(joins)
		case s.kind == stepWriteNew:
			const batch = 1000
			var news []step
			for n = 0; i+n < len(pl.steps) && pl.steps[i+n].kind == stepWriteNew && n < batch; n++ {
				news = append(news, pl.steps[i+n])
			}
			if err = p.writeNew(news); err != nil {
				err = fmt.Errorf("writing the space's new documents: %w", err)
			}
		default:
			var halt bool
			if halt, err = p.do(s); halt {
				halted[s.id] = true
			}
			if err != nil {
				err = fmt.Errorf("syncing %s: %w", s.rel, err)
			}
		}
		if err != nil {
			return err
		}
		i += n
	}
	return nil
}

// do does one step; halt: the document's next steps are not to be done.
func (p *pass) do(s step) (halt bool, err error) {
	y := p.y
	e := p.st.Docs[s.id]
	if s.say != "" && s.kind != stepSay {
		y.say("%s", s.say)
	}
	switch s.kind {
	case stepSay:
		if s.once != "" {
			y.sayOnce(s.once, "%s", s.say)
		} else {
			y.say("%s", s.say)
		}
		if s.skip {
			p.rep.Skipped++
		}
	case stepUndelete:
		return p.undelete(s.id, s.rel)
	case stepRename:
		return false, p.rename(s.id, e, s.rel, s.title)
	case stepMove:
		return false, p.moveFile(s.id, e, s.to)
	case stepEntry:
		if s.rel != "" {
			e.Path = s.rel
		}
		e.Title = p.byID[s.id].Title
	case stepRecord:
		f := p.files[e.Path]
		p.record(e, f, f.hash, e.Version)
	case stepWrite:
		if s.behind && p.byID[s.id].Version == e.Version {
			f := p.files[e.Path]
			p.record(e, f, f.hash, e.Version)
			return false, nil
		}
		return false, p.writeOut(s.id, e.Path, s.expect)
	case stepSave:
		return false, p.saveFile(s.id, e, e.Path, s.text)
	case stepCatchUp:
		return false, p.catchUp(s.id, e, s.expect)
	case stepDelete:
		return false, p.deleteDoc(s.id, e)
	case stepRemove:
		if err := p.remove(s.rel, s.expect); err != nil {
			y.say("sync: %s was not removed (its document %q was deleted in the space): %v", s.rel, e.Title, err)
			return false, nil
		}
		if err := p.crash(crashRemoved); err != nil {
			return false, err
		}
		delete(p.st.Docs, s.id)
		p.rep.Removed++
	case stepForget:
		delete(p.st.Docs, s.id)
	}
	return false, nil
}

// joins joins each new file of joins to the document of its title, having noted them in
// the state first (State.Joining): a sync killed meanwhile knows the documents for the
// files' at its next start, wherever the files are then (adoptJoined).
func (p *pass) joins(joins []step) error {
	p.st.Joining = nil
	for _, j := range joins {
		e := &Entry{Path: j.rel, Title: p.byID[j.id].Title}
		p.record(e, p.files[j.rel], hashOf(j.text), 0)
		p.st.Joining = append(p.st.Joining, e)
	}
	if err := p.persist(); err != nil {
		return err
	}
	defer func() { p.st.Joining = nil }()
	if err := p.crash(crashJoining); err != nil {
		return err
	}
	for _, j := range joins {
		if err := p.join(p.byID[j.id], j.rel, j.text); err != nil {
			return fmt.Errorf("syncing %s: %w", j.rel, err)
		}
	}
	return nil
}

// undelete brings back the document id, deleted in the space, whose file at rel was
// edited: the edit wins. halt: it can't come back, and nothing more is done for it.
func (p *pass) undelete(id, rel string) (halt bool, err error) {
	d := p.byID[id]
	undone, err := p.y.space().Undelete(p.ctx, id)
	if err != nil {
		p.y.say("sync: %s was edited, but its document %q, deleted in the space, can't come back: %v", rel, d.Title, err)
		p.rep.Skipped++
		return true, nil
	}
	if err := p.crash(crashUndeleted); err != nil {
		return false, err
	}
	p.y.say("sync: %s was edited after its document %q was deleted in the space: the edit wins, the document is back", rel, d.Title)
	p.retitled(d, undone)
	return false, nil
}

// rename renames document id to title: its file, e's, was moved in the folder to rel.
func (p *pass) rename(id string, e *Entry, rel, title string) error {
	y, d := p.y, p.byID[id]
	saved, err := y.space().Rename(p.ctx, id, title)
	if err != nil {
		y.say("sync: %s was moved to %s, but %q can't be renamed %q: %v", e.Path, rel, d.Title, title, err)
		return nil
	}
	if err := p.crash(crashRenamed); err != nil {
		return err
	}
	// The rename made right on top of the version the file is: ours, not a change to
	// merge. On top of a later one (an agent wrote after the listing), the file lacks
	// that write: it stays behind, and is written (a write step "if behind").
	if !saved.Unchanged && saved.Document.Version == e.Version+1 {
		e.Version = saved.Document.Version
	}
	p.retitled(d, saved.Document)
	p.rep.Renamed++
	if n := saved.Relinked; n > 0 {
		y.say("sync: %s was moved to %s: %q is %q now, and updated links in %d document%s (their files follow)", e.Path, rel, e.Title, title, n, map[bool]string{false: "s"}[n == 1])
	}
	return nil
}

// moveFile moves the file of document id, renamed in the space, to to, unless to can't
// be reached beneath the folder or something is there; its entry takes the new title when
// it is moved (else the next pass tries again, said once a version).
func (p *pass) moveFile(id string, e *Entry, to string) error {
	y, d, rel := p.y, p.byID[id], e.Path
	if err := p.reachable(to); err != nil {
		y.sayOnce(fmt.Sprintf("move %s %d", id, d.Version), "sync: %q was renamed %q in the space, but its file can't move to %s (%v): it stays %s", e.Title, d.Title, to, err, rel)
	} else if p.occupied(to) {
		y.sayOnce(fmt.Sprintf("move %s %d", id, d.Version), "sync: %q was renamed %q in the space, but %s is there already: its file stays %s", e.Title, d.Title, to, rel)
	} else if err := p.move(rel, to); err != nil {
		y.sayOnce(fmt.Sprintf("move %s %d", id, d.Version), "sync: %q was renamed %q in the space, but its file %s can't move to %s: %v", e.Title, d.Title, rel, to, err)
	} else {
		f := p.files[rel]
		p.files[to], f.rel = f, to
		delete(p.files, rel)
		e.Path, e.Title = to, d.Title
		p.rep.Renamed++
		return p.crash(crashMoved)
	}
	return nil
}

// catchUp brings in step a read-only sync's file edited while its document changed: a
// sync killed after it wrote a later version to the file and before its state noted it
// left the file exactly that version (versionIs), in step with it; else its edit is not
// sent, and the space's changes wait.
func (p *pass) catchUp(id string, e *Entry, hash string) error {
	d := p.byID[id]
	n := p.versionIs(id, e.Version, d.Version, hash)
	if n == 0 {
		p.skip(e.Path, " (this token may only read the space, or its changes are reviewed): %s", "its edit is not sent, and the space's changes to it wait")
		p.rep.Skipped++
		return nil
	}
	e.Version, e.Hash = n, hash
	if d.Version == n {
		f := p.files[e.Path]
		p.record(e, f, hash, n)
		return nil
	}
	return p.writeOut(id, e.Path, hash)
}

// deleteDoc deletes (softly) the document id, whose file is gone; an agent that wrote
// after the listing and before the delete wins, as it does when the listing shows it.
func (p *pass) deleteDoc(id string, e *Entry) error {
	y, d := p.y, p.byID[id]
	gone, err := y.space().Delete(p.ctx, id)
	if err != nil {
		return fmt.Errorf("deleting %q, whose file %s is gone: %w", d.Title, e.Path, err)
	}
	if err := p.crash(crashDeleted); err != nil {
		return err
	}
	if gone.Version != e.Version {
		back, err := y.space().Undelete(p.ctx, id)
		if err == nil {
			y.say("sync: %s was deleted, but %q changed in the space meanwhile: the change wins, the file is back", e.Path, d.Title)
			p.retitled(d, back)
			return p.writeOut(id, e.Path, "")
		}
		y.say("sync: %s was deleted, and %q, changed in the space meanwhile, is deleted too (it can't come back: %v); docs undelete brings it back", e.Path, d.Title, err)
	}
	p.retitled(d, gone)
	delete(p.st.Docs, id)
	p.rep.Deleted++
	return nil
}
