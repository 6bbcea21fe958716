package tools

import (
	"context"
	"errors"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/inflight"
)

// hold weighs a call before it runs, by the document it names (docstore.Document.Weight,
// from its record, read on its own unless it was weighed in the last few seconds: hints)
// and the text it brings, and waits for room in the
// budget for work in flight (Config.Budget, the process's: inflight.Process). It returns the func that gives
// the room back once the call is done, or the answer to give instead: busy (the call would
// wait too long), or canceled. A call that names no document (a listing, a search, a
// conversation) weighs nothing and never waits; neither does one whose document isn't
// found: the call itself says so.
func (s *Server) hold(ctx context.Context, args any, readOnly bool) (release func(), refused string) {
	name, text, work, old := weighed(args)
	var weight int64
	if name != "" {
		key := s.cfg.Space + "\x00" + name
		sizes, ok := s.hints.Get(key)
		if !ok {
			d, err := docstore.ReadIn(ctx, s.docs, func(r *docstore.Reader) (docstore.Document, error) { return r.Find(name) })
			if err == nil {
				sizes, ok = [2]int64{int64(d.Bytes), int64(d.Largest)}, true
				s.hints.Put(key, sizes)
			}
		}
		if ok {
			weight = docstore.Document{Bytes: int(sizes[0]), Largest: int(sizes[1])}.Weight(work, old)
		}
	}
	weight += int64(text)
	budget := s.cfg.Budget
	if budget == nil {
		budget = inflight.Process
	}
	release, err := budget.Acquire(ctx, weight)
	var busy *inflight.BusyError
	switch {
	case errors.As(err, &busy):
		return nil, busy.Error()
	case err != nil:
		return nil, canceled(readOnly)
	}
	return release, ""
}

// weighed is what a call's arguments say of its weight: the document it names, the bytes
// of text it brings, what it does with the document, and whether with a version before
// the latest (or may: a version asked for is weighed as an old one).
func weighed(args any) (name string, text int, work docstore.Work, old bool) {
	switch a := args.(type) {
	case *readDocumentArgs:
		old = a.Version != nil
		switch {
		case a.Proposal != nil || a.Since != nil:
			return a.Document, 0, docstore.WorkDiff, true
		case a.Lines != "":
			return a.Document, 0, docstore.WorkLines, old
		case a.Section != "":
			return a.Document, 0, docstore.WorkSection, old
		}
		return a.Document, 0, docstore.WorkRead, old
	case *writeDocumentArgs:
		return a.Document, len(a.Text), docstore.WorkWrite, a.Version != nil
	case *appendDocumentArgs:
		return a.Document, len(a.Text), docstore.WorkWrite, false
	case *editDocumentArgs:
		n := len(a.Old)
		if a.New != nil {
			n += len(*a.New)
		}
		return a.Document, n, docstore.WorkWrite, false
	case *commentDocumentArgs:
		return a.Document, len(a.Text), docstore.WorkRead, false
	case *undoChangeArgs:
		return a.Document, 0, docstore.WorkWrite, true
	}
	return "", 0, 0, false
}

// newHints are a server's hints of documents' sizes: each kept 10 s (a document that grew
// meanwhile is weighed as it was, for at most that long), at most 10,000 (about 1 MB).
func newHints() *inflight.Hints { return inflight.NewHints(10*time.Second, 10000) }
