package docstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The inbox is what waits for a person: every open proposal made for them (an agent's
// change with Author.For naming them) and every open comment an agent made asking them
// (Comment.Asks), in the documents of the spaces they are members of, newest first.
// Proposals and comments for nobody in particular (an agent serving without --for) wait
// for every member of the space.
//
// Each space keeps an index of them, written in the transaction that opens or closes the
// proposal or comment (and that deletes or brings back its document), keyed by whom it
// waits for and when it was made, and a count for each, so that a page of the inbox reads
// a page's worth of keys in each space however many items wait, and the count a page's
// header shows is one key a space. A store written before the index has none: Inbox
// finds it not built, and View builds it (a pass over the open proposals and comments).

// Limits on a read of the inbox.
const (
	// InboxPage is the most items one read of the inbox returns.
	InboxPage = 100
	// InboxGist is how many of an item's first lines Inbox gives (a proposal's added
	// lines, a comment's text), and InboxGistBytes how long each may be.
	InboxGist      = 3
	InboxGistBytes = 200
)

const (
	bucketInbox  = "doc_inbox"   // <who>0<at ns, 8 bytes><id><kind><n, 8 bytes>: nothing; what waits for whom
	bucketInboxN = "doc_inbox_n" // n<who>: how many wait for them (8 bytes); inboxBuilt: the index is built
)

// inboxBuilt is the key that says the space's inbox index is built. No actor's key starts
// with a zero byte.
var inboxBuilt = []byte{0, 'b', 'u', 'i', 'l', 't'}

// The kinds of item an inbox key names.
const (
	inboxProposal = 'p'
	inboxComment  = 'c'
)

// InboxItem is an open proposal or comment waiting for the person.
type InboxItem struct {
	Space    string
	Document Document
	// Proposal or Comment is set: the item. A proposal's Text is left out.
	Proposal *Proposal
	Comment  *Comment
	At       time.Time
	// Gist is the item's first lines that aren't blank: a proposal's first added lines (or, when it only
	// removes lines, none), a comment's text; each at most InboxGistBytes.
	Gist []string
	// Mine is whether it waits for the person by name (else for anyone of the space).
	Mine bool
}

// Inbox is one page of what waits for a person.
type Inbox struct {
	Items []InboxItem
	// Count is how many wait in all, in the spaces read.
	Count int
	// Next is the position of the page after this one (InboxAfter), "" on the last.
	Next string
}

// ErrBadPosition is returned by Inbox for a position that no page of the inbox gave.
var ErrBadPosition = errors.New("not a position in the inbox")

// waitsFor is whom proposal p waits for: its agent's person ("" for anyone).
func (p Proposal) waitsFor() string { return p.Author.For }

// waitsFor is whom comment c waits for, and whether it waits at all: an agent's comment
// waits for the person it asks ("" for anyone); a person's comment waits for no person.
func (c Comment) waitsFor() (string, bool) {
	if c.ReplyTo != 0 || c.Resolved != nil || !strings.HasPrefix(c.Author.By, "agent:") {
		return "", false
	}
	return c.Asks, true
}

func inboxKey(who string, at time.Time, id string, kind byte, n int) []byte {
	k := make([]byte, 0, len(who)+1+8+len(id)+1+8)
	k = append(append(k, who...), 0)
	k = binary.BigEndian.AppendUint64(k, uint64(at.UnixNano()))
	k = append(append(k, id...), kind)
	return binary.BigEndian.AppendUint64(k, uint64(n))
}

// inboxMark adds (or, with add false, removes) an inbox key, keeping who's count.
func (b *buckets) inboxMark(who string, at time.Time, id string, kind byte, n int, add bool) error {
	idx, err := b.reviewSub(bucketInbox)
	if err != nil {
		return err
	}
	counts, err := b.reviewSub(bucketInboxN)
	if err != nil {
		return err
	}
	// An item is added once, when it is made (its number is new), and removed once, when
	// it is decided, resolved or its document deleted: the key need not be read first. (A
	// store whose index is not built yet is rebuilt whole, counts and all.)
	key := inboxKey(who, at, id, kind, n)
	delta := 1
	if add {
		err = idx.Put(key, nil)
	} else {
		err, delta = idx.Delete(key), -1
	}
	if err != nil {
		return fmt.Errorf("keeping the inbox of %s: %w", who, err)
	}
	c := max(inboxCountOf(counts.Get(countKey(who)))+delta, 0)
	if c == 0 {
		return counts.Delete(countKey(who))
	}
	return counts.Put(countKey(who), binary.BigEndian.AppendUint64(nil, uint64(c)))
}

// countKey is who's count's key: "n" and who ("n" alone for anyone's).
func countKey(who string) []byte { return append([]byte{'n'}, who...) }

func inboxCountOf(raw []byte) int {
	if len(raw) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(raw))
}

