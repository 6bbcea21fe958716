package docstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/compass-mcp/compass-mcp/linediff"
)

// ClashError is returned when a text made from an older version changed lines that were
// changed differently since (or next to them). Nothing was saved.
type ClashError struct {
	Document  Document // as it is now: Document.Version is the latest
	Base      int      // the version the text was made from
	Conflicts []linediff.Conflict
}

func (e *ClashError) Error() string {
	return fmt.Sprintf("%d clashing regions between version %d of %s and a text made from version %d", len(e.Conflicts), e.Document.Version, e.Document.ID, e.Base)
}

// Save is a person's save of a named document's whole text, made from version base (0: the
// latest). From the latest it is a new version of kind save; from an older one, text is
// merged line by line with the versions since (kind merge). Where both changed the same
// lines, prefer chooses whose lines stay; with linediff.Clash nothing is saved and a
// *ClashError says where.
func (s *Store) Save(ctx context.Context, name string, base int, text string, by Author, prefer linediff.Prefer) (Saved, error) {
	return s.fromBase(ctx, name, KindSave, "", text, base, by, prefer)
}

func (s *Store) fromBase(ctx context.Context, name string, kind Kind, title, text string, base int, by Author, prefer linediff.Prefer) (Saved, error) {
	return s.Change(ctx, name, kind, by, func(d Document, latest Version, at func(int) (Version, error)) (Next, error) {
		// A local, not the captured title: this may run again after a rolled-back batch.
		title := title
		if strings.TrimSpace(title) == "" {
			title = latest.Title
		}
		if base == 0 || base == latest.Number {
			return Next{Title: title, Text: text}, nil
		}
		from, err := at(base)
		if err != nil {
			return Next{}, err
		}
		merged, err := mergeSince(d, from, latest, text, prefer)
		if err != nil {
			return Next{}, err
		}
		return Next{Title: title, Text: merged, Kind: KindMerge}, nil
	})
}

// mergeSince merges text, made from version from, line by line with the latest version:
// what a save from an older base saves, and what accepting a proposal saves. Where both
// changed the same lines, prefer chooses whose lines stay; with linediff.Clash it returns a
// *ClashError instead.
func mergeSince(d Document, from, latest Version, text string, prefer linediff.Prefer) (string, error) {
	if prefer != linediff.Clash {
		return linediff.MergePrefer(from.Text, latest.Text, text, prefer), nil
	}
	merged, conflicts := linediff.Merge3(from.Text, latest.Text, text)
	if len(conflicts) > 0 {
		return "", &ClashError{Document: d, Base: from.Number, Conflicts: conflicts}
	}
	return merged, nil
}

// Restore makes a new version (kind restore) whose text is that of version n.
func (s *Store) Restore(ctx context.Context, name string, n int, by Author) (Saved, error) {
	return s.Change(ctx, name, KindRestore, by, func(d Document, latest Version, at func(int) (Version, error)) (Next, error) {
		old, err := at(n)
		if err != nil {
			return Next{}, err
		}
		return Next{Title: latest.Title, Text: old.Text}, nil
	})
}

// Undo makes a new version (kind restore) whose text is that of the version before
// version, as Restore(name, version-1) does, only if version is still the document's
// latest: the change view's "Undo this change" undoes the change it shows, never one made
// after it. It returns what Find returns, a *MovedOnError when the document has moved on
// (checked again in the commit, so no write can come between), and ErrFirstVersion for
// version 1, which has nothing before it.
func (s *Store) Undo(ctx context.Context, name string, version int, by Author) (Saved, error) {
	return s.Change(ctx, name, KindRestore, by, func(d Document, latest Version, at func(int) (Version, error)) (Next, error) {
		if latest.Number != version {
			return Next{}, &MovedOnError{Document: d, Version: version}
		}
		if version < 2 {
			return Next{}, ErrFirstVersion
		}
		old, err := at(version - 1)
		if err != nil {
			return Next{}, err
		}
		return Next{Title: latest.Title, Text: old.Text}, nil
	})
}

// MovedOnError is returned by Undo when the version to undo is no longer the latest.
type MovedOnError struct {
	Document Document // as it is now: Document.Version is the latest
	Version  int      // the version Undo was asked to undo
}

func (e *MovedOnError) Error() string {
	return fmt.Sprintf("%s is at version %d, not %d", e.Document.ID, e.Document.Version, e.Version)
}

// ErrFirstVersion is returned by Undo for version 1: nothing came before it.
var ErrFirstVersion = errors.New("version 1 made the document: there is no version before it")

// Rename makes a new version (kind rename) with the same text and a new title, which must
// not be another document's in the space (*TitleTakenError).
func (s *Store) Rename(ctx context.Context, name, title string, by Author) (Saved, error) {
	return s.Change(ctx, name, KindRename, by, func(d Document, latest Version, _ func(int) (Version, error)) (Next, error) {
		return Next{Title: title, Text: latest.Text}, nil
	})
}
