package docstore

import (
	"bytes"
	"slices"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/mdscan"
)

// Links is what is known of a document's links: the documents its latest version links to,
// those whose latest versions link to it, and its links that are broken. A document's
// links to itself are in none of them.
type Links struct {
	To          []Document   // at most the limit asked for: those linked by [[Title]] by the title written (folded), then those by id
	ToTotal     int          // documents it links to, each once
	From        []Document   // at most the limit asked for, oldest made first
	FromTotal   int          // documents not deleted that link to it
	Broken      []BrokenLink // at most the limit asked for
	BrokenTotal int
}

// BrokenLink is a link that names no document of the space: a [[Title]] that no title is
// (Title, as written), a Markdown link to an id the space has no document of (ID), or a
// link to a document that is deleted (Deleted).
type BrokenLink struct {
	Title   string
	ID      string
	Deleted *Document
}

// Links returns document d's links (d as this Reader found it), at most limit of each kind
// (limit < 1: none listed, only counted): those of its latest version.
func (r *Reader) Links(d Document, limit int) (Links, error) {
	if _, err := r.links(); err != nil {
		return Links{}, err
	}
	return r.b.linksOf(d, limit)
}

// links is the space's links index; when it is not built yet (a store written before it),
// errUnbuilt, and View builds it and reads again.
func (r *Reader) links() (linkIndex, error) {
	x, _ := r.b.linkIndex() // none yet: EnsureLinks makes it
	if !x.built() {
		r.unbuilt.add(indexLinks, r.b.space)
		return x, errUnbuilt
	}
	return x, nil
}

// linksOf is Links of document d.
func (b *buckets) linksOf(d Document, limit int) (Links, error) {
	var ls Links
	x, _ := b.linkIndex()
	var to, gone []string
	targets := byTitleFirst(x.outOf(d.ID))
	var ids [][]byte // each document linked to once, to see which are gone
	seen := map[string]bool{}
	for _, t := range targets {
		if t.to != "" && t.to != d.ID && !seen[t.to] {
			seen[t.to] = true
			ids = append(ids, []byte(t.to))
		}
	}
	isGone := map[string]bool{}
	for i, v := range kv.GetAll(x.gone, ids) {
		isGone[string(ids[i])] = v != nil
	}
	clear(seen)
	for _, t := range targets {
		switch {
		case t.to == "":
			if ls.BrokenTotal++; len(ls.Broken)+len(gone) < limit {
				ls.Broken = append(ls.Broken, brokenOf(t))
			}
		case t.to == d.ID, seen[t.to]:
		case isGone[t.to]:
			seen[t.to] = true
			if ls.BrokenTotal++; len(ls.Broken)+len(gone) < limit {
				gone = append(gone, t.to)
			}
		default:
			seen[t.to] = true
			if ls.ToTotal++; len(to) < limit {
				to = append(to, t.to)
			}
		}
	}
	from, total := x.from(d.ID, "", limit)
	ls.FromTotal = total
	raws := b.docsRaw(slices.Concat(to, from, gone))
	var err error
	if ls.To, err = docsOf(to, raws[:len(to)]); err != nil {
		return ls, err
	}
	if ls.From, err = docsOf(from, raws[len(to):len(to)+len(from)]); err != nil {
		return ls, err
	}
	deleted, err := docsOf(gone, raws[len(to)+len(from):])
	for i := range deleted {
		ls.Broken = append(ls.Broken, BrokenLink{Deleted: &deleted[i]})
	}
	return ls, err
}

// byTitleFirst puts ts's [[Title]] links (by title) before its Markdown links (by id).
func byTitleFirst(ts []target) []target {
	slices.SortStableFunc(ts, func(a, b target) int { return int(b.key[0]) - int(a.key[0]) })
	return ts
}

func brokenOf(t target) BrokenLink {
	if t.key[0] == 'i' {
		return BrokenLink{ID: t.key[1:]}
	}
	return BrokenLink{Title: t.written}
}

// from is up to limit ids of the documents that link to document id, after the id after
// ("" from the first), oldest made first, and how many there are in all.
func (x linkIndex) from(id, after string, limit int) ([]string, int) {
	if x.in == nil {
		return nil, 0
	}
	var ids []string
	total := 0
	prefix := []byte(id)
	c := x.in.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		total++
		if from := string(k[len(prefix):]); from > after && len(ids) < limit {
			ids = append(ids, from)
		}
	}
	return ids, total
}

// docsOf reads the records of documents ids from raws, as stored (docsRaw), leaving out
// those without one.
func docsOf(ids []string, raws [][]byte) ([]Document, error) {
	docs := make([]Document, 0, len(ids))
	for i, id := range ids {
		d, ok, err := docOf(id, raws[i])
		if err != nil {
			return nil, err
		}
		if ok {
			docs = append(docs, d)
		}
	}
	return docs, nil
}

