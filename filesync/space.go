package filesync

import (
	"context"
	"errors"
	"fmt"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
)

// Space is what the sync reads and writes of a space: a Local store (the data file, or a
// PostgreSQL database), or a team server over HTTP (Remote). Its writes are the person's,
// by the agent sync (Local.By; on a server, the request's token decides). A pass calls
// Documents once, and reads a text only for what changed.
type Space interface {
	// Name is the space's name (the sync's state is kept by it).
	Name() string
	// Documents lists every document of the space, deleted ones too, without their texts;
	// it also tells whether this sync may write (Writable).
	Documents(ctx context.Context) ([]docstore.Document, error)
	// Writable reports whether the sync may change the space, as the last Documents said:
	// false for a read-only or reviewed token (see docs/SYNC.md).
	Writable() bool
	// Read returns version n of the document of id (0: the latest), with its text.
	Read(ctx context.Context, id string, n int) (docstore.Version, error)
	Create(ctx context.Context, title, text string) (docstore.Saved, error)
	// SaveKeeping is the person's save of text made from version base, keeping both sides
	// of a clash in one commit (docstore.Store.SaveKeeping): base 0 is a text made apart
	// from the space's (a first run's join). One store call; one request over HTTP.
	// held are older versions the file held (Entry.Held): the save is made from whichever
	// of them and base the text is nearest to (derivedBase), chosen where the space is.
	SaveKeeping(ctx context.Context, id string, base int, held []int, text string) (Kept, error)
	Rename(ctx context.Context, id, title string) (docstore.Saved, error)
	Delete(ctx context.Context, id string) (docstore.Document, error)
	Undelete(ctx context.Context, id string) (docstore.Document, error)
}

// Kept is what SaveKeeping did: the save; the proposal keeping the space's side of a
// clash (nil: nothing clashed); and, when the save merged or changed nothing (the file's
// text is then not the document's), the document's latest version, to write to the file.
type Kept struct {
	Base     int                `json:"base"` // the version the save was made from
	Saved    docstore.Saved     `json:"saved"`
	Proposal *docstore.Proposal `json:"proposal,omitempty"`
	Latest   *docstore.Version  `json:"latest,omitempty"`
}

// The notes of the proposals a sync's save keeps (docstore.Proposal.Note): where each
// came from, for the person deciding on it.
const (
	noteJoin  = "kept from the space when the folder joined: the file's text was saved, and this is the document's text as it was"
	noteClash = "kept from the space: the file and the space changed the same lines, and the file's were saved"
)

// keepNote is the note of a save from base.
func keepNote(base int) string {
	if base == 0 {
		return noteJoin
	}
	return noteClash
}

// Clash is a clash an older sync noted in its state (State.Pending) before its save, to
// make the proposal after: read for one release, on a data file only (finishPending).
// The file's Text was made from version Base and saved as version Merged preferring the
// file's lines; the proposal is version Merged-1 merged with Text preferring the space's
// lines, by whoever made Merged-1. Merged 0: the latest version by the sync after Base.
type Clash struct {
	ID     string `json:"id"`
	Base   int    `json:"base"`
	Merged int    `json:"merged,omitempty"`
	Text   string `json:"text"`
	Join   bool   `json:"join,omitempty"`
}

// Proposed is what propose kept: the proposal's number (0: nothing to propose, the save
// was not made), the document's title then, whose side it is, and whether it was made now.
type Proposed struct {
	Number int    `json:"n"`
	Title  string `json:"title"`
	By     string `json:"by"`
	Made   bool   `json:"made"`
}

// Local is a space of the store this process opened.
type Local struct {
	Store *docstore.Store
	// By is who the sync's versions are by: the agent sync, for the person.
	By docstore.Author
}

func (l Local) Name() string   { return l.Store.Space() }
func (l Local) Writable() bool { return true }

func (l Local) Documents(ctx context.Context) ([]docstore.Document, error) {
	return docstore.ReadIn(ctx, l.Store, (*docstore.Reader).Documents)
}

func (l Local) Read(ctx context.Context, id string, n int) (docstore.Version, error) {
	return docstore.ReadIn(ctx, l.Store, func(r *docstore.Reader) (docstore.Version, error) {
		_, v, err := r.Read(id, n)
		return v, err
	})
}

func (l Local) Create(ctx context.Context, title, text string) (docstore.Saved, error) {
	return l.Store.Create(ctx, title, text, docstore.KindSave, l.By)
}

func (l Local) SaveKeeping(ctx context.Context, id string, base int, held []int, text string) (Kept, error) {
	if err := docstore.CheckText(text); err != nil { // before reading anything for it
		return Kept{}, err
	}
	if len(held) > heldLimit { // a request's: bounded as the state's is
		held = held[len(held)-heldLimit:]
	}
	base, err := derivedBase(func(n int) (docstore.Version, error) { return l.Read(ctx, id, n) }, base, held, text)
	if err != nil {
		return Kept{}, err
	}
	saved, p, err := l.Store.SaveKeeping(ctx, id, base, text, l.By, keepNote(base))
	if err != nil {
		return Kept{}, err
	}
	k := Kept{Base: base, Saved: saved, Proposal: p}
	if saved.Kind == docstore.KindMerge || saved.Unchanged {
		v, err := l.Read(ctx, id, 0)
		if err != nil {
			return Kept{}, err
		}
		k.Latest = &v
	}
	return k, nil
}

