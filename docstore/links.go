package docstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/mdscan"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The links index of a space's documents is kept in doc_links, beside the search index
// and apart from it. A link ([[Title]], [[Title|shown]], a Markdown link to a document of
// the space: see package mdscan) is resolved when the version that has it is saved, and
// kept by the id of the document it names, so that a rename changes no link and costs no
// write but its own: the text keeps the title it was written with, and what shows a link
// shows the document's title now. A [[Title]] that names no document of the space is
// broken, and is kept by the title it names, so that making (or renaming, or bringing back)
// a document of that title resolves it.
//
// # Layout
//
// Inside doc_links:
//
//	out/<id><target>           for each link of document id's latest version (each target once):
//	                           uvarint: how many times the text has it; then the id of the
//	                           document it names, or "?" and the target as written (where
//	                           it first came) when it is broken; <target> is "t" and the
//	                           folded title of a [[Title]], or "i" and the id a Markdown
//	                           link names
//	in/<to><from>              uvarint: how many of from's targets name to (from ≠ to, both
//	                           not deleted)
//	broken/<target> 0x00 <id>  nothing: document id (not deleted) has this broken link
//	gone/<id>                  nothing: document id is deleted; the links to it stay in in/,
//	                           for Undelete, and show it as deleted
//	sums/<id>                  8 bytes: a digest of the links of document id's latest text,
//	                           as written, in any order (a sum, so that a save can change it
//	                           by the links it removed and added); uvarint: how many targets
//	                           out/ has (MaxLinks+1 when the text has more than are kept)
//	meta/built                 the index's format, once built
//
// Every version (put), Delete, Undelete and Purge bring it up to date in the same
// transaction. A file written before links has none until EnsureLinks, the first read of
// links or the first write builds it: from then on every write keeps it, so that a link is
// resolved once, when saved, and stays with its document.
const bucketLinks = "doc_links"

// LinksFormat is the links index's format: an index built in another is built again.
// Format 2 counts each target's links (out/) and sums the digest in any order (sums/), so
// that a save that changes a link writes what it changed (linkdelta.go).
const LinksFormat = 2

// MaxLinks is how many distinct documents (and broken titles) one version's links are kept
// for: the links past them are text, and a text of a million distinct [[links]] costs its
// reading, not a million keys.
const MaxLinks = 20000

var (
	linksOut    = []byte("out")
	linksIn     = []byte("in")
	linksBroken = []byte("broken")
	linksGone   = []byte("gone")
	linksSums   = []byte("sums")
	linksMeta   = []byte("meta")
	linksBuilt  = []byte("built")
)

// brokenMark begins an out/ value of a broken link.
const brokenMark = '?'

// linkIndex is the space's links index in one transaction; in a read transaction on a
// space without one, its buckets are nil and it finds nothing.
type linkIndex struct {
	out, in, broken, gone, sums, meta kv.Bucket
}

func (b *buckets) linkIndex() (linkIndex, error) {
	if !b.tx.Writable() {
		parent := spaces.Sub(b.tx, b.space, bucketLinks)
		if parent == nil {
			return linkIndex{}, nil
		}
		return linkIndex{out: parent.Bucket(linksOut), in: parent.Bucket(linksIn), broken: parent.Bucket(linksBroken), gone: parent.Bucket(linksGone), sums: parent.Bucket(linksSums), meta: parent.Bucket(linksMeta)}, nil
	}
	parent, err := spaces.CreateSub(b.tx, b.space, bucketLinks)
	if err != nil {
		return linkIndex{}, err
	}
	var x linkIndex
	for _, sub := range []struct {
		name []byte
		to   *kv.Bucket
	}{{linksOut, &x.out}, {linksIn, &x.in}, {linksBroken, &x.broken}, {linksGone, &x.gone}, {linksSums, &x.sums}, {linksMeta, &x.meta}} {
		bk, err := parent.CreateBucketIfNotExists(sub.name)
		if err != nil {
			return linkIndex{}, fmt.Errorf("creating the links index's %s bucket: %w", sub.name, err)
		}
		*sub.to = bk
	}
	// A document's out/ keys, and its sums/ key, go in order.
	x.out.Tune(0.9)
	return x, nil
}

