package docstore

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/mdscan"
)

// A change of title rewrites the [[links]] to the document in the space's texts, as
// Obsidian's "Automatically update internal links" does. The links index keeps links by
// id (links.go), so compass itself needs no rewrite; but the texts are files too (sync,
// export --git, any editor), where [[Old title]] names nothing once the title changed.
//
// Which links: in the documents the links index says link to the document (in/), the
// document itself, and those with a broken [[Old title#...]] (broken/), every [[T]] or
// [[T|shown]] whose target the index resolved to the document, T not being the new title
// already (case aside): the title before, or one it had earlier; and every [[Old
// title#Heading]] (or #^block) that is broken, Old title being the title just before
// (compass reads it as a title of its own; Obsidian as a part of the document). Only the
// title is replaced: the shown text, the #Heading and a table's \| stay. Code doesn't count
// (mdscan), and ![[embeds]] are not links. A new title that a [[ ]] can't hold (with [, ]
// or |) rewrites nothing. A case-only change rewrites nothing: both read links
// case-insensitively. Documents deleted keep their texts (their links stay by id).
//
// Each document rewritten is a new version of kind relink by the change's author, put in
// the change's own transaction for the first relinkBatch of them; the rest follow in
// transactions of as many each, before the change returns (Saved.Relinked counts them all;
// Saved.RelinkLeft those a failed one left as they were).

// relinkBatch is how many documents a transaction rewrites: a title linked from 10,000
// documents is 40 transactions, each holding the space's writers for what 250 versions
// cost, about 55 ms on bbolt and 350 ms on PostgreSQL here (BenchmarkRenameLinked;
// docs/SYNC.md has the figures).
const relinkBatch = 250

// relinkEdit is a document's text with its links rewritten, worked out on its version
// latest (in a read transaction, before the commit).
type relinkEdit struct {
	latest Version
	title  string // the title the links were rewritten to
	text   string
	change change
}

// wikiTitle tells whether title can be written as [[title]] and read back.
func wikiTitle(title string) bool {
	t, _, n, ok := mdscan.WikiLink("[[" + title + "]]")
	return ok && t == title && n == len(title)+4
}

// relinkCandidates are the documents whose links a change of document id's title from was
// may rewrite: itself, those the links index says link to it, and those with a broken
// [[was#...]]; nil when the index isn't built (in a read transaction: the commit builds it).
func (b *buckets) relinkCandidates(x linkIndex, id, was string) []string {
	if !x.built() {
		return nil
	}
	seen := map[string]bool{id: true}
	ids := []string{id}
	add := func(from string) {
		if !seen[from] {
			seen[from] = true
			ids = append(ids, from)
		}
	}
	prefix := []byte(id)
	c := x.in.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		add(string(k[len(prefix):]))
	}
	prefix = []byte("t" + foldTitle(was) + "#")
	c = x.broken.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if i := bytes.IndexByte(k, 0); i >= 0 {
			add(string(k[i+1:]))
		}
	}
	return ids
}

// relinkText is text, document from's, with its [[links]] to document id (titled was just
// before) rewritten to title (see above), and how many it rewrote.
func (x linkIndex) relinkText(from, text, id, was, title string) (string, int) {
	if !mayLink(text) || x.out == nil {
		return text, 0
	}
	now, before := foldTitle(title), foldTitle(was)
	type span struct{ at, end int }
	var spans []span
	named := map[string]string{} // target key → the document its out/ entry names ("" broken, "-" none)
	mdscan.Links(text, func(l mdscan.Link) bool {
		folded := foldTitle(l.Title)
		if l.ID != "" || folded == now {
			return true
		}
		key := "t" + folded
		to, ok := named[key]
		if !ok {
			to = "-"
			if v := x.out.Get(outKey(from, key)); v != nil {
				to = decodeTarget([]byte(key), v).to
			}
			named[key] = to
		}
		part := ""
		switch {
		case to == id:
			part = l.Title
		case to == "": // broken: [[was#Heading]]?
			for i := 0; i < len(l.Title); i++ {
				if l.Title[i] == '#' && foldTitle(l.Title[:i]) == before {
					part = strings.TrimRight(l.Title[:i], " ")
					break
				}
			}
		}
		if part == "" {
			return true
		}
		// The title begins after [[ and any spaces: its first occurrence there is it.
		at := l.At + 2 + strings.Index(text[l.At+2:], l.Title)
		spans = append(spans, span{at, at + len(part)})
		return true
	})
	if len(spans) == 0 {
		return text, 0
	}
	var out strings.Builder
	out.Grow(len(text) + len(spans)*(len(title)+8))
	last := 0
	for _, s := range spans {
		out.WriteString(text[last:s.at])
		out.WriteString(title)
		last = s.end
	}
	out.WriteString(text[last:])
	return out.String(), len(spans)
}