// inboxProposalMark adds or removes proposal p of document id.
func (b *buckets) inboxProposalMark(id string, p Proposal, add bool) error {
	return b.inboxMark(p.waitsFor(), p.At, id, inboxProposal, p.Number, add)
}

// inboxCommentMark adds or removes comment c of document id, if it is one that waits.
func (b *buckets) inboxCommentMark(id string, c Comment, add bool) error {
	who, ok := c.waitsFor()
	if !ok && add {
		return nil
	}
	if !ok { // resolved: it waited for whom it asked, if an agent made it
		if c.ReplyTo != 0 || !strings.HasPrefix(c.Author.By, "agent:") {
			return nil
		}
		who = c.Asks
	}
	return b.inboxMark(who, c.At, id, inboxComment, c.Number, add)
}

// inboxDoc adds (or removes) every open proposal and comment of d: when d is brought back
// (or deleted), and when the index is built.
func (b *buckets) inboxDoc(d Document, add bool) error {
	if d.Review == nil || (d.Review.Open == 0 && d.Review.Unresolved == 0) {
		return nil
	}
	for _, x := range []struct {
		bucket string
		kind   byte
	}{{bucketOpen, inboxProposal}, {bucketUnresolved, inboxComment}} {
		bk, err := b.reviewSub(x.bucket)
		if err != nil || bk == nil {
			return err
		}
		var nums []int
		c := bk.Cursor()
		prefix := []byte(d.ID)
		for k, _ := c.Seek(prefix); k != nil && len(k) == len(prefix)+8 && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			nums = append(nums, int(binary.BigEndian.Uint64(k[len(prefix):])))
		}
		if x.kind == inboxProposal {
			raws, err := b.numbered(bucketProposals, d.ID, nums)
			if err != nil {
				return err
			}
			for i, n := range nums {
				p, err := b.proposalFrom(d, n, raws[i], false)
				if err != nil {
					return err
				}
				if err := b.inboxProposalMark(d.ID, p, add); err != nil {
					return err
				}
			}
			continue
		}
		raws, err := b.numbered(bucketComments, d.ID, nums)
		if err != nil {
			return err
		}
		for i, n := range nums {
			cm, err := commentOf(d, n, raws[i])
			if err != nil {
				return err
			}
			if err := b.inboxCommentMark(d.ID, cm, add); err != nil {
				return err
			}
		}
	}
	return nil
}

// inboxIndex is the space's inbox buckets; built says whether the index is built.
type inboxIndex struct{ idx, counts kv.Bucket }

func (x inboxIndex) built() bool { return x.counts != nil && x.counts.Get(inboxBuilt) != nil }

func (b *buckets) inboxIndex() (inboxIndex, error) {
	idx, err := b.reviewSub(bucketInbox)
	if err != nil {
		return inboxIndex{}, err
	}
	counts, err := b.reviewSub(bucketInboxN)
	return inboxIndex{idx: idx, counts: counts}, err
}

// EnsureInbox builds the space's inbox index if it isn't built (a store written before
// it): View does when a read finds it missing.
func (s *Store) EnsureInbox(ctx context.Context) error {
	return ensureBuilt(ctx, s, (*buckets).inboxIndex, inboxIndex.built, func(b *buckets, x inboxIndex) error {
		for _, bk := range []kv.Bucket{x.idx, x.counts} {
			if err := emptyBucket(bk); err != nil {
				return err
			}
		}
		if err := b.eachDoc(func(d Document) error {
			if d.Deleted != nil {
				return nil
			}
			return b.inboxDoc(d, true)
		}); err != nil {
			return fmt.Errorf("building the inbox index of space %s: %w", s.space, err)
		}
		return x.counts.Put(inboxBuilt, []byte{1})
	})
}

// inbox is the space's inbox index; not built, errUnbuilt (View builds it and reads again).
func (r *Reader) inbox() (inboxIndex, error) {
	x, _ := r.b.inboxIndex()
	if !x.built() {
		r.unbuilt.add(indexInbox, r.b.space)
		return x, errUnbuilt
	}
	return x, nil
}