// Backlinks returns the named document and a page of the documents whose latest versions
// link to it: up to limit (at least 1), oldest made first, from the one after the id after
// ("" from the first); how many there are in all; and the id to give as after for the next
// page ("" when there is none).
func (r *Reader) Backlinks(name, after string, limit int) (Document, []Document, int, string, error) {
	limit = max(limit, 1)
	var (
		d     Document
		docs  []Document
		total int
		next  string
	)
	x, err := r.links()
	if err != nil {
		return d, docs, total, next, err
	}
	b := r.b
	if d, err = b.named(name); err != nil {
		return d, docs, total, next, err
	}
	ids, n := x.from(d.ID, after, limit+1)
	total, next = n, ""
	if len(ids) > limit {
		ids, next = ids[:limit], ids[limit-1]
	}
	docs, err = docsOf(ids, b.docsRaw(ids))
	return d, docs, total, next, err
}

// Unlinked returns up to limit of the space's documents that no other document links to,
// latest saved first, and how many there are in all.
func (r *Reader) Unlinked(limit int) ([]Document, int, error) {
	var (
		docs  []Document
		total int
	)
	x, err := r.links()
	if err != nil {
		return docs, total, err
	}
	b := r.b
	if b.recent == nil {
		return docs, total, nil
	}
	var ids []string
	c := b.recent.Cursor()
	var ic kv.Cursor
	if x.in != nil {
		ic = x.in.Cursor()
	}
	for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
		id := k[8:]
		if ic != nil {
			if got, _ := ic.Seek(id); got != nil && bytes.HasPrefix(got, id) {
				continue
			}
		}
		if total++; len(ids) < limit {
			ids = append(ids, string(id))
		}
	}
	listed, err := b.listed(ids)
	docs = listed
	return docs, total, err
}

// BrokenGroup is one broken link of the space, and the documents (not deleted) that have it.
type BrokenGroup struct {
	BrokenLink
	In      []Document // at most MaxBrokenIn, oldest made first
	InTotal int
}

// MaxBrokenIn is how many of the documents that have a broken link BrokenLinks names.
const MaxBrokenIn = 5

// BrokenLinks returns up to limit of the space's broken links, each with the documents that
// have it: the [[Titles]] that name no document first, by title (folded), then the ids that
// name none, then the links to deleted documents, oldest made first. It returns how many
// there are in all.
func (r *Reader) BrokenLinks(limit int) ([]BrokenGroup, int, error) {
	var (
		groups []BrokenGroup
		total  int
	)
	x, err := r.links()
	if err != nil {
		return groups, total, err
	}
	b := r.b
	if x.broken == nil {
		return groups, total, nil
	}
	t := brokenTally{limit: limit}
	t.count(x)
	groups, err = b.brokenGroups(x, t.gs)
	return groups, t.total, err
}

// brokenKeys is a broken link as the link index has it: a target key, or "d" and a
// deleted document's id, with up to MaxBrokenIn of the documents that have it, of n.
type brokenKeys struct {
	key  string
	from []string
	n    int
}

// brokenTally counts a space's broken links, keeping the first limit of them.
type brokenTally struct {
	gs           []brokenKeys
	total, limit int
}

// add counts a broken link, and keeps it when fewer than limit are kept.
func (t *brokenTally) add(key string, from []string, n int) {
	if t.total++; len(t.gs) < t.limit {
		t.gs = append(t.gs, brokenKeys{key: key, from: from, n: n})
	}
}

// count reads x's broken links in BrokenLinks' order: the [[Titles]] that name no
// document (keys "t"), the ids that name none ("i"), then the links to deleted documents.
func (t *brokenTally) count(x linkIndex) {
	for _, r := range [][2]string{{"t", "u"}, {"i", "j"}} {
		c := x.broken.Cursor()
		var cur *brokenKeys
		last := ""
		for k, _ := c.Seek([]byte(r[0])); k != nil && string(k) < r[1]; k, _ = c.Next() {
			zero := bytes.LastIndexByte(k, 0)
			if zero < 0 {
				continue
			}
			if key := string(k[:zero]); key != last {
				last, cur = key, nil
				if t.add(key, nil, 0); len(t.gs) > 0 && t.gs[len(t.gs)-1].key == key {
					cur = &t.gs[len(t.gs)-1]
				}
			}
			if cur != nil {
				if cur.n++; len(cur.from) < MaxBrokenIn {
					cur.from = append(cur.from, string(k[zero+1:]))
				}
			}
		}
	}
	gc := x.gone.Cursor()
	for k, _ := gc.First(); k != nil; k, _ = gc.Next() {
		if ids, n := x.from(string(k), "", MaxBrokenIn); n > 0 {
			t.add("d"+string(k), ids, n)
		}
	}
}