// builtLinks is the links index in a write transaction, built first if it wasn't (a file
// written before links, or a space whose first document this write makes): rebuilt is then
// true, and the index already has what the write did.
func (b *buckets) builtLinks() (x linkIndex, rebuilt bool, err error) {
	if x, err = b.linkIndex(); err != nil || x.built() {
		return x, false, err
	}
	if err := b.rebuildLinks(x, nil); err != nil {
		return x, false, fmt.Errorf("building the links index of space %s: %w", b.space, err)
	}
	return x, true, nil
}

func (x linkIndex) built() bool {
	if x.meta == nil {
		return false
	}
	v := x.meta.Get(linksBuilt)
	return len(v) == 4 && binary.BigEndian.Uint32(v) == LinksFormat
}

// linkSet is what a save needs of its new text's links: as the line diff shows them (same,
// or delta), or the text's digest alone (see linkDigest), or every target the text names
// (full).
type linkSet struct {
	same  bool       // the change kept the links as they were: nothing was read
	delta *linkDelta // the change of the links, from the lines around the change (linkdelta.go)
	// The whole text's: its digest, and, when full, each target once ("t" and a folded
	// title, or "i" and an id), in key order, with how many times the text has it and how
	// it was first written; more when the text names more targets than are kept.
	digest  uint64
	full    bool
	targets []target
	more    bool
}

// distinct is how many targets out/ has for set's text (MaxLinks+1 when more).
func (set *linkSet) distinct() int {
	if set.more {
		return MaxLinks + 1
	}
	return len(set.targets)
}

// plainLine tells whether a line (with its line break) can neither hold a link nor change
// what another line is: it begins with a letter (so it begins no block: no list item,
// heading, fence, quote, table row or indented code), and has none of the characters that
// links, code spans, destinations and table cells are made of.
func plainLine(line string) bool {
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return false
	}
	if c := line[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80) {
		return false
	}
	return !strings.ContainsAny(line, "[]<>`\\|()\"'")
}

// sameLinks tells, from the line diff alone, whether a change leaves a text's links as
// they were: each run of changed lines replaces plain lines (see plainLine) by plain lines,
// at least one of each (a paragraph's line stays a paragraph's line, wherever it is), or
// one line by another in words alone (inertEdit), or, at the end of the text, adds or
// removes plain or blank lines. Most edits of prose are
// such; a save that passes costs nothing here for however many links the text has.
func sameLinks(c change) bool {
	if c.ops == nil {
		return false
	}
	for i := 0; i < len(c.ops); {
		if c.ops[i].Kind == linediff.Equal {
			i++
			continue
		}
		j := i
		for j < len(c.ops) && c.ops[j].Kind != linediff.Equal {
			j++
		}
		// One line changed into another, its words beside its links.
		if j == i+2 && c.ops[i].Kind == linediff.Delete && c.ops[i].A1-c.ops[i].A0 == 1 && c.ops[i+1].B1-c.ops[i+1].B0 == 1 &&
			inertEdit(c.old[c.ops[i].A0], c.new[c.ops[i+1].B0]) {
			i = j
			continue
		}
		j = i
		removed, added, blanks := 0, 0, false
		for ; j < len(c.ops) && c.ops[j].Kind != linediff.Equal; j++ {
			op := c.ops[j]
			lines := c.new[op.B0:op.B1]
			if op.Kind == linediff.Delete {
				lines = c.old[op.A0:op.A1]
				removed += len(lines)
			} else {
				added += len(lines)
			}
			for _, l := range lines {
				if strings.TrimRight(l, " \t\r\n") == "" {
					blanks = true
				} else if !plainLine(l) {
					return false
				}
			}
		}
		if j < len(c.ops) && (removed == 0 || added == 0 || blanks) {
			return false // before the end, a line added, removed or blank may change others
		}
		i = j
	}
	return true
}

