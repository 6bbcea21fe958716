package docstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// Comments are on lines of a version: the person's (the page, docs comment) or an agent's
// (comment_document), each the first of a thread that replies continue, until it is
// resolved. A comment stays on its lines as the text changes: every new version carries the
// open comments' line ranges through its line diff (in put, in the same transaction), and a
// comment whose lines are all removed (or all changed) is outdated, shown with the text it
// was about. Where each open comment is in the latest version is kept in one record a
// document, so a save reads and writes one key however many comments there are.

// Limits on comments, so that a document's comments cost a bounded share of each save and
// each read.
const (
	// MaxComment is the longest comment or reply, in bytes.
	MaxComment = 4000
	// MaxQuote is how much of the lines a comment is on it keeps, in bytes, to show when
	// they are gone.
	MaxQuote = 2000
	// MaxOpenComments is how many comments (not replies) a document may have unresolved.
	MaxOpenComments = 1000
	// MaxReplies is how many replies one comment may have.
	MaxReplies = 100
)

// Comment is a comment on lines of a document, or a reply to one.
type Comment struct {
	Number  int `json:"n"`
	ReplyTo int `json:"reply_to,omitempty"` // the comment it replies to; 0 for a comment on lines
	// Version, From and To are the lines it was made on (1-based, both included), as of
	// that version; a reply has its comment's.
	Version  int       `json:"version,omitempty"`
	From     int       `json:"from,omitempty"`
	To       int       `json:"to,omitempty"`
	Quote    string    `json:"quote,omitempty"` // those lines' text, at most MaxQuote bytes
	QuoteCut bool      `json:"quote_cut,omitempty"`
	Text     string    `json:"text"`
	Author   Author    `json:"author"`
	Asks     string    `json:"asks,omitempty"` // who it asks: the agent a person's comment names, or the person an agent's asks
	At       time.Time `json:"at"`
	Replies  []int     `json:"replies,omitempty"` // its replies' numbers, oldest first
	// Resolved says who resolved it and when; Outdated, the version that removed its lines.
	Resolved *Resolution `json:"resolved,omitempty"`
	Outdated int         `json:"outdated,omitempty"`
}

// Resolution is who resolved a comment, and when.
type Resolution struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// Thread is a comment with its replies, and where its lines are in the version asked for.
type Thread struct {
	Comment
	Replies []Comment // the latest few, oldest first
	More    int       // replies not in Replies
	// Lines is where the comment is now: 1-based, both included, in the version read; zero
	// when it is outdated (or its lines aren't in that version).
	Lines LineRange
}

var (
	// ErrNoComment is returned (wrapped, with the number) for a comment a document doesn't have.
	ErrNoComment = errors.New("no such comment")
	// ErrBadComment is returned (wrapped, with the reason) for a comment's text that is
	// empty, too long, or not plain text.
	ErrBadComment = errors.New("bad comment")
	// ErrResolved is returned (wrapped) for a reply to, or a resolve of, a resolved comment.
	ErrResolved = errors.New("the comment is resolved")
	// ErrTooManyComments is returned when a document has MaxOpenComments unresolved
	// comments, or a comment MaxReplies replies.
	ErrTooManyComments = errors.New("too many comments")
	// ErrNotYours is returned by Resolve when who may not resolve the comment: a person
	// may resolve any; an agent only its own (a person's comment is the person's to
	// resolve, never an agent's on their behalf).
	ErrNotYours = errors.New("only a person, or the agent that wrote it, may resolve a comment")
)

const (
	bucketComments   = "doc_comments"   // <id><n>: a comment or a reply (Comment, JSON)
	bucketUnresolved = "doc_unresolved" // <id><n>: nothing; the comments not resolved
	bucketAnchors    = "doc_anchors"    // <id>: where the open comments not outdated are in the latest version
)

func init() {
	reviewBuckets = append(reviewBuckets, bucketComments, bucketUnresolved, bucketAnchors)
}

// anchor is an open comment's lines in the latest version: 0-based, [From, To).
type anchor struct {
	N    int `json:"n"`
	From int `json:"f"`
	To   int `json:"t"`
}