// inboxes is the inbox index of each space named; when one isn't built, errUnbuilt, every
// space not built noted, so that View builds them all before it reads again.
func (r *Reader) inboxes(in []string) ([]inboxIndex, error) {
	out := make([]inboxIndex, len(in))
	var missing error
	for i, sp := range in {
		var err error
		if out[i], err = r.In(sp).inbox(); err != nil {
			missing = err
		}
	}
	return out, missing
}

// waitingFor is the keys an inbox read looks under for person: theirs, and anyone's.
func waitingFor(person string) []string { return []string{spaces.Person(person).String(), ""} }

// InboxCount is how many items wait for person in the spaces named (r's, and others read
// In r's snapshot): three keys a space, read at once (kv.GetAll), whatever the count. It
// reads only the counts, not the index (Inbox does).
func (r *Reader) InboxCount(person string, in []string) (int, error) {
	each, err := r.SpaceCounts(person, in, false)
	total := 0
	for _, c := range each {
		total += c.Waiting
	}
	return total, err
}

// SpaceCount is what a space holds for a person at a glance: its documents, and what
// waits for them there.
type SpaceCount struct {
	Space     string
	Documents int // not deleted; 0 unless asked for
	Waiting   int
}

// SpaceCounts is InboxCount space by space, in the order named, with each space's number
// of documents too when docs is set (one key more a space): what the page's space switcher
// shows.
func (r *Reader) SpaceCounts(person string, in []string, docs bool) ([]SpaceCount, error) {
	keys := [][]byte{inboxBuilt}
	for _, who := range waitingFor(person) {
		keys = append(keys, countKey(who))
	}
	out := make([]SpaceCount, len(in))
	var missing error
	for i, sp := range in {
		out[i].Space = sp
		rd := r.In(sp)
		if docs {
			out[i].Documents = rd.b.count()
		}
		counts, err := rd.b.reviewSub(bucketInboxN)
		if err != nil {
			return nil, err
		}
		got := kv.GetAll(counts, keys)
		if got[0] == nil {
			rd.unbuilt.add(indexInbox, sp)
			missing = errUnbuilt
			continue
		}
		for _, raw := range got[1:] {
			out[i].Waiting += inboxCountOf(raw)
		}
	}
	return out, missing
}

// inboxAt is a key found by an inbox read: in which space, for whom, and its position
// (the key after <who>0), which orders items across spaces.
type inboxAt struct {
	space, who string
	pos        []byte
}

// Inbox returns what waits for person in the spaces named (read In r's snapshot; a space
// the person is not a member of must not be named: the caller asks access), newest first,
// at most limit items (at most InboxPage) older than position after ("" for the newest:
// the Next of the page before). Its cost is that of limit items in each space, whatever
// waits. It returns ErrBadPosition for a position no page gave.
func (r *Reader) Inbox(person string, in []string, after string, limit int) (Inbox, error) {
	limit = min(max(limit, 1), InboxPage)
	var before []byte
	if after != "" {
		var err error
		if before, err = hex.DecodeString(after); err != nil || len(before) < 8+1+8+1 || len(before) > 8+64+1+8 {
			return Inbox{}, ErrBadPosition
		}
	}
	var (
		out   Inbox
		found []inboxAt
	)
	xs, err := r.inboxes(in)
	if err != nil {
		return Inbox{}, err
	}
	for i, sp := range in {
		x := xs[i]
		for _, who := range waitingFor(person) {
			out.Count += inboxCountOf(x.counts.Get(countKey(who)))
			prefix := append([]byte(who), 0)
			c := x.idx.Cursor()
			var k []byte
			if before == nil {
				k, _ = c.Seek(append([]byte(who), 1))
			} else {
				k, _ = c.Seek(append(slices.Clip(prefix), before...))
			}
			if k == nil {
				k, _ = c.Last()
			} else {
				k, _ = c.Prev()
			}
			for got := 0; k != nil && got <= limit && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
				found = append(found, inboxAt{space: sp, who: who, pos: bytes.Clone(k[len(prefix):])})
				got++
			}
		}
	}
	slices.SortFunc(found, func(a, b inboxAt) int { return bytes.Compare(b.pos, a.pos) })
	if len(found) > limit {
		found = found[:limit]
		out.Next = hex.EncodeToString(found[limit-1].pos)
	}
	for _, f := range found {
		it, err := r.In(f.space).inboxItem(f)
		if err != nil {
			return Inbox{}, err
		}
		it.Mine = f.who != ""
		out.Items = append(out.Items, it)
	}
	return out, nil
}