// inertEdit tells whether changing line old into new leaves the links of any text as
// they were: the two differ only between a common beginning and end, in letters, digits,
// spaces and punctuation that makes nothing of Markdown there (no bracket, parenthesis,
// angle bracket, backtick, backslash, pipe or !); the line begins as a paragraph's or a list
// item's text does, with a letter or [; it has no "]:" (a link reference definition); and
// the change is outside every bracket, parenthesis and angle bracket the beginning opened.
// Such is the edit of a line's words beside a link that stays.
func inertEdit(old, new string) bool {
	old, new = strings.TrimRight(old, "\r\n"), strings.TrimRight(new, "\r\n")
	p := 0
	for p < len(old) && p < len(new) && old[p] == new[p] {
		p++
	}
	q := 0
	for q < len(old)-p && q < len(new)-p && old[len(old)-1-q] == new[len(new)-1-q] {
		q++
	}
	prefix := old[:p]
	if strings.ContainsAny(old[p:len(old)-q]+new[p:len(new)-q], "[]()<>`\\|!") || strings.Contains(old, "]:") || strings.Contains(new, "]:") {
		return false
	}
	if strings.Count(prefix, "[") != strings.Count(prefix, "]") || strings.Count(prefix, "(") != strings.Count(prefix, ")") || strings.Count(prefix, "<") != strings.Count(prefix, ">") {
		return false
	}
	// The line's first non-space character, and after a list marker the first after it, is
	// in the common beginning, and is a letter or [.
	t := strings.TrimLeft(prefix, " ")
	if len(prefix)-len(t) > 3 {
		return false // indented code, or a list item's deeper lines: left to the full reading
	}
	if t != "" && (t[0] == '-' || t[0] == '*' || t[0] == '+') && len(t) > 1 && t[1] == ' ' {
		t = strings.TrimLeft(t[1:], " ")
	}
	if t == "" {
		return false
	}
	c := t[0]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || c == '['
}

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// linkHash is one link's part of a digest: FNV-1a of its id and title, mixed (splitmix64's
// finisher) so that a sum of them is as good as a hash of the whole.
func linkHash(l mdscan.Link) uint64 {
	h := fnvAdd(fnvAdd(fnvOffset, l.ID), l.Title)
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// linkKey is the target a link names: "i" and its id, or "t" and its folded title.
func linkKey(l mdscan.Link) string {
	if l.ID != "" {
		return "i" + l.ID
	}
	return "t" + foldTitle(l.Title)
}

func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return (h ^ 0xff) * fnvPrime // a separator no UTF-8 text has
}

// linkDigest is the digest of text's links: the sum of each one's linkHash, so that two
// texts with the same digest have the same links, as written, each as many times (in any
// order). It costs the text's reading and no more.
func linkDigest(text string) uint64 {
	var h uint64
	if mayLink(text) {
		mdscan.Links(text, func(l mdscan.Link) bool {
			h += linkHash(l)
			return true
		})
	}
	return h
}

// mayLink tells whether text can have a link at all: every link has a [ or a <.
func mayLink(text string) bool { return strings.ContainsAny(text, "[<") }

// scanLinks reads text's links: their digest, and at most MaxLinks targets, each with how
// many times the text has it.
func scanLinks(text string) *linkSet {
	set := &linkSet{full: true}
	if !mayLink(text) {
		return set
	}
	// Room for as many targets as the text may have, so that the map doesn't grow as it fills.
	room := min(strings.Count(text, "[[")+strings.Count(text, "](")+strings.Count(text, "]:")+strings.Count(text, "<"), MaxLinks)
	at := make(map[string]int32, room)
	set.targets = make([]target, 0, room)
	mdscan.Links(text, func(l mdscan.Link) bool {
		set.digest += linkHash(l)
		key := linkKey(l)
		if i, ok := at[key]; ok {
			set.targets[i].n++
		} else if len(set.targets) < MaxLinks {
			at[key] = int32(len(set.targets))
			set.targets = append(set.targets, target{key: key, written: l.ID + l.Title, n: 1}) // one of them is ""
		} else {
			set.more = true // past the targets kept: their links are text
		}
		return true
	})
	slices.SortFunc(set.targets, func(a, b target) int { return strings.Compare(a.key, b.key) })
	return set
}