func checkComment(text string) (string, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return "", fmt.Errorf("%w: it is empty", ErrBadComment)
	case len(text) > MaxComment:
		return "", fmt.Errorf("%w: a comment is at most %d bytes; this one has %d", ErrBadComment, MaxComment, len(text))
	case !utf8.ValidString(text) || strings.ContainsFunc(text, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }):
		return "", fmt.Errorf("%w: a comment is plain text, without control characters", ErrBadComment)
	}
	return text, nil
}

func (b *buckets) anchors(id string) ([]anchor, error) {
	bk, err := b.reviewSub(bucketAnchors)
	if err != nil || bk == nil {
		return nil, err
	}
	raw := bk.Get([]byte(id))
	if raw == nil {
		return nil, nil
	}
	var as []anchor
	if err := json.Unmarshal(raw, &as); err != nil {
		return nil, fmt.Errorf("reading where the comments of %s are: %w", id, err)
	}
	return as, nil
}

func (b *buckets) putAnchors(id string, as []anchor) error {
	bk, err := b.reviewSub(bucketAnchors)
	if err != nil {
		return err
	}
	if len(as) == 0 {
		return bk.Delete([]byte(id))
	}
	raw, err := json.Marshal(as)
	if err != nil {
		return err
	}
	return bk.Put([]byte(id), raw)
}

func (b *buckets) comment(d Document, n int) (Comment, error) {
	raws, err := b.numbered(bucketComments, d.ID, []int{n})
	if err != nil {
		return Comment{}, err
	}
	return commentOf(d, n, raws[0])
}

// commentOf is d's comment n from raw, as stored (nil: not found).
func commentOf(d Document, n int, raw []byte) (Comment, error) {
	if raw == nil {
		return Comment{}, fmt.Errorf("%w: %s has no comment %d", ErrNoComment, d.Title, n)
	}
	var c Comment
	if err := json.Unmarshal(raw, &c); err != nil {
		return Comment{}, fmt.Errorf("reading comment %d of %s: %w", n, d.ID, err)
	}
	return c, nil
}

func (b *buckets) putComment(id string, c Comment) error {
	bk, err := b.reviewSub(bucketComments)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return bk.Put(idKey(id, c.Number), raw)
}

// moveComments carries d's open comments through the change c from the version before to
// version v (put calls it with every new version): each keeps the lines that are still
// there; one whose lines are all gone is outdated at v.
func (b *buckets) moveComments(d *Document, v Version, c change) error {
	if d.Review == nil || d.Review.Unresolved == 0 {
		return nil
	}
	as, err := b.anchors(d.ID)
	if err != nil || len(as) == 0 {
		return err
	}
	if c.ops == nil {
		return nil // a change that leaves the lines as they are (a rename)
	}
	kept := as[:0]
	for _, a := range as {
		from, to, ok := carry(c.ops, a.From, a.To)
		if ok {
			kept = append(kept, anchor{N: a.N, From: from, To: to})
			continue
		}
		cm, err := b.comment(*d, a.N)
		if err != nil {
			return err
		}
		cm.Outdated = v.Number
		if err := b.putComment(d.ID, cm); err != nil {
			return err
		}
	}
	return b.putAnchors(d.ID, kept)
}

// shared is a run of lines two texts share: lines [src, src+n) of the one are [dst, dst+n)
// of the other.
type shared struct{ src, dst, n int }

// span carries lines [from, to) of one text to another by the runs of lines they share:
// from the first of those lines still there to the last (the lines put between them
// included). ok is false when none is still there. Runs in the order of src (sorted) end
// the walk at the first past to. It is the one line-range walk of carry, forward and
// backward.
func span(runs iter.Seq[shared], from, to int, sorted bool) (first, last int, ok bool) {
	first, last = -1, -1
	for r := range runs {
		if sorted && r.src >= to {
			break
		}
		if lo, hi := max(r.src, from), min(r.src+r.n, to); lo < hi {
			if first < 0 || r.dst+lo-r.src < first {
				first = r.dst + lo - r.src
			}
			last = max(last, r.dst+hi-r.src)
		}
	}
	return first, last, first >= 0
}