// brokenGroups reads the records of the documents the kept broken links gs name, and
// makes each a BrokenGroup: a deleted document's, an id's or a written [[Title]]'s. On an
// error it returns those made before it.
func (b *buckets) brokenGroups(x linkIndex, gs []brokenKeys) ([]BrokenGroup, error) {
	var ids []string
	for _, g := range gs {
		ids = append(ids, g.from...)
		if g.key[0] == 'd' {
			ids = append(ids, g.key[1:])
		}
	}
	raws := b.docsRaw(ids)
	var outs [][]byte // a written [[Title]]'s out/ entry, which keeps it as written
	for _, g := range gs {
		if g.key[0] == 't' {
			outs = append(outs, outKey(g.from[0], g.key))
		}
	}
	written := kv.GetAll(x.out, outs)
	var groups []BrokenGroup
	for _, g := range gs {
		in, err := docsOf(g.from, raws)
		if err != nil {
			return groups, err
		}
		raws = raws[len(g.from):]
		bg := BrokenGroup{In: in, InTotal: g.n}
		switch g.key[0] {
		case 'd':
			d, _, err := docOf(g.key[1:], raws[0])
			if err != nil {
				return groups, err
			}
			raws = raws[1:]
			bg.Deleted = &d
		case 'i':
			bg.ID = g.key[1:]
		case 't':
			bg.Title = decodeTarget(nil, written[0]).written
			written = written[1:]
		}
		groups = append(groups, bg)
	}
	return groups, nil
}

// Target is the document a [[Title]] names now: its id and title, and whether it is
// deleted; ID is "" when it names none.
type Target struct {
	ID, Title string
	Deleted   bool
}

// FoldTitle is a title as titles are compared: the key Targets answers by.
func FoldTitle(title string) string { return string(titleKey(title)) }

// Targets says which document each of titles, [[Titles]] of a version of document id
// (WikiTitles), names now, by FoldTitle: the one the link was resolved to when id's latest
// version was saved, if that version has it, else the one that has the title now (an older
// version's link that the latest no longer has). No titles read nothing.
func (r *Reader) Targets(id string, titles []string) (map[string]Target, error) {
	var out map[string]Target
	if len(titles) == 0 {
		return map[string]Target{}, nil
	}
	x, err := r.links()
	if err != nil {
		return out, err
	}
	b := r.b
	out, err = b.targets(x, id, titles)
	return out, err
}

// targets is Targets, in b's transaction on the links index x. It reads at once the
// out/ entries of every title, the titles' entries of those without one, then the records
// of the documents they name.
func (b *buckets) targets(x linkIndex, id string, titles []string) (map[string]Target, error) {
	out := map[string]Target{}
	if b.docs == nil {
		return out, nil
	}
	var keys []string // each title once, folded
	for _, title := range titles {
		key := FoldTitle(title)
		if _, ok := out[key]; !ok {
			out[key] = Target{} // names none, unless read below
			keys = append(keys, key)
		}
	}
	outs := make([][]byte, len(keys))
	if x.out != nil {
		ks := make([][]byte, len(keys))
		for i, key := range keys {
			ks[i] = outKey(id, "t"+key)
		}
		outs = kv.GetAll(x.out, ks)
	}
	to := make([]string, len(keys))
	var unresolved [][]byte // titles the latest version doesn't link: who has them now
	var at []int
	for i, v := range outs {
		if v != nil {
			to[i] = decodeTarget(nil, v).to
		} else {
			unresolved, at = append(unresolved, []byte(keys[i])), append(at, i)
		}
	}
	for j, got := range kv.GetAll(b.titles, unresolved) {
		to[at[j]] = string(got)
	}
	var ids []string
	for _, t := range to {
		if t != "" {
			ids = append(ids, t)
		}
	}
	raws := b.docsRaw(ids)
	for i, key := range keys {
		if to[i] == "" {
			continue
		}
		d, ok, err := docOf(to[i], raws[0])
		if err != nil {
			return nil, err
		}
		raws = raws[1:]
		if ok {
			out[key] = Target{ID: d.ID, Title: d.Title, Deleted: d.Deleted != nil}
		}
	}
	return out, nil
}

// WikiTitles are the titles of text's [[links]] that a render may meet (those outside
// code, as mdscan finds them), each once (by FoldTitle), at most MaxLinks: what a page
// asks Targets about.
func WikiTitles(text string) []string {
	if !strings.Contains(text, "[[") {
		return nil
	}
	seen := map[string]bool{}
	var titles []string
	mdscan.Links(text, func(l mdscan.Link) bool {
		if k := FoldTitle(l.Title); l.Title != "" && !seen[k] {
			seen[k] = true
			titles = append(titles, l.Title)
		}
		return len(titles) < MaxLinks
	})
	return titles
}
