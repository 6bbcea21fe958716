package docstore

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/linediff"
)

// Versions are stored the way version-control systems store them: the latest whole, each
// older one as a reverse delta (the lines to copy from the version after it, and the lines
// it had that the next one lacks), and every snapshotEvery-th version whole, so that
// reading any version applies at most snapshotEvery-1 deltas. A thousand one-line edits of
// a 100 KB document so cost about 16 whole texts, not a thousand.
//
// Files written before deltas hold every version whole; a whole record reads the same in
// both layouts, and the record before each new version is turned into a delta as it is
// written, so old files need no migration.
var snapshotEvery = 64

// record is a version as stored: whole (Text) when Delta is false, else as ops that rebuild
// its text from the next version's.
type record struct {
	Version
	Delta bool      `json:"delta,omitempty"`
	Ops   []deltaOp `json:"ops,omitempty"`
	NoEOL bool      `json:"noeol,omitempty"` // the text lacks a final line break
	// Next, on a version kept whole that has one after it, is the delta's shape without its
	// text: which of the next version's lines it has (C) and how many of its own lines
	// come between (N). Blame follows lines down a history with it, where a delta has Ops;
	// a whole record written before it has none, and blame diffs the two texts instead.
	Next []deltaOp `json:"next,omitempty"`
}

// deltaOp copies lines [C[0], C[1]) of the next version, or, when C is nil, adds I; in a
// whole record's Next, it has N, the number of lines added, instead of I.
type deltaOp struct {
	C []int  `json:"c,omitempty"`
	I string `json:"i,omitempty"`
	N int    `json:"n,omitempty"`
}

// lines is how many lines of the version the op makes: a copy's, an insert's (a last line
// without its line break counted), else N.
func (op deltaOp) lines() int {
	switch {
	case op.C != nil:
		return op.C[1] - op.C[0]
	case op.I != "":
		n := strings.Count(op.I, "\n")
		if !strings.HasSuffix(op.I, "\n") {
			n++
		}
		return n
	}
	return op.N
}

// eol gives text with a final line break, so that diffs don't count a missing one as a
// changed last line; the deltas note it apart (NoEOL).
func eol(text string) string {
	if text != "" && !strings.HasSuffix(text, "\n") {
		return text + "\n"
	}
	return text
}

// change is the line diff between two texts, from which both the counts of a new version
// and the delta that rebuilds the old one are read.
type change struct {
	old, new []string
	ops      []linediff.Op
	links    *linkSet // the new text's links, when read before the commit (links.go)
}

func diffTexts(old, new string) change {
	c := change{old: linediff.Lines(eol(old)), new: linediff.Lines(eol(new))}
	c.ops = linediff.Diff(c.old, c.new)
	return c
}

// diff is the change as Saved gives it.
func (c change) diff() *Diff { return &Diff{Old: c.old, New: c.new, Ops: c.ops} }

func (c change) counts() (added, removed int) {
	for _, op := range c.ops {
		switch op.Kind {
		case linediff.Insert:
			added += op.B1 - op.B0
		case linediff.Delete:
			removed += op.A1 - op.A0
		}
	}
	return added, removed
}

// delta is the ops that rebuild the old text from the new.
func (c change) delta() []deltaOp {
	var ops []deltaOp
	for _, op := range c.ops {
		switch op.Kind {
		case linediff.Equal:
			ops = append(ops, deltaOp{C: []int{op.B0, op.B1}})
		case linediff.Delete:
			ops = append(ops, deltaOp{I: strings.Join(c.old[op.A0:op.A1], "")})
		}
	}
	return ops
}

// shape is the delta's ops with the lines added counted, not given (a whole record's Next).
func (c change) shape() []deltaOp {
	var ops []deltaOp
	for _, op := range c.ops {
		switch op.Kind {
		case linediff.Equal:
			ops = append(ops, deltaOp{C: []int{op.B0, op.B1}})
		case linediff.Delete:
			ops = append(ops, deltaOp{N: op.A1 - op.A0})
		}
	}
	return ops
}

// rebuild applies a delta record to the next version's lines (of its text with a final
// line break), giving the record's own in out's array when it is large enough (out's
// lines are overwritten: it may be the array of the step before next). Lines are
// shared, not copied, so a chain of deltas costs two slices of string headers, used in
// turn, whatever its length.
func rebuild(r record, next, out []string) ([]string, error) {
	if n := opLines(r.Ops); cap(out) < n {
		out = make([]string, 0, n)
	}
	out = out[:0]
	for _, op := range r.Ops {
		if op.C == nil {
			out = append(out, linediff.Lines(op.I)...)
			continue
		}
		if len(op.C) != 2 || op.C[0] < 0 || op.C[0] > op.C[1] || op.C[1] > len(next) {
			return nil, fmt.Errorf("the delta of version %d copies lines %v of %d", r.Number, op.C, len(next))
		}
		out = append(out, next[op.C[0]:op.C[1]]...)
	}
	return out, nil
}

