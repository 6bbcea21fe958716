package docstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/linediff"
)

// Undoing a session takes back everything one session did (docs undo --session, the Undo
// of its line in /activity), like git revert: each document it changed gets one new
// version, by the person, whose text is the latest with each of the session's changes
// reverted, newest first, each merged line by line with what changed since. Where a
// line the session changed was changed since by someone else (or next to it), the later
// lines stay and the region is a clash the answer shows: never overwritten. A document
// the session made and nobody else changed is deleted (its versions kept, as Delete
// keeps them). The proposals it opened that still wait are declined with the reason
// "undone". History is never rewritten: the session's versions stay, and a second undo
// finds nothing more to take back.
//
// Only the person undoes: no tool does it, and the page's Undo is a POST that needs the
// browser's proof, like every decision.

// maxUndoPages bounds the pages of the activity an undo reads to find a session's events.
const maxUndoPages = 64

// ErrNoSession is returned by UndoSession for a session that did nothing in the spaces
// read.
var ErrNoSession = errors.New("no such session in your spaces' activity")

// Undone is what undoing a session did.
type Undone struct {
	Documents []UndoneDocument
	Declined  []Event // the proposals declined ("undone"), as the activity had them
}

// UndoneDocument is what undoing a session did to one document.
type UndoneDocument struct {
	Space    string
	Document Document // as it is now
	Reverted []int    // the session's versions reverted, newest first
	Version  int      // the version made (0: none, nothing left to revert)
	Deleted  bool     // the session made it and nobody else changed it: deleted
	Clashes  []linediff.Conflict
}

// UndoSession takes back what session did in the spaces named (see above), as by (a
// person). It returns ErrNoSession when the session did nothing there.
func UndoSession(ctx context.Context, db kv.DB, in []string, session string, by Author) (Undone, error) {
	var out Undone
	if session == "" || len(in) == 0 {
		return out, ErrNoSession
	}
	var events []Event
	after := ""
	for range maxUndoPages {
		page, err := ReadIn(ctx, New(db, in[0]), func(r *Reader) (Activity, error) {
			return r.Activity(in, ActivityFilter{Session: session}, after, ActivityPage)
		})
		if err != nil {
			return out, err
		}
		events = append(events, page.Events...)
		if after = page.Next; after == "" {
			break
		}
	}
	if after != "" {
		return out, fmt.Errorf("session %s reaches back further than an undo reads (%d pages of the activity)", session, maxUndoPages)
	}
	if len(events) == 0 {
		return out, ErrNoSession
	}
	type docKey struct{ space, id string }
	var order []docKey
	versions := map[docKey][]int{}
	for _, e := range events { // newest first
		k := docKey{e.Space, e.Doc}
		switch e.What {
		case EventVersion:
			if _, ok := versions[k]; !ok {
				order = append(order, k)
			}
			versions[k] = append(versions[k], e.N)
		case EventProposal:
			p, err := New(db, e.Space).Decline(ctx, e.Doc, e.N, by, "undone")
			var decided *DecidedError
			switch {
			case errors.As(err, &decided), errors.Is(err, ErrNotFound):
				continue // decided already, or its document gone
			case err != nil:
				return out, err
			}
			e.Status = p.Status
			out.Declined = append(out.Declined, e)
		}
	}
	for _, k := range order {
		u, err := undoIn(ctx, New(db, k.space), k.id, versions[k], session, by)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since: nothing to take back from
		}
		if err != nil {
			return out, err
		}
		u.Space = k.space
		out.Documents = append(out.Documents, u)
	}
	return out, nil
}

// undoIn reverts the session's versions ns (newest first) of document id in s.
func undoIn(ctx context.Context, s *Store, id string, ns []int, session string, by Author) (UndoneDocument, error) {
	u := UndoneDocument{Reverted: ns}
	onlyTheirs := false // the session made the document, and every version of it is the session's
	saved, err := s.Change(ctx, id, KindRestore, by, func(d Document, latest Version, at func(int) (Version, error)) (Next, error) {
		u.Clashes, onlyTheirs = nil, false
		text, title := latest.Text, latest.Title
		for _, n := range ns {
			vn, err := at(n)
			if err != nil {
				return Next{}, err
			}
			var before Version // version 1's is nothing: the session made the document
			if n > 1 {
				if before, err = at(n - 1); err != nil {
					return Next{}, err
				}
			} else {
				before.Title = vn.Title
			}
			merged, conflicts := linediff.Merge3(vn.Text, text, before.Text)
			if len(conflicts) > 0 {
				merged = linediff.MergePrefer(vn.Text, text, before.Text, linediff.PreferTheirs)
				u.Clashes = append(u.Clashes, conflicts...)
			}
			text = merged
			if title == vn.Title && before.Title != "" {
				title = before.Title
			}
		}
		onlyTheirs = slices.Contains(ns, 1) && len(ns) == latest.Number && text == ""
		if onlyTheirs {
			return Next{Title: latest.Title, Text: latest.Text}, nil // deleted below instead
		}
		return Next{Title: title, Text: text}, nil
	})
	if err != nil {
		return u, err
	}
	u.Document = saved.Document
	if !saved.Unchanged {
		u.Version = saved.Document.Version
	}
	if onlyTheirs {
		d, err := s.Delete(ctx, id, by)
		if err != nil {
			return u, err
		}
		u.Document, u.Deleted = d, true
	}
	return u, nil
}
