package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// undo_change is the change view's "Undo this change": an app-only tool (visibility
// ["app"]) that restores the text of the version before the one the view shows, as the
// person's restore on the page does (a version of kind restore, the title kept), and only
// if that version is still the latest. It gives an agent nothing it couldn't do already:
// it is a write like write_document of the old text, refused to read-only tokens, and it
// does not exist in review mode (accepting and declining stay on the person's page).

const undoDescription = "For the change view only: restores the version before the one shown, if that is still the latest."

type undoChangeArgs struct {
	Document string `arg:"document,required" about:"The document's id."`
	Version  *int   `arg:"version,required" about:"The version the view shows: undone only if still the latest."`
}

func (s *Server) undoChange(ctx context.Context, a *undoChangeArgs) (string, error) {
	if s.reviewed(ctx) {
		return "", refusef("In review mode there is nothing to undo: an agent's changes are proposals, which the person accepts or declines on their page.")
	}
	if *a.Version < 1 {
		return "", refusef("undo_change's version is the version to undo, 1 or more; it got %d.", *a.Version)
	}
	saved, err := s.docs.Undo(ctx, a.Document, *a.Version, s.author(ctx))
	var moved *docstore.MovedOnError
	switch {
	case errors.As(err, &moved):
		return "", refusef("Not undone: %s has changed since this view's version %d (it is at version %d now), and undoing would throw away the newer changes. Open it on your page to restore a version there.", s.link(moved.Document), moved.Version, moved.Document.Version)
	case errors.Is(err, docstore.ErrFirstVersion):
		return "", refusef("Not undone: version 1 made the document, and there is no version before it. Delete it on your page if it should go.")
	case err != nil:
		return "", s.explain(err, a.Document)
	}
	if saved.Unchanged {
		return fmt.Sprintf("%s already has the text of version %d: nothing changed, so no new version (it stays at version %d).", s.link(saved.Document), *a.Version-1, saved.Document.Version), nil
	}
	return fmt.Sprintf("Undone: %s has the text of version %d again, as version %d: %s.", s.link(saved.Document), *a.Version-1, saved.Document.Version, lines(saved.Added, saved.Removed)), nil
}
