package docstore

import (
	"context"

	"github.com/compass-mcp/compass-mcp/linediff"
)

// SaveKeeping is a person's save of a named document's whole text, made from version base,
// that keeps both sides of a clash in one commit: text is merged line by line with the
// versions since base, preferring text's lines where both changed the same ones (the
// version, of kind merge), and the space's side of those lines is kept as a proposal
// against that version, by whoever made the latest version before it (its agent, for its
// person), with note as its Note. It is what a folder's sync saves when a file and the
// space changed the same lines: the file keeps its lines, nothing of the agents' is lost,
// and no sync killed between a save and a proposal can leave the one without the other.
//
// base 0 is the empty text, before version 1: a text made apart from the space's (a
// folder's file met by a document of its title) is saved as it is (kind save), and the
// latest version's whole text is kept as the proposal. base equal to the latest version
// is a plain save. When nothing clashed, or the space's side is what was saved, no
// proposal is made (nil). It returns what Save returns, and ErrBadText for text.
func (s *Store) SaveKeeping(ctx context.Context, name string, base int, text string, by Author, note string) (Saved, *Proposal, error) {
	if err := CheckText(text); err != nil { // before a merge of it costs anything
		return Saved{}, nil, err
	}
	// What the space's side is, by the latest version each run of how saw: how may run
	// again in the commit, on a later version, and then must tell then what it saw.
	type side struct {
		text string
		who  Author
	}
	theirs := map[int]side{}
	how := func(_ *buckets, d Document, latest Version, at func(int) (Version, error)) (Next, error) {
		if base == latest.Number {
			return Next{Title: latest.Title, Text: text}, nil
		}
		var from Version // base 0: the empty text
		kind := KindSave
		if base > 0 {
			var err error
			if from, err = at(base); err != nil {
				return Next{}, err
			}
			kind = KindMerge
		}
		mine := linediff.MergePrefer(from.Text, latest.Text, text, linediff.PreferMine)
		if t := linediff.MergePrefer(from.Text, latest.Text, text, linediff.PreferTheirs); t != mine {
			theirs[latest.Number] = side{t, Author{By: latest.Author.By, For: latest.Author.For}}
		}
		return Next{Title: latest.Title, Text: mine, Kind: kind}, nil
	}
	var made *Proposal
	then := func(b *buckets, d *Document, saved *Saved) error {
		made = nil
		followed := d.Version - 1 // the version the save followed
		if saved.Unchanged {
			followed = d.Version
		}
		keep, ok := theirs[followed]
		if !ok {
			return nil
		}
		now, err := b.version(d.ID, d.Version)
		if err != nil {
			return err
		}
		if keep.text == now.Text {
			return nil
		}
		p := prepared{d: *d, latest: now, next: Next{Title: now.Title, Text: keep.text}, kind: KindWrite, note: note}
		p.change = diffTexts(now.Text, keep.text)
		p.added, p.removed = p.change.counts()
		kept, err := b.putProposal(d, p, keep.who, s.now())
		if err != nil {
			return err
		}
		made = kept.Proposal
		saved.Document = kept.Document
		return nil
	}
	saved, err := s.change(ctx, name, KindSave, by, how, then)
	if err != nil {
		return Saved{}, nil, err
	}
	return saved, made, nil
}