// foldTitle is titleKey's string, made at one allocation for a title in ASCII.
func foldTitle(title string) string {
	title = strings.TrimSpace(title)
	for i := 0; i < len(title); i++ {
		if title[i] >= 0x80 {
			return strings.ToLower(title)
		}
	}
	b := make([]byte, len(title))
	for i := 0; i < len(title); i++ {
		c := title[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b)
}

// linkSum is a sums/ entry: the digest of a document's links, and how many targets out/
// has for it (MaxLinks+1 when its text names more than are kept).
type linkSum struct {
	digest   uint64
	distinct int
}

func (s linkSum) value() []byte {
	return binary.AppendUvarint(binary.BigEndian.AppendUint64(nil, s.digest), uint64(s.distinct))
}

// sum is document id's sums/ entry, and whether the index has one.
func (x linkIndex) sum(id string) (linkSum, bool) {
	if x.sums == nil {
		return linkSum{}, false
	}
	v := x.sums.Get([]byte(id))
	if len(v) < 9 {
		return linkSum{}, false
	}
	n, k := binary.Uvarint(v[8:])
	if k <= 0 || n > MaxLinks+1 {
		return linkSum{}, false
	}
	return linkSum{digest: binary.BigEndian.Uint64(v), distinct: int(n)}, true
}

// prepareLinks is what a change's commit needs of its new text's links, read before the
// commit: nothing when the line diff shows the links are as they were (sameLinks); the
// links of the lines around the change when they can be read alone (linkDeltaOf); else the
// digest alone when the index's is the same; else every target.
func (b *buckets) prepareLinks(id, oldText, text string, c change) *linkSet {
	if sameLinks(c) {
		return &linkSet{same: true}
	}
	if d, ok := linkDeltaOf(oldText, text, c); ok {
		return &linkSet{delta: d}
	}
	x, _ := b.linkIndex()
	d := linkDigest(text)
	if sum, ok := x.sum(id); ok && sum.digest == d && sum.distinct <= MaxLinks {
		return &linkSet{digest: d}
	}
	return scanLinks(text)
}

// target is one out/ entry: the target key, how many times the text has it (n), and the
// id it names ("" when broken, then written is how it was first written).
type target struct {
	key, to, written string
	n                int
}

func decodeTarget(key, value []byte) target {
	t := target{key: string(key)}
	n, k := binary.Uvarint(value)
	if k <= 0 {
		return t // n is 0: not a count any save makes, and so read again whole (applyDelta)
	}
	t.n, value = int(n), value[k:]
	if len(value) > 0 && value[0] == brokenMark {
		t.written = string(value[1:])
	} else {
		t.to = string(value)
	}
	return t
}

func (t target) value() []byte {
	v := binary.AppendUvarint(make([]byte, 0, 4+len(t.to)+len(t.written)), uint64(t.n))
	if t.to == "" {
		return append(append(v, brokenMark), t.written...)
	}
	return append(v, t.to...)
}

// outOf is document id's out/ entries, in key order.
func (x linkIndex) outOf(id string) []target {
	if x.out == nil {
		return nil
	}
	var ts []target
	prefix := []byte(id)
	c := x.out.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		ts = append(ts, decodeTarget(k[len(prefix):], v))
	}
	return ts
}

func outKey(id, key string) []byte { return append([]byte(id), key...) }
func inKey(to, from string) []byte { return append([]byte(to), from...) }
func brokenKey(key, id string) []byte {
	return append(append([]byte(key), 0), id...)
}

// resolve is the document target key names now, or "".
func (b *buckets) resolve(key string) string {
	switch key[0] {
	case 't':
		if id := b.titles.Get([]byte(key[1:])); id != nil {
			return string(id)
		}
	case 'i':
		if b.docs.Get([]byte(key[1:])) != nil {
			return key[1:]
		}
	}
	return ""
}

// resolveAll is resolve of each of ts's keys, the titles and records they name read at
// once.
func (b *buckets) resolveAll(ts []target) []string {
	var titles, ids [][]byte
	for _, t := range ts {
		if t.key[0] == 't' {
			titles = append(titles, []byte(t.key[1:]))
		} else if t.key[0] == 'i' {
			ids = append(ids, []byte(t.key[1:]))
		}
	}
	byTitle, byID := kv.GetAll(b.titles, titles), kv.GetAll(b.docs, ids)
	out := make([]string, len(ts))
	for i, t := range ts {
		switch t.key[0] {
		case 't':
			if byTitle[0] != nil {
				out[i] = string(byTitle[0])
			}
			byTitle = byTitle[1:]
		case 'i':
			if byID[0] != nil {
				out[i] = t.key[1:]
			}
			byID = byID[1:]
		}
	}
	return out
}