// carry finds where lines [from, to) of the old text are in the new, by the diff ops (span
// over their equal runs, from the first that reaches past from).
func carry(ops []linediff.Op, from, to int) (int, int, bool) {
	i, _ := slices.BinarySearchFunc(ops, from, func(op linediff.Op, line int) int {
		if op.A1 <= line {
			return -1
		}
		return 1
	})
	return span(func(yield func(shared) bool) {
		for _, op := range ops[i:] {
			if op.Kind == linediff.Equal && !yield(shared{op.A0, op.B0, op.A1 - op.A0}) {
				return
			}
		}
	}, from, to, true)
}

// forward carries lines [from, to) of version k to version k+1 by the record of version k
// (ops that build k from k+1): the same as carry, read the other way.
func forward(ops []deltaOp, from, to int) (int, int, bool) {
	return span(copies(ops, false), from, to, true)
}

// backward carries lines [from, to) of version k+1 to version k by k's record: where the
// ops copy them to.
func backward(ops []deltaOp, from, to int) (int, int, bool) {
	return span(copies(ops, true), from, to, false)
}

// copies are the runs of lines a version's record (the ops that build version k from k+1)
// copies, from version k's lines to version k+1's (back: the other way), in the order of
// version k's.
func copies(ops []deltaOp, back bool) iter.Seq[shared] {
	return func(yield func(shared) bool) {
		at := 0
		for _, op := range ops {
			if op.C != nil {
				r := shared{at, op.C[0], op.C[1] - op.C[0]}
				if back {
					r.src, r.dst = r.dst, r.src
				}
				if !yield(r) {
					return
				}
			}
			at += op.lines()
		}
	}
}

// quote is lines [from, to) of text (0-based), cut to MaxQuote bytes.
func quote(text string, from, to int) (string, bool) {
	part, err := Lines(text, LineRange{From: from + 1, To: to})
	if err != nil {
		return "", false
	}
	q := strings.Join(part.Lines, "\n")
	if len(q) <= MaxQuote {
		return q, false
	}
	cut := MaxQuote
	for cut > 0 && !utf8.RuneStart(q[cut]) {
		cut--
	}
	return q[:cut], true
}