// opLines is how many lines a delta's ops make (its version's lines, given that every
// copy is within the next version's).
func opLines(ops []deltaOp) int {
	n := 0
	for _, op := range ops {
		if op.C == nil {
			n += strings.Count(op.I, "\n")
			if op.I != "" && !strings.HasSuffix(op.I, "\n") {
				n++
			}
			continue
		}
		if len(op.C) == 2 && op.C[1] > op.C[0] {
			n += op.C[1] - op.C[0]
		}
	}
	return n
}

// textOf is the text a record's lines make.
func textOf(r record, lines []string) string {
	text := strings.Join(lines, "")
	if r.NoEOL {
		text = strings.TrimSuffix(text, "\n")
	}
	return text
}

// recordOf is version n of document id from raw, as stored (nil: not found), its text too
// when text is true.
func recordOf(id string, n int, raw []byte, text bool) (record, error) {
	if raw == nil {
		return record{}, fmt.Errorf("document %s has no record of version %d", id, n)
	}
	r, err := decode(raw, text)
	if err != nil {
		return record{}, fmt.Errorf("reading version %d of document %s: %w", n, id, err)
	}
	return r, nil
}

// versionKeys are where a document's versions are: keys <id><n> of the versions bucket,
// or, in files written before, keys <n> of a bucket of its own (a nested bucket takes a
// 4 KB page of its own once it holds more than 1 KB, so 10,000 small documents took 50 MB).
type versionKeys struct {
	b      kv.Bucket
	prefix []byte // the document's id; nil in a bucket of its own
}

func (vk versionKeys) key(n int) []byte {
	return append(append(make([]byte, 0, len(vk.prefix)+8), vk.prefix...), versionKey(n)...)
}

// getAll reads the records of versions lo to hi at once, as stored (nil: not found).
func (vk versionKeys) getAll(lo, hi int) [][]byte {
	if lo > hi {
		return nil
	}
	ks := make([][]byte, 0, hi-lo+1)
	for n := lo; n <= hi; n++ {
		ks = append(ks, vk.key(n))
	}
	return kv.GetAll(vk.b, ks)
}

func (vk versionKeys) put(n int, raw []byte) error { return vk.b.Put(vk.key(n), raw) }