// count adds delta to the uvarint at key of bk, deleting the key at zero.
func count(bk kv.Bucket, key []byte, delta int) error {
	return setCount(bk, key, countOf(bk.Get(key))+int64(delta))
}

// countOf is the count a value of count's holds (nil: 0).
func countOf(v []byte) int64 {
	n, _ := binary.Varint(v)
	return n
}

// setCount puts n at key of bk, deleting the key when n is 0 or less.
func setCount(bk kv.Bucket, key []byte, n int64) error {
	if n <= 0 {
		return bk.Delete(key)
	}
	return bk.Put(key, binary.AppendVarint(nil, n))
}

// link counts t, a link of document from, in in/ or broken/.
func (x linkIndex) link(from string, t target, delta int) error {
	switch {
	case t.to == "":
		if delta > 0 {
			return x.broken.Put(brokenKey(t.key, from), nil)
		}
		return x.broken.Delete(brokenKey(t.key, from))
	case t.to != from:
		return count(x.in, inKey(t.to, from), delta)
	}
	return nil // a link to itself is kept, and counted nowhere
}

// linksPut brings the links index up to date with version v of document id; prev is the
// version before (nil for a new document), set what v's text links to (nil: not read yet).
// It runs after the titles index knows v's title.
func (b *buckets) linksPut(id string, v Version, prev *Version, set *linkSet) error {
	x, rebuilt, err := b.builtLinks()
	if err != nil || rebuilt {
		return err
	}
	if prev == nil || prev.Text != v.Text {
		if err := b.keepLinks(x, id, v.Text, prev == nil, set); err != nil {
			return err
		}
	}
	if prev == nil || !bytes.Equal(titleKey(prev.Title), titleKey(v.Title)) {
		return b.resolveBroken(x, id, v.Title)
	}
	return nil
}

// keepLinks brings document id's links up to date with its new text, as set has them (nil:
// not read yet): from the change alone when it can, else from the whole text. fresh is
// true for a new document, which has no out/ entries yet.
func (b *buckets) keepLinks(x linkIndex, id, text string, fresh bool, set *linkSet) error {
	switch {
	case set == nil:
		set = scanLinks(text)
	case set.same:
		return nil
	case set.delta != nil:
		if ok, err := b.applyDelta(x, id, set.delta); ok || err != nil {
			return err
		}
		set = scanLinks(text) // the index isn't what the delta was made against: read it all
	}
	var sum linkSum
	ok := false
	if !fresh { // a new document has no sum yet
		sum, ok = x.sum(id)
	}
	if ok && sum.digest == set.digest && sum.distinct <= MaxLinks && !set.more {
		return nil // the same links, as many times: no target came or went, none changed its count
	}
	if !set.full { // only the digest was read, and it differs now
		set = scanLinks(text)
	}
	if err := b.relink(x, id, set, fresh); err != nil {
		return err
	}
	return x.sums.Put([]byte(id), linkSum{digest: set.digest, distinct: set.distinct()}.value())
}

// relink changes document id's out/ entries, and what counts them, to set's: only the
// targets that came, went or changed their count are written, and only those that came
// are resolved.
func (b *buckets) relink(x linkIndex, id string, set *linkSet, fresh bool) error {
	var gone, changed, came []target
	if fresh {
		came = set.targets
	} else {
		prefix := []byte(id)
		c := x.out.Cursor()
		k, v := c.Seek(prefix)
		for _, t := range set.targets {
			for ; k != nil && bytes.HasPrefix(k, prefix) && string(k[len(prefix):]) < t.key; k, v = c.Next() {
				gone = append(gone, decodeTarget(k[len(prefix):], v))
			}
			if k != nil && bytes.HasPrefix(k, prefix) && string(k[len(prefix):]) == t.key {
				// The same target: it keeps the document it was resolved to.
				if was := decodeTarget(k[len(prefix):], v); was.n != t.n {
					was.n = t.n
					changed = append(changed, was)
				}
				k, v = c.Next()
				continue
			}
			came = append(came, t)
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			gone = append(gone, decodeTarget(k[len(prefix):], v))
		}
	}
	// The cursor is done with: now the writes.
	return b.writeTargets(x, id, gone, changed, came, fresh)
}