// lineCount is how many lines text has, as Lines counts them.
func lineCount(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// NewComment is a comment to make on lines of a version.
type NewComment struct {
	Version int       // the version whose lines these are; 0 for the latest
	Lines   LineRange // From to To, 1-based, both included (To 0: to the last line)
	Text    string
	Author  Author
	Asks    string // who it asks, if anyone in particular: "agent:north", or, for an agent's, its person
}

// Commented is what a comment's write made: the comment (a new one, a reply, or the one
// resolved), the document as the write left it, and, for a new comment, the name of whom
// it asks (NewComment.Asks) as the write read it, so that its answer names them without a
// read of its own. Document is set once the write
// found the document, also when it refused the comment (to name it in the refusal).
type Commented struct {
	Comment  Comment
	Document Document
	Names    spaces.Names
}

// Comment makes a comment on lines of a named document's version, carried to where those
// lines are in the latest version. It returns the comment made, or what Find returns, a
// *NoVersionError, a *NoLinesError, ErrBadComment, ErrTooManyComments, or (wrapped) ErrBadRange
// when none of the lines is still there in the latest version.
func (s *Store) Comment(ctx context.Context, name string, nc NewComment) (Commented, error) {
	text, err := checkComment(nc.Text)
	if err != nil {
		return Commented{}, err
	}
	var out Commented
	err = s.prepared(ctx, func(b *buckets) (bool, error) {
		_, _, err := b.namedVersion(name, nc.Version) // found outside the write, or refused there
		return err == nil, err
	}, func(b *buckets) error {
		out = Commented{}
		d, version, err := b.namedVersion(name, nc.Version)
		if err != nil {
			return err
		}
		out.Document = d
		if d.Review != nil && d.Review.Unresolved >= MaxOpenComments {
			return fmt.Errorf("%w: %s has %d open comments; resolve some first", ErrTooManyComments, d.Title, d.Review.Unresolved)
		}
		v, err := b.version(d.ID, version)
		if err != nil {
			return err
		}
		total := lineCount(v.Text)
		from, to := max(nc.Lines.From, 1), nc.Lines.To
		if to == 0 || to > total {
			to = total
		}
		if from > total {
			return &NoLinesError{Total: total, Asked: from}
		}
		c := Comment{Version: version, From: from, To: to, Text: text, Author: nc.Author, Asks: nc.Asks, At: s.now()}
		c.Quote, c.QuoteCut = quote(v.Text, from-1, to)
		// Carry the lines up to the latest version, a record at a time.
		lo, hi := from-1, to
		if version < d.Version {
			_, raws, err := b.records(d.ID, version, d.Version-1)
			if err != nil {
				return err
			}
			for k := version; k < d.Version; k++ {
				ops, _, err := b.backOps(d.ID, k+1, raws[k-version])
				if err != nil {
					return err
				}
				var ok bool
				if lo, hi, ok = forward(ops, lo, hi); !ok {
					return fmt.Errorf("%w: lines %d-%d of version %d are gone by version %d", ErrBadRange, from, to, version, k+1)
				}
			}
		}
		rv := review(&d)
		c.Number = rv.Comments + 1
		rv.Comments, rv.Unresolved = c.Number, rv.Unresolved+1
		if err := b.putComment(d.ID, c); err != nil {
			return err
		}
		open, err := b.reviewSub(bucketUnresolved)
		if err != nil {
			return err
		}
		if err := open.Put(idKey(d.ID, c.Number), nil); err != nil {
			return err
		}
		as, err := b.anchors(d.ID)
		if err != nil {
			return err
		}
		if err := b.putAnchors(d.ID, append(as, anchor{N: c.Number, From: lo, To: hi})); err != nil {
			return err
		}
		if err := b.inboxCommentMark(d.ID, c, true); err != nil {
			return err
		}
		if err := b.event(c.At, d.ID, Event{What: EventComment, N: c.Number, Title: d.Title, Author: c.Author}); err != nil {
			return err
		}
		out.Names = spaces.NamesOf(b.tx, nc.Asks)
		out.Comment, out.Document = c, d
		return b.putDoc(d)
	})
	return out, err
}

// Reply adds a reply to comment n of a named document (to its thread, when n is a reply).
// It returns the reply, or what Find returns, ErrNoComment, ErrResolved, ErrBadComment or
// ErrTooManyComments.
func (s *Store) Reply(ctx context.Context, name string, n int, text string, by Author) (Commented, error) {
	text, err := checkComment(text)
	if err != nil {
		return Commented{}, err
	}
	var out Commented
	err = s.prepared(ctx, findsDocument(name), func(b *buckets) error {
		out = Commented{}
		d, err := b.named(name)
		if err != nil {
			return err
		}
		out.Document = d
		root, err := b.thread(d, n)
		if err != nil {
			return err
		}
		if root.Resolved != nil {
			return fmt.Errorf("%w: comment %d was resolved; make a new comment", ErrResolved, root.Number)
		}
		if out.Comment, err = b.reply(&d, &root, text, by, s.now()); err != nil {
			return err
		}
		out.Document = d
		return b.putDoc(d)
	})
	return out, err
}

// findsDocument is a prepared read that finds the named document, so that a name that
// finds none is refused outside the write (and its near matches looked for there).
func findsDocument(name string) func(b *buckets) (bool, error) {
	return func(b *buckets) (bool, error) {
		_, err := b.named(name)
		return err == nil, err
	}
}

// thread is comment n, or the comment n replies to.
func (b *buckets) thread(d Document, n int) (Comment, error) {
	c, err := b.comment(d, n)
	if err != nil || c.ReplyTo == 0 {
		return c, err
	}
	return b.comment(d, c.ReplyTo)
}

func (b *buckets) reply(d *Document, root *Comment, text string, by Author, now time.Time) (Comment, error) {
	if len(root.Replies) >= MaxReplies {
		return Comment{}, fmt.Errorf("%w: comment %d has %d replies; make a new comment", ErrTooManyComments, root.Number, len(root.Replies))
	}
	rv := review(d)
	r := Comment{Number: rv.Comments + 1, ReplyTo: root.Number, Version: root.Version, From: root.From, To: root.To, Text: text, Author: by, At: now}
	rv.Comments = r.Number
	root.Replies = append(root.Replies, r.Number)
	if err := b.putComment(d.ID, r); err != nil {
		return Comment{}, err
	}
	if err := b.event(r.At, d.ID, Event{What: EventComment, N: r.Number, Title: d.Title, Author: r.Author}); err != nil {
		return Comment{}, err
	}
	return r, b.putComment(d.ID, *root)
}

// MayResolve reports whether by may resolve c: any person, or the agent that wrote it (for
// the same person). An agent answers a person's comment with a reply; whether it is done
// is the person's to say, on the page or the command line.
func (c Comment) MayResolve(by Author) bool {
	if strings.HasPrefix(by.By, "person:") {
		return true
	}
	return by.By == c.Author.By && by.For == c.Author.For
}

// Resolve resolves comment n of a named document (its thread's, when n is a reply), by who,
// with a last reply first when text is not "". It returns the comment resolved, or what Find
// returns, ErrNoComment, ErrResolved, ErrNotYours, ErrBadComment or ErrTooManyComments.
func (s *Store) Resolve(ctx context.Context, name string, n int, text string, by Author) (Commented, error) {
	if strings.TrimSpace(text) != "" {
		var err error
		if text, err = checkComment(text); err != nil {
			return Commented{}, err
		}
	}
	var out Commented
	err := s.prepared(ctx, findsDocument(name), func(b *buckets) error {
		out = Commented{}
		d, err := b.named(name)
		if err != nil {
			return err
		}
		out.Document = d
		root, err := b.thread(d, n)
		if err != nil {
			return err
		}
		switch {
		case root.Resolved != nil:
			return fmt.Errorf("%w: comment %d was resolved already", ErrResolved, root.Number)
		case !root.MayResolve(by):
			return fmt.Errorf("%w (comment %d is %s's)", ErrNotYours, root.Number, root.Author.By)
		}
		now := s.now()
		if strings.TrimSpace(text) != "" {
			if _, err := b.reply(&d, &root, text, by, now); err != nil {
				return err
			}
		}
		root.Resolved = &Resolution{By: by.By, At: now}
		if err := b.putComment(d.ID, root); err != nil {
			return err
		}
		open, err := b.reviewSub(bucketUnresolved)
		if err != nil {
			return err
		}
		if err := open.Delete(idKey(d.ID, root.Number)); err != nil {
			return err
		}
		if err := b.inboxCommentMark(d.ID, root, false); err != nil {
			return err
		}
		as, err := b.anchors(d.ID)
		if err != nil {
			return err
		}
		as = slices.DeleteFunc(as, func(a anchor) bool { return a.N == root.Number })
		if err := b.putAnchors(d.ID, as); err != nil {
			return err
		}
		rv := review(&d)
		rv.Unresolved = max(rv.Unresolved-1, 0)
		out.Comment, out.Document = root, d
		return b.putDoc(d)
	})
	return out, err
}

// CommentsRead is what Comments returns.
type CommentsRead struct {
	Document Document
	Version  int      // the version the lines are of
	Threads  []Thread // at most the number asked for: those on lines first, by line, then the outdated
	Open     int      // unresolved comments in all
	More     int      // unresolved comments not in Threads (outdated, or not in this version)
}

// Comments reads the unresolved comments of document id, at most most of them (with at most
// replies of each's latest replies), their lines as of version (0: the latest; an older
// version's are carried back from the latest through the records between, and comments
// whose lines that version doesn't have are left out, as are the outdated). Its cost is
// bounded by MaxOpenComments, whatever the document's history of comments.
func (r *Reader) Comments(id string, version, most, replies int) (CommentsRead, error) {
	d, err := r.ByID(id)
	if err != nil {
		return CommentsRead{}, err
	}
	return r.b.comments(d, version, most, replies)
}

func (b *buckets) comments(d Document, version, most, replies int) (CommentsRead, error) {
	cr := CommentsRead{}
	err := func() error {
		cr.Document, cr.Version = d, version
		if version == 0 {
			cr.Version = d.Version
		}
		if d.Review == nil || d.Review.Unresolved == 0 {
			return nil
		}
		cr.Open = d.Review.Unresolved
		as, err := b.anchors(d.ID)
		if err != nil {
			return err
		}
		live := map[int]bool{}
		for _, a := range as {
			live[a.N] = true
		}
		if cr.Version < d.Version {
			if as, err = b.carryBack(d, as, cr.Version); err != nil {
				return err
			}
		}
		slices.SortStableFunc(as, func(x, y anchor) int { return x.From - y.From })
		nums := make([]int, 0, min(len(as), most))
		for _, a := range as[:min(len(as), most)] {
			nums = append(nums, a.N)
		}
		raws, err := b.numbered(bucketComments, d.ID, nums)
		if err != nil {
			return err
		}
		for i, a := range as {
			if len(cr.Threads) == most {
				break
			}
			t, err := b.threadFrom(d, a.N, raws[i], replies)
			if err != nil {
				return err
			}
			t.Lines = LineRange{From: a.From + 1, To: a.To}
			cr.Threads = append(cr.Threads, t)
		}
		if cr.Version == d.Version && len(cr.Threads) < most && len(as) < cr.Open {
			// The outdated ones: unresolved, yet on no lines; newest first.
			open, err := b.reviewSub(bucketUnresolved)
			if err != nil || open == nil {
				return err
			}
			c := open.Cursor()
			k, _ := c.Seek(idKey(d.ID, d.Review.Comments+1))
			if k == nil {
				k, _ = c.Last()
			} else {
				k, _ = c.Prev()
			}
			for ; k != nil && len(cr.Threads) < most && len(k) == len(d.ID)+8 && string(k[:len(d.ID)]) == d.ID; k, _ = c.Prev() {
				n := int(binary.BigEndian.Uint64(k[len(d.ID):]))
				if live[n] {
					continue
				}
				t, err := b.threadOf(d, n, replies)
				if err != nil {
					return err
				}
				cr.Threads = append(cr.Threads, t)
			}
		}
		cr.More = cr.Open - len(cr.Threads)
		return nil
	}()
	return cr, err
}

// threadOf reads comment n with its latest replies.
func (b *buckets) threadOf(d Document, n, replies int) (Thread, error) {
	raws, err := b.numbered(bucketComments, d.ID, []int{n})
	if err != nil {
		return Thread{}, err
	}
	return b.threadFrom(d, n, raws[0], replies)
}

// threadFrom is threadOf given comment n as stored (raw; nil: not found), its replies read
// at once.
func (b *buckets) threadFrom(d Document, n int, raw []byte, replies int) (Thread, error) {
	c, err := commentOf(d, n, raw)
	if err != nil {
		return Thread{}, err
	}
	t := Thread{Comment: c}
	rs := c.Replies
	if len(rs) > replies {
		t.More, rs = len(rs)-replies, rs[len(rs)-replies:]
	}
	raws, err := b.numbered(bucketComments, d.ID, rs)
	if err != nil {
		return Thread{}, err
	}
	for i, r := range rs {
		rc, err := commentOf(d, r, raws[i])
		if err != nil {
			return Thread{}, err
		}
		t.Replies = append(t.Replies, rc)
	}
	return t, nil
}

// carryBack carries anchors of the latest version back to version v, through the records
// between; those whose lines v doesn't have are dropped.
func (b *buckets) carryBack(d Document, as []anchor, v int) ([]anchor, error) {
	_, raws, err := b.records(d.ID, v, d.Version-1)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(as)
	for k := d.Version; k > v && len(out) > 0; k-- {
		ops, _, err := b.backOps(d.ID, k, raws[k-1-v])
		if err != nil {
			return nil, err
		}
		kept := out[:0]
		for _, a := range out {
			if from, to, ok := backward(ops, a.From, a.To); ok {
				kept = append(kept, anchor{N: a.N, From: from, To: to})
			}
		}
		out = kept
	}
	return out, nil
}

// CommentThread reads comment n of a named document: its thread (the comment n is or
// replies to) with all its replies.
func (r *Reader) CommentThread(name string, n int) (Document, Thread, error) {
	d, err := r.b.named(name)
	if err != nil {
		return d, Thread{}, err
	}
	root, err := r.b.thread(d, n)
	if err != nil {
		return d, Thread{}, err
	}
	t, err := r.b.threadOf(d, root.Number, MaxReplies)
	return d, t, err
}