// inboxItem reads the item an inbox key names.
func (r *Reader) inboxItem(f inboxAt) (InboxItem, error) {
	pos := f.pos
	if len(pos) < 8+1+8 {
		return InboxItem{}, fmt.Errorf("an inbox key of space %s is %d bytes long", f.space, len(pos))
	}
	id := string(pos[8 : len(pos)-9])
	kind := pos[len(pos)-9]
	n := int(binary.BigEndian.Uint64(pos[len(pos)-8:]))
	d, ok, err := r.b.doc(id)
	if err != nil {
		return InboxItem{}, err
	}
	if !ok {
		return InboxItem{}, fmt.Errorf("the inbox of space %s names document %s, which it doesn't have", f.space, id)
	}
	it := InboxItem{Space: f.space, Document: d}
	switch kind {
	case inboxProposal:
		raws, err := r.b.numbered(bucketProposals, id, []int{n})
		if err != nil {
			return it, err
		}
		if raws[0] == nil {
			return it, fmt.Errorf("the inbox of space %s names proposal %d of %s, which has no record", f.space, n, id)
		}
		p, _, err := decodeProposal(raws[0], false)
		if err != nil {
			return it, err
		}
		it.Proposal, it.At = &p, p.At
		it.Gist = proposalGist(raws[0])
	case inboxComment:
		c, err := r.b.comment(d, n)
		if err != nil {
			return it, err
		}
		it.Comment, it.At = &c, c.At
		it.Gist = gist(nil, c.Text)
	default:
		return it, fmt.Errorf("an inbox key of space %s has kind %q", f.space, kind)
	}
	return it, nil
}

// gistScan is how much of each text a proposal adds its gist decodes, and gistInserts how
// many of its additions it looks at: a gist costs the same for a proposal of 8 MiB.
const (
	gistScan    = 4 << 10
	gistInserts = 8
)

// proposalGist is a stored proposal's first added lines that aren't blank (at most
// InboxGist), read from the start of each text its ops add, without decoding the ops whole.
// In its JSON, `"i":"` is only ever a key: inside a string a quote is escaped.
func proposalGist(raw []byte) []string {
	var lines []string
	key := []byte(`"i":"`)
	n, k := binary.Uvarint(raw[1:]) // decodeProposal read it: the ops are after the header
	if len(raw) == 0 || k <= 0 || uint64(len(raw)-1-k) < n {
		return nil
	}
	rest := raw[1+k+int(n):]
	for range gistInserts {
		at := bytes.Index(rest, key)
		if at < 0 || len(lines) == InboxGist {
			break
		}
		rest = rest[at+len(key):]
		s := rest[:min(len(rest), gistScan)]
		end, esc := len(s), -1
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' {
				esc = i
				i++
				continue
			}
			if s[i] == '"' {
				end = i
				break
			}
		}
		part, cut := s[:end], end == len(s)
		if cut && esc >= 0 { // not in the middle of an escape
			need := 2
			if esc+1 < len(s) && s[esc+1] == 'u' {
				need = 6
			}
			if esc+need > len(s) {
				part = part[:esc]
			}
		}
		var text string
		if json.Unmarshal(append(append([]byte{'"'}, part...), '"'), &text) != nil {
			break
		}
		if i := strings.LastIndexByte(text, '\n'); cut && i >= 0 {
			text = text[:i+1] // its last line cut short: left out
		}
		lines = gist(lines, text)
		if cut {
			break // the lines after it, in its rest and in later texts, come after what it cut
		}
		rest = rest[end:]
	}
	return lines
}

// gist adds text's first lines that aren't blank to lines, up to InboxGist of them.
func gist(lines []string, text string) []string {
	for l := range strings.Lines(text) {
		if len(lines) == InboxGist {
			break
		}
		if l = strings.TrimRight(l, "\r\n"); strings.TrimSpace(l) != "" {
			lines = append(lines, cutBytes(l, InboxGistBytes))
		}
	}
	return lines
}

// cutBytes cuts s to at most n bytes, on a rune's boundary, with "…" when it cut.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