// writeTargets writes document id's out/ entries that went, changed their count (kept
// resolved as they were) and came (resolved now), and counts them in in/ and broken/.
// fresh is true for a new document, of which in/ has nothing yet.
func (b *buckets) writeTargets(x linkIndex, id string, gone, changed, came []target, fresh bool) error {
	// The in/ keys' changes, by the document each names: one named by two targets counts both.
	type in struct {
		to string
		n  int
	}
	var ins []in
	for _, t := range gone {
		if err := x.out.Delete(outKey(id, t.key)); err != nil {
			return err
		}
		if t.to != "" && t.to != id {
			ins = append(ins, in{t.to, -1})
		} else if err := x.link(id, t, -1); err != nil {
			return err
		}
	}
	for _, t := range changed {
		if err := x.out.Put(outKey(id, t.key), t.value()); err != nil {
			return err
		}
	}
	tos := b.resolveAll(came)
	for i, t := range came {
		t.to = tos[i]
		if err := x.out.Put(outKey(id, t.key), t.value()); err != nil {
			return err
		}
		if t.to != "" && t.to != id {
			ins = append(ins, in{t.to, 1})
		} else if err := x.link(id, t, 1); err != nil {
			return err
		}
	}
	// In key order, each document once: the writes fall on pages one after another.
	slices.SortFunc(ins, func(a, b in) int { return strings.Compare(a.to, b.to) })
	sum := ins[:0]
	for _, c := range ins {
		if len(sum) > 0 && sum[len(sum)-1].to == c.to {
			sum[len(sum)-1].n += c.n
		} else {
			sum = append(sum, c)
		}
	}
	var was []int64 // the counts now, read at once (fresh: nothing to read)
	if !fresh {
		var ks [][]byte
		for _, c := range sum {
			if c.n != 0 {
				ks = append(ks, inKey(c.to, id))
			}
		}
		for _, v := range kv.GetAll(x.in, ks) {
			was = append(was, countOf(v))
		}
	}
	for _, c := range sum {
		switch {
		case c.n == 0:
		case fresh: // a new document was counted nowhere
			if err := x.in.Put(inKey(c.to, id), binary.AppendVarint(nil, int64(c.n))); err != nil {
				return err
			}
		default:
			if err := setCount(x.in, inKey(c.to, id), was[0]+int64(c.n)); err != nil {
				return err
			}
			was = was[1:]
		}
	}
	return nil
}

// resolveBroken points the broken links to title at document id, which has it now.
func (b *buckets) resolveBroken(x linkIndex, id, title string) error {
	key := "t" + string(titleKey(title))
	prefix := brokenKey(key, "")
	var from []string
	c := x.broken.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		from = append(from, string(k[len(prefix):]))
	}
	for _, f := range from {
		t := decodeTarget([]byte(key), x.out.Get(outKey(f, key)))
		t.to, t.written = id, ""
		if err := x.out.Put(outKey(f, key), t.value()); err != nil {
			return err
		}
		if err := x.broken.Delete(brokenKey(key, f)); err != nil {
			return err
		}
		if err := x.link(f, t, 1); err != nil {
			return err
		}
	}
	return nil
}

// linksDrop takes document id (deleted) out of what its links count, keeping its out/
// entries for Undelete, and marks it gone.
func (b *buckets) linksDrop(id string) error {
	x, rebuilt, err := b.builtLinks()
	if err != nil || rebuilt {
		return err
	}
	for _, t := range x.outOf(id) {
		if t.to == "" {
			err = x.broken.Delete(brokenKey(t.key, id))
		} else if t.to != id {
			err = x.in.Delete(inKey(t.to, id))
		}
		if err != nil {
			return err
		}
	}
	return x.gone.Put([]byte(id), nil)
}