// purge deletes every version.
func (vk versionKeys) purge() error {
	if vk.prefix == nil {
		return nil // the caller deletes the bucket itself
	}
	c := vk.b.Cursor()
	for k, _ := c.Seek(vk.prefix); k != nil && len(k) == len(vk.prefix)+8 && string(k[:len(vk.prefix)]) == string(vk.prefix); k, _ = c.Seek(vk.prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// versionBucket is where document id's versions are: in a bucket of its own if it has one,
// else under its keys of the versions bucket.
func (b *buckets) versionBucket(id string) (versionKeys, error) {
	if vb, ok := b.where[id]; ok {
		return vb, nil
	}
	if b.versions == nil {
		return versionKeys{}, fmt.Errorf("document %s has no versions", id)
	}
	vb := versionKeys{b: b.versions, prefix: []byte(id)}
	if own := b.versions.Bucket([]byte(id)); own != nil {
		vb = versionKeys{b: own}
	}
	b.found(id, vb)
	return vb, nil
}

// found notes where document id's versions are, for versionBucket.
func (b *buckets) found(id string, vb versionKeys) {
	if b.where == nil {
		b.where = map[string]versionKeys{}
	}
	b.where[id] = vb
}

// records reads the records of versions lo to hi of document id at once, as stored (nil:
// not found; none when lo > hi), and says where its versions are. Every document written
// since versions had keys of the versions bucket has its records there, where they are
// read first: one found says so, and only when none is does it look for a bucket of the
// document's own (versionBucket), which a key of the versions bucket would not tell.
func (b *buckets) records(id string, lo, hi int) (versionKeys, [][]byte, error) {
	if vb, ok := b.where[id]; ok {
		return vb, vb.getAll(lo, hi), nil
	}
	vb := versionKeys{b: b.versions, prefix: []byte(id)}
	raws := vb.getAll(lo, hi)
	if slices.ContainsFunc(raws, func(raw []byte) bool { return raw != nil }) {
		b.found(id, vb)
		return vb, raws, nil
	}
	vb, err := b.versionBucket(id)
	if err != nil || vb.prefix != nil {
		return vb, raws, err
	}
	return vb, vb.getAll(lo, hi), nil
}

// latest reads the latest versions of docs, their records read at once, in their order.
func (b *buckets) latest(docs []Document) ([]Version, error) {
	ks := make([][]byte, len(docs))
	for i, d := range docs {
		ks[i] = versionKeys{prefix: []byte(d.ID)}.key(d.Version)
	}
	raws := kv.GetAll(b.versions, ks)
	out := make([]Version, len(docs))
	for i, d := range docs {
		vb, raw := versionKeys{b: b.versions, prefix: []byte(d.ID)}, raws[i]
		if raw != nil {
			b.found(d.ID, vb)
		} else {
			var rs [][]byte
			var err error
			if vb, rs, err = b.records(d.ID, d.Version, d.Version); err != nil {
				return nil, err
			}
			raw = rs[0]
		}
		v, err := b.versionFrom(vb, d.ID, d.Version, raw)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// version reads version n of document id, rebuilding it from the nearest whole version
// after it.
func (b *buckets) version(id string, n int) (Version, error) {
	vb, raws, err := b.records(id, n, n)
	if err != nil {
		return Version{}, err
	}
	return b.versionFrom(vb, id, n, raws[0])
}

// versionFrom is version n of document id from its record raw, as stored (nil: not found),
// and the rest of the chain of deltas from it, read at once up to the next version due to
// be kept whole (putVersion; keys past the latest are simply not found), and on from there
// if it is not.
func (b *buckets) versionFrom(vb versionKeys, id string, n int, raw []byte) (Version, error) {
	r, err := recordOf(id, n, raw, true)
	if err != nil {
		return Version{}, err
	}
	if !r.Delta {
		return r.Version, nil
	}
	chain := []record{r}
	var ahead [][]byte // the records of versions k on, read
	for k := n + 1; ; k++ {
		if len(ahead) == 0 {
			ahead = vb.getAll(k, (k+snapshotEvery-1)/snapshotEvery*snapshotEvery)
		}
		r, err := recordOf(id, k, ahead[0], true)
		if err != nil {
			return Version{}, err
		}
		ahead = ahead[1:]
		chain = append(chain, r)
		if !r.Delta {
			break
		}
	}
	lines := linediff.Lines(eol(chain[len(chain)-1].Text))
	var spare []string
	for i := len(chain) - 2; i >= 0; i-- {
		out, err := rebuild(chain[i], lines, spare)
		if err != nil {
			return Version{}, err
		}
		lines, spare = out, lines
	}
	v := chain[0].Version
	v.Text = textOf(chain[0], lines)
	return v, nil
}

// linesFrom is version n of document id as lines (linediff.Lines of its text), from its
// record raw as stored (nil: not found), and the version kept whole it was rebuilt from
// (itself, when it is kept whole), as lines too: versionFrom without joining the lines
// into a text. Each step of a chain of deltas fills one of two arrays of line headers in
// turn; the whole version's lines are left as they are, for the caller.
func (b *buckets) linesFrom(vb versionKeys, id string, n int, raw []byte) (v, whole versionLines, err error) {
	r, err := recordOf(id, n, raw, true)
	if err != nil {
		return v, whole, err
	}
	if !r.Delta {
		whole = versionLines{Version: r.Version, lines: linediff.Lines(r.Text)}
		whole.Text = ""
		return whole, whole, nil
	}
	chain := []record{r}
	var ahead [][]byte
	for k := n + 1; ; k++ {
		if len(ahead) == 0 {
			ahead = vb.getAll(k, (k+snapshotEvery-1)/snapshotEvery*snapshotEvery)
		}
		r, err := recordOf(id, k, ahead[0], true)
		if err != nil {
			return v, whole, err
		}
		ahead = ahead[1:]
		chain = append(chain, r)
		if !r.Delta {
			break
		}
	}
	last := chain[len(chain)-1]
	whole = versionLines{Version: last.Version, lines: linediff.Lines(last.Text)}
	whole.Text = ""
	next := whole.lines
	if last.Text != "" && !strings.HasSuffix(last.Text, "\n") {
		next = linediff.Lines(eol(last.Text)) // the deltas count its last line with a break
	}
	var spare []string
	for i := len(chain) - 2; i >= 0; i-- {
		out, err := rebuild(chain[i], next, spare)
		if err != nil {
			return v, whole, err
		}
		if i < len(chain)-2 {
			spare = next // never the whole version's: the caller keeps those
		}
		next = out
	}
	if r := chain[0]; r.NoEOL && len(next) > 0 {
		next[len(next)-1] = strings.TrimSuffix(next[len(next)-1], "\n")
	}
	v = versionLines{Version: chain[0].Version, lines: next}
	v.Text = ""
	return v, whole, nil
}

// span calls fn with versions hi down to lo of document id, texts included, rebuilding
// each from the one after it: the whole run costs one delta a version, its records read
// at once.
func (b *buckets) span(id string, lo, hi int, fn func(Version) error) error {
	if lo > hi {
		return nil
	}
	vb, raws, err := b.records(id, lo, hi)
	if err != nil {
		return err
	}
	v, err := b.versionFrom(vb, id, hi, raws[hi-lo])
	if err != nil {
		return err
	}
	if err := fn(v); err != nil {
		return err
	}
	next := linediff.Lines(eol(v.Text))
	var spare []string
	for k := hi - 1; k >= lo; k-- {
		r, err := recordOf(id, k, raws[k-lo], true)
		if err != nil {
			return err
		}
		if r.Delta {
			out, err := rebuild(r, next, spare)
			if err != nil {
				return err
			}
			next, spare = out, next
			r.Text = textOf(r, next)
		} else {
			next = linediff.Lines(eol(r.Text))
		}
		if err := fn(r.Version); err != nil {
			return err
		}
	}
	return nil
}

// putVersion stores v whole and, unless it is due to stay whole, turns the version before
// it (prev, with the change c from it to v) into a delta.
func (b *buckets) putVersion(vb versionKeys, v Version, prev *Version, c change) error {
	raw, err := encodeRecord(record{Version: v})
	if err != nil {
		return err
	}
	if err := vb.put(v.Number, raw); err != nil {
		return err
	}
	if prev == nil {
		return nil
	}
	if prev.Number%snapshotEvery == 0 {
		// prev stays whole; its Next lets blame pass it without diffing two whole texts.
		if raw, err = encodeRecord(record{Version: *prev, Next: c.shape()}); err != nil {
			return err
		}
		return vb.put(prev.Number, raw)
	}
	r := record{Version: *prev, Delta: true, Ops: c.delta(), NoEOL: prev.Text != "" && !strings.HasSuffix(prev.Text, "\n")}
	r.Text = ""
	if raw, err = encodeRecord(r); err != nil {
		return err
	}
	return vb.put(prev.Number, raw)
}

// A record is stored as recordMark, the length of its header (uvarint), the header (the
// record as JSON, its text left out) and the text's bytes as they are: a 100 KB text is
// neither escaped nor unescaped on every save and read. A value that starts with '{'
// is a record of the layout before, JSON whole, and reads as it did.
const recordMark = 0x01

func encodeRecord(r record) ([]byte, error) {
	text := r.Text
	r.Text = ""
	hdr, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 0, 1+binary.MaxVarintLen64+len(hdr)+len(text))
	raw = append(raw, recordMark)
	raw = binary.AppendUvarint(raw, uint64(len(hdr)))
	raw = append(raw, hdr...)
	return append(raw, text...), nil
}

// decode reads a record, its text too when text is true: a header alone doesn't touch (or
// copy) the text's bytes, which for a whole version are megabytes.
func decode(raw []byte, text bool) (record, error) {
	var r record
	if len(raw) > 0 && raw[0] == '{' {
		err := json.Unmarshal(raw, &r)
		return r, err
	}
	r, body, err := decodeHeader(raw)
	if err != nil {
		return r, err
	}
	if text {
		r.Text = string(body)
	}
	return r, nil
}

// decodeHeader reads a record of recordMark's layout but for its text, and returns the
// text's bytes as they are in raw.
func decodeHeader(raw []byte) (record, []byte, error) {
	var r record
	if len(raw) == 0 || raw[0] != recordMark {
		return r, nil, fmt.Errorf("a version record of an unknown layout")
	}
	n, k := binary.Uvarint(raw[1:])
	if k <= 0 || uint64(len(raw)-1-k) < n {
		return r, nil, fmt.Errorf("a version record cut short")
	}
	body := raw[1+k:]
	if err := json.Unmarshal(body[:n], &r); err != nil {
		return r, nil, err
	}
	return r, body[n:], nil
}