func (l Local) Rename(ctx context.Context, id, title string) (docstore.Saved, error) {
	return l.Store.Rename(ctx, id, title, l.By)
}

func (l Local) Delete(ctx context.Context, id string) (docstore.Document, error) {
	return l.Store.Delete(ctx, id, l.By)
}

func (l Local) Undelete(ctx context.Context, id string) (docstore.Document, error) {
	return l.Store.Undelete(ctx, id)
}

// openLimit is how many of a document's open proposals propose looks through for one it
// made already: a sync that stopped between its proposal and its state's note made it
// among the newest.
const openLimit = 10

// saveLimit is how many of a document's newest versions propose looks through for the
// sync's save of a clash.
const saveLimit = 200

// propose keeps c's space side as a proposal of the store s (an older sync's pending
// clash, State.Pending: read for one release), unless an open proposal has
// that text already: a sync killed after the proposal and before its state noted it would
// otherwise make it twice at its next start. by is the sync's author: the save the clash
// made must be by, and be the merge of c.Text (else nothing is proposed), so that a
// request can't make a proposal in another agent's name of a text of its own.
func propose(ctx context.Context, s *docstore.Store, by docstore.Author, c Clash) (Proposed, error) {
	if err := docstore.CheckText(c.Text); err != nil { // before a merge of it costs anything
		return Proposed{}, err
	}
	got, err := docstore.ReadIn(ctx, s, func(r *docstore.Reader) (sides, error) { return clashSides(r, by, c) })
	if err != nil {
		return Proposed{}, fmt.Errorf("reading the two sides of a clash in %s: %w", c.ID, err)
	}
	if got.latest.Number == 0 {
		return Proposed{}, nil
	}
	theirs := got.latest.Text
	if !c.Join {
		theirs = linediff.MergePrefer(got.base.Text, got.latest.Text, c.Text, linediff.PreferTheirs)
	}
	who := got.latest.Author
	for _, p := range got.has {
		if p.Text == theirs {
			return Proposed{Number: p.Number, Title: got.latest.Title, By: who.By}, nil
		}
	}
	made, err := s.Proposing().Write(ctx, c.ID, "", theirs, 0, docstore.Author{By: who.By, For: who.For})
	if err != nil {
		return Proposed{}, fmt.Errorf("keeping the space's side of %q as a proposal: %w", got.latest.Title, err)
	}
	if made.Proposal == nil { // the space has that text already: nothing waits
		return Proposed{Title: got.latest.Title, By: who.By}, nil
	}
	return Proposed{Number: made.Proposal.Number, Title: got.latest.Title, By: who.By, Made: true}, nil
}

// The errors a sync against a server stops with (Run ends with them: they won't heal by
// waiting).
var (
	// ErrUnauthorized is returned (wrapped, with the server's words) when the server
	// refuses the token: 401, a token missing, unknown, mistyped, expired or revoked.
	ErrUnauthorized = errors.New("the server refused the token (401)")
	// ErrForbidden is returned (wrapped, with the server's words) when the token may not
	// reach the space: 403, its person is not a member, or the token is for other spaces.
	ErrForbidden = errors.New("the server refused the space to this token (403)")
	// ErrReadOnly is returned by a Remote's writes when the token may only read: the sync
	// leaves the file as it is and says so.
	ErrReadOnly = errors.New("this token may not change the space")
)

// sides are what propose reads of a clash: the base version, the space's side, and the
// open proposals by the author of that side.
type sides struct {
	base, latest docstore.Version
	has          []docstore.Proposal
}

// clashSides reads the sides of c, made by by (latest 0: the save was never made).
func clashSides(r *docstore.Reader, by docstore.Author, c Clash) (sides, error) {
	// The sync's own save after Base: Merged, else the newest (a sync that stopped
	// before noting it). A proposal is made only for a save by by: over HTTP, what a
	// request asks to propose must be what its own token saved.
	_, vs, err := r.LogPage(c.ID, 0, saveLimit)
	if err != nil {
		return sides{}, err
	}
	var saved docstore.Version
	for _, v := range vs { // newest first
		if v.Number <= c.Base {
			break
		}
		if v.Author.By == by.By && v.Author.For == by.For && (c.Merged == 0 || v.Number == c.Merged) && (c.Join || v.Kind == docstore.KindMerge) {
			saved = v
			break
		}
	}
	if saved.Number == 0 {
		return sides{}, nil // the save was never made: the next pass meets the clash again
	}
	_, b, err := r.Read(c.ID, c.Base)
	if err != nil {
		return sides{}, err
	}
	l := b // a join's proposal: version Base as it was, by its author
	if !c.Join {
		if _, l, err = r.Read(c.ID, saved.Number-1); err != nil {
			return sides{}, err
		}
		// The save is the merge of Text preferring its lines, or Text is not the file's.
		_, m, err := r.Read(c.ID, saved.Number)
		if err != nil {
			return sides{}, err
		}
		if linediff.MergePrefer(b.Text, l.Text, c.Text, linediff.PreferMine) != m.Text {
			return sides{}, nil
		}
	}
	_, open, err := r.Proposals(c.ID, 0, openLimit)
	if err != nil {
		return sides{}, err
	}
	var mine []docstore.Proposal // only the texts of proposals the sync could have made
	for _, p := range open {
		if p.Author.By != l.Author.By || p.Author.For != l.Author.For {
			continue
		}
		if _, full, _, err := r.Proposal(c.ID, p.Number); err == nil {
			mine = append(mine, full)
		}
	}
	return sides{b, l, mine}, nil
}