// relinkEdits works out, for each of ids (a read transaction is enough), its text with its
// links to document id rewritten to title; documents with none to rewrite are left out.
func (b *buckets) relinkEdits(x linkIndex, id, was, title string, ids []string) (map[string]relinkEdit, error) {
	edits := map[string]relinkEdit{}
	if !wikiTitle(title) {
		return edits, nil
	}
	for _, from := range ids {
		d, ok, err := b.doc(from)
		if err != nil {
			return nil, err
		}
		if !ok || d.Deleted != nil {
			continue
		}
		e, err := b.relinkEdit(x, d, id, was, title)
		if err != nil {
			return nil, err
		}
		if e != nil {
			edits[from] = *e
		}
	}
	return edits, nil
}

// relinkEdit is document d's latest text with its links to document id rewritten to
// title; nil when it has none to rewrite.
func (b *buckets) relinkEdit(x linkIndex, d Document, id, was, title string) (*relinkEdit, error) {
	latest, err := b.version(d.ID, d.Version)
	if err != nil {
		return nil, err
	}
	text, n := x.relinkText(d.ID, latest.Text, id, was, title)
	if n == 0 || CheckText(text) != nil {
		return nil, nil
	}
	c := diffTexts(latest.Text, text)
	c.links = b.prepareLinks(d.ID, latest.Text, text, c)
	return &relinkEdit{latest: latest, title: title, text: text, change: c}, nil
}

// relinkApply rewrites, in a commit, the links to document id (titled was just before) in
// the documents ids: as edits has them where it was worked out on the version a document
// is still at, else worked out again here. It returns how many it rewrote.
func (b *buckets) relinkApply(id, was string, ids []string, edits map[string]relinkEdit, by Author, now time.Time) (int, error) {
	x, _, err := b.builtLinks()
	if err != nil {
		return 0, err
	}
	d, ok, err := b.doc(id)
	if err != nil || !ok || d.Deleted != nil || !wikiTitle(d.Title) {
		return 0, err // gone, or renamed to a title [[ ]] can't hold, meanwhile
	}
	done := 0
	for _, from := range ids {
		fd, ok, err := b.doc(from)
		if err != nil {
			return done, err
		}
		if !ok || fd.Deleted != nil {
			continue
		}
		var e *relinkEdit
		if pe, ok := edits[from]; ok && pe.latest.Number == fd.Version && pe.title == d.Title {
			e = &pe
		} else if e, err = b.relinkEdit(x, fd, id, was, d.Title); err != nil {
			return done, err
		}
		if e == nil {
			continue
		}
		added, removed := e.change.counts()
		v := Version{Number: fd.Version + 1, Title: e.latest.Title, Text: e.text, Kind: KindRelink, Author: by, At: now, Added: added, Removed: removed}
		if err := b.put(&fd, v, &e.latest, e.change); err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}

// relinkRest rewrites the links to document id (titled was before its change of title) in
// the documents ids, relinkBatch of them a transaction, to the title it has then: what
// its change's own transaction left. It returns how many it rewrote and how many it left
// (a transaction failed, or ctx was done).
func (s *Store) relinkRest(ctx context.Context, id, was string, ids []string, by Author) (done, left int) {
	for len(ids) > 0 {
		batch := ids[:min(relinkBatch, len(ids))]
		var (
			edits map[string]relinkEdit
			n     int
		)
		err := s.prepared(ctx, func(b *buckets) (bool, error) {
			x, _ := b.linkIndex()
			d, ok, err := b.doc(id)
			if err != nil || !ok || d.Deleted != nil {
				return false, err
			}
			edits, err = b.relinkEdits(x, id, was, d.Title, batch)
			return err == nil, err
		}, func(b *buckets) (err error) {
			n, err = b.relinkApply(id, was, batch, edits, by, s.now())
			return err
		})
		if err != nil {
			return done, len(ids)
		}
		done += n
		ids = ids[len(batch):]
	}
	return done, 0
}