// linksAdd brings document d (undeleted) back: its links are resolved again where they
// were broken, or named a document purged meanwhile, and the broken links to its title
// are resolved.
func (b *buckets) linksAdd(d Document) error {
	x, rebuilt, err := b.builtLinks()
	if err != nil || rebuilt {
		return err
	}
	if err := x.gone.Delete([]byte(d.ID)); err != nil {
		return err
	}
	for _, t := range x.outOf(d.ID) {
		was := t
		switch {
		case t.to == "":
			t.to = b.resolve(t.key)
		case b.docs.Get([]byte(t.to)) == nil: // purged while d was deleted
			t.to, t.written = b.resolve(t.key), t.key[1:]
		}
		if t != was {
			if err := x.out.Put(outKey(d.ID, t.key), t.value()); err != nil {
				return err
			}
		}
		if err := x.link(d.ID, t, 1); err != nil {
			return err
		}
	}
	return b.resolveBroken(x, d.ID, d.Title)
}

// linksForget removes document id (deleted, being purged) from the index: its own links
// go, and the links to it become broken (by the title they were written with, which a new
// document may take).
func (b *buckets) linksForget(id string) error {
	x, _, err := b.builtLinks()
	if err != nil {
		return err
	}
	for _, t := range x.outOf(id) {
		if err := x.out.Delete(outKey(id, t.key)); err != nil {
			return err
		}
	}
	if err := x.gone.Delete([]byte(id)); err != nil {
		return err
	}
	if err := x.sums.Delete([]byte(id)); err != nil {
		return err
	}
	var from []string
	prefix := []byte(id)
	c := x.in.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		from = append(from, string(k[len(prefix):]))
	}
	for _, f := range from {
		if err := x.in.Delete(inKey(id, f)); err != nil {
			return err
		}
		for _, t := range x.outOf(f) {
			if t.to != id {
				continue
			}
			// Another document may have the title by now (this one was deleted).
			if t.to, t.written = b.resolve(t.key), t.key[1:]; t.to == id {
				t.to = ""
			}
			if err := x.out.Put(outKey(f, t.key), t.value()); err != nil {
				return err
			}
			if err := x.link(f, t, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// EnsureLinks builds the links index of the space's documents if it isn't built yet (a
// file written before links, or by an older format): each document's latest text is read
// for its links, resolved by the titles and ids of the documents now. progress, if not
// nil, is called inside the transaction with how many documents were read of how many,
// every 100 and at the end; it must not use the database.
func (s *Store) EnsureLinks(ctx context.Context, progress func(done, total int)) error {
	return ensureBuilt(ctx, s, (*buckets).linkIndex, linkIndex.built, func(b *buckets, x linkIndex) error {
		if err := b.rebuildLinks(x, progress); err != nil {
			return fmt.Errorf("building the links index of space %s: %w", s.space, err)
		}
		return nil
	})
}

func (b *buckets) rebuildLinks(x linkIndex, progress func(done, total int)) error {
	for _, bk := range []kv.Bucket{x.out, x.in, x.broken, x.gone, x.sums} {
		if err := emptyBucket(bk); err != nil {
			return err
		}
	}
	var docs []Document
	if err := b.eachDoc(func(d Document) error {
		docs = append(docs, d)
		return nil
	}); err != nil {
		return err
	}
	for i, d := range docs {
		v, err := b.version(d.ID, d.Version)
		if err != nil {
			return err
		}
		set := scanLinks(v.Text)
		if err := x.sums.Put([]byte(d.ID), linkSum{digest: set.digest, distinct: set.distinct()}.value()); err != nil {
			return err
		}
		for _, t := range set.targets {
			t.to = b.resolve(t.key)
			if err := x.out.Put(outKey(d.ID, t.key), t.value()); err != nil {
				return err
			}
			if d.Deleted == nil {
				if err := x.link(d.ID, t, 1); err != nil {
					return err
				}
			}
		}
		if d.Deleted != nil {
			if err := x.gone.Put([]byte(d.ID), nil); err != nil {
				return err
			}
		}
		if progress != nil && ((i+1)%100 == 0 || i+1 == len(docs)) {
			progress(i+1, len(docs))
		}
	}
	return x.meta.Put(linksBuilt, binary.BigEndian.AppendUint32(nil, LinksFormat))
}

func emptyBucket(b kv.Bucket) error {
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// CheckLinks checks the links index against the documents, and returns an error naming the
// first difference (nil when it holds, or when there is no index yet): each document's
// out/ entries are its latest text's targets, each counted as many times as the text has
// it and naming a document the space has (or broken), and its sums/ entry is their digest
// and number; in/, broken/ and gone/ are what the documents not deleted, and those
// deleted, make of them; no broken [[Title]] of a document not deleted names a title a
// document has. Which document a resolved link names is not checked: it was chosen when it
// was saved. For tests and checks of a file.
func (s *Store) CheckLinks(ctx context.Context) error {
	return s.view(ctx, func(b *buckets) error {
		x, _ := b.linkIndex()
		if !x.built() {
			return nil
		}
		wantIn := map[string]int64{}
		wantBroken := map[string]bool{}
		wantGone := map[string]bool{}
		seen := map[string]bool{}
		err := b.eachDoc(func(d Document) error {
			seen[d.ID] = true
			v, err := b.version(d.ID, d.Version)
			if err != nil {
				return err
			}
			set := scanLinks(v.Text)
			out := x.outOf(d.ID)
			if len(out) != len(set.targets) {
				return fmt.Errorf("%s has %d targets kept, but its text names %d", d.ID, len(out), len(set.targets))
			}
			for i, t := range out {
				if want := set.targets[i]; t.key != want.key || t.n != want.n {
					return fmt.Errorf("%s's target %d is kept as %q × %d, but its text has %q × %d", d.ID, i, t.key, t.n, want.key, want.n)
				}
				switch {
				case t.to != "" && d.Deleted == nil && b.docs.Get([]byte(t.to)) == nil:
					return fmt.Errorf("%s's link %q names %s, which the space doesn't have", d.ID, t.key, t.to)
				case t.to == "" && d.Deleted == nil && b.resolve(t.key) != "":
					return fmt.Errorf("%s's link %q is kept as broken, but names %s", d.ID, t.key, b.resolve(t.key))
				}
				if d.Deleted != nil {
					continue
				}
				if t.to == "" {
					wantBroken[string(brokenKey(t.key, d.ID))] = true
				} else if t.to != d.ID {
					wantIn[string(inKey(t.to, d.ID))]++
				}
			}
			want := linkSum{digest: set.digest, distinct: set.distinct()}
			if sum, ok := x.sum(d.ID); !ok || sum != want || linkDigest(v.Text) != set.digest {
				return fmt.Errorf("%s's links' sum is kept as %+v (%v), but its text's is %+v", d.ID, sum, ok, want)
			}
			if d.Deleted != nil {
				wantGone[d.ID] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := x.out.ForEach(func(k, _ []byte) error {
			if len(k) < 26 || !seen[string(k[:26])] {
				return fmt.Errorf("out/ has %q, of no document", k)
			}
			return nil
		}); err != nil {
			return err
		}
		if err := sameKeys("in/", x.in, func(k, v []byte) (bool, error) {
			n, _ := binary.Varint(v)
			if want := wantIn[string(k)]; want != n {
				return false, fmt.Errorf("in/%q counts %d links, want %d", k, n, want)
			}
			return true, nil
		}, len(wantIn)); err != nil {
			return err
		}
		if err := sameKeys("broken/", x.broken, func(k, _ []byte) (bool, error) { return wantBroken[string(k)], nil }, len(wantBroken)); err != nil {
			return err
		}
		return sameKeys("gone/", x.gone, func(k, _ []byte) (bool, error) { return wantGone[string(k)], nil }, len(wantGone))
	})
}

// sameKeys checks that every key of bk is wanted (want), and that there are as many as wanted.
func sameKeys(name string, bk kv.Bucket, want func(k, v []byte) (bool, error), n int) error {
	got := 0
	err := bk.ForEach(func(k, v []byte) error {
		ok, err := want(k, v)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s has %q, which no document's links make", name, k)
		}
		got++
		return nil
	})
	if err == nil && got != n {
		err = fmt.Errorf("%s has %d keys, want %d", name, got, n)
	}
	return err
}
