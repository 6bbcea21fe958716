package docstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// Proposals are the agents' changes kept for the person to decide on, in review mode
// (Proposing): the change is worked out exactly as a version would be (the same checks,
// refusals and merge of a stale base), then kept, against the latest version, as the ops
// that build its text from that version's lines, instead of being saved. The person
// accepts it (Accept: merged line by line with what changed since, as their own save would
// be, into a version of kind accept) or declines it with a reason (Decline). Proposals,
// their decisions and the document's counts (Document.Review) are written in the same
// transaction as the versions, so a proposal is never lost nor decided twice.

// Status says where a proposal stands.
type Status string

// A proposal is open until the person decides: accepted as it was (the text had not moved
// on since its base), merged (with what changed since), or declined.
const (
	StatusOpen     Status = "open"
	StatusAccepted Status = "accepted"
	StatusMerged   Status = "merged"
	StatusDeclined Status = "declined"
)

// Limits on what a proposal's decision holds.
const (
	// MaxReason is the longest reason a decline may give, in bytes.
	MaxReason = 2000
)

// Proposal is an agent's change waiting for, or decided by, the person.
type Proposal struct {
	Number  int       `json:"n"`
	Base    int       `json:"base"`  // the version it changes: its text is against that one's
	Title   string    `json:"title"` // the title it gives the document (the base's, when it keeps it)
	Kind    Kind      `json:"kind"`  // what the agent did: write, append or edit (merge: a stale write, merged)
	Author  Author    `json:"author"`
	At      time.Time `json:"at"`
	Added   int       `json:"added"` // lines, against the base
	Removed int       `json:"removed"`
	Status  Status    `json:"status"`
	Decided *Decision `json:"decided,omitempty"`
	NoEOL   bool      `json:"noeol,omitempty"` // its text lacks a final line break
	// Note says where a proposal no agent asked for came from: the space's side of a
	// person's save that changed the same lines (SaveKeeping), as "kept from the space when
	// the folder joined". Empty for an agent's own.
	Note string `json:"note,omitempty"`
	// Text is the text it proposes, filled in only by the reads that say so.
	Text string `json:"-"`
}

// Decision is what the person decided of a proposal.
type Decision struct {
	By      string    `json:"by"` // "person:ana"
	At      time.Time `json:"at"`
	Why     string    `json:"why,omitempty"`     // a decline's reason
	Version int       `json:"version,omitempty"` // the version accepting it made (or, when it changed nothing, the one that had it)
	Edited  bool      `json:"edited,omitempty"`  // the person changed it before accepting it
}

// Edit is the person's own text for a proposal they accept after editing it, made from
// version Base (0: the proposal's base).
type Edit struct {
	Text string
	Base int
}

var (
	// ErrNoReason is returned by Decline without a reason, or with one that is too long or
	// not one paragraph of text.
	ErrNoReason = errors.New("a decline needs a reason")
)

// NoProposalError is returned when a document has no proposal of the number asked for.
type NoProposalError struct {
	Document Document
	Asked    int
}

func (e *NoProposalError) Error() string {
	last := 0
	if e.Document.Review != nil {
		last = e.Document.Review.Proposals
	}
	return fmt.Sprintf("%s has proposals 1 to %d, not %d", e.Document.Title, last, e.Asked)
}

// DecidedError is returned by Accept and Decline for a proposal that was already decided.
type DecidedError struct {
	Document Document
	Proposal Proposal
}

func (e *DecidedError) Error() string {
	return fmt.Sprintf("proposal %d of %s was %s already", e.Proposal.Number, e.Document.ID, e.Proposal.Status)
}

const (
	bucketProposals = "doc_proposals" // <id><n>: a proposal (encodeProposal)
	bucketOpen      = "doc_open"      // <id><n>: nothing; the open proposals
	bucketDecisions = "doc_decisions" // <id><n>: a decision (decided, JSON), n counting the document's
)

// reviewBuckets are the buckets that hold a document's review, each keyed <id>...: what
// Purge deletes with the document.
var reviewBuckets = []string{bucketProposals, bucketOpen, bucketDecisions}

// decided is a decision as the document's log of them keeps it, so that a read can tell an
// agent what became of its proposals without reading every proposal.
type decided struct {
	N      int      `json:"n"` // the proposal's number
	Author Author   `json:"author"`
	Status Status   `json:"status"`
	Kind   Kind     `json:"kind"`
	Made   int64    `json:"made"` // when the proposal was made, Unix ns
	D      Decision `json:"d"`
}

// Proposing returns a copy of s on which the agents' changes, Write, Append and Edit (and
// any Change of kind write, append or edit), are kept as proposals instead of saved: the
// answer is a Saved with Proposal set. A new document (Create) is made as it is: nothing
// of anyone's is changed by it. The person's changes (Save, Restore, Rename) are never
// proposals.
func (s *Store) Proposing() *Store {
	c := *s
	c.proposing = true
	return &c
}

// proposable reports whether a change of kind is an agent's, to be proposed in review mode.
func proposable(kind Kind) bool {
	return kind == KindWrite || kind == KindAppend || kind == KindEdit
}

// reviewSub is the space's bucket name in this transaction: made if need be in a write
// transaction, nil in a read one on a space that has none.
func (b *buckets) reviewSub(name string) (kv.Bucket, error) {
	if !b.tx.Writable() {
		return spaces.Sub(b.tx, b.space, name), nil
	}
	return spaces.CreateSub(b.tx, b.space, name)
}

// idKey is <id><n>, n as 8 bytes big-endian: a document's n-th proposal, decision or comment.
func idKey(id string, n int) []byte {
	return binary.BigEndian.AppendUint64([]byte(id), uint64(n))
}

// review is d's counts, made if it has none.
func review(d *Document) *Review {
	if d.Review == nil {
		d.Review = &Review{}
	}
	return d.Review
}

// forward is the ops that build the new text's lines from the old's: what a proposal keeps.
func (c change) forward() []deltaOp {
	var ops []deltaOp
	for _, op := range c.ops {
		switch op.Kind {
		case linediff.Equal:
			ops = append(ops, deltaOp{C: []int{op.A0, op.A1}})
		case linediff.Insert:
			ops = append(ops, deltaOp{I: strings.Join(c.new[op.B0:op.B1], "")})
		}
	}
	return ops
}

// putProposal keeps the change p as d's next proposal, by, made at now.
func (b *buckets) putProposal(d *Document, p prepared, by Author, now time.Time) (Saved, error) {
	props, err := b.reviewSub(bucketProposals)
	if err != nil {
		return Saved{}, err
	}
	open, err := b.reviewSub(bucketOpen)
	if err != nil {
		return Saved{}, err
	}
	rv := review(d)
	pr := Proposal{
		Number: rv.Proposals + 1, Base: d.Version, Title: p.next.Title, Kind: p.kind, Author: by, At: now,
		Added: p.added, Removed: p.removed, Status: StatusOpen,
		NoEOL: p.next.Text != "" && !strings.HasSuffix(p.next.Text, "\n"), Note: p.note,
	}
	raw, err := encodeProposal(pr, p.change.forward())
	if err != nil {
		return Saved{}, err
	}
	if err := props.Put(idKey(d.ID, pr.Number), raw); err != nil {
		return Saved{}, fmt.Errorf("keeping proposal %d of %s: %w", pr.Number, d.ID, err)
	}
	if err := open.Put(idKey(d.ID, pr.Number), nil); err != nil {
		return Saved{}, err
	}
	rv.Proposals, rv.Open = pr.Number, rv.Open+1
	if err := b.inboxProposalMark(d.ID, pr, true); err != nil {
		return Saved{}, err
	}
	if err := b.event(pr.At, d.ID, Event{What: EventProposal, N: pr.Number, Title: pr.Title, Kind: pr.Kind, Author: pr.Author, Added: pr.Added, Removed: pr.Removed}); err != nil {
		return Saved{}, err
	}
	if err := b.putDoc(*d); err != nil {
		return Saved{}, err
	}
	return Saved{Document: *d, Added: p.added, Removed: p.removed, Kind: p.kind, Proposal: &pr}, nil
}

// A proposal is stored as recordMark, the length of its header (uvarint), its header (the
// Proposal as JSON) and its ops (JSON): a listing reads headers without the ops, which
// hold the lines it adds.
func encodeProposal(p Proposal, ops []deltaOp) ([]byte, error) {
	hdr, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 0, 1+binary.MaxVarintLen64+len(hdr)+len(body))
	raw = append(raw, recordMark)
	raw = binary.AppendUvarint(raw, uint64(len(hdr)))
	raw = append(raw, hdr...)
	return append(raw, body...), nil
}

// decodeProposal reads a stored proposal, and its ops when ops is true.
func decodeProposal(raw []byte, ops bool) (Proposal, []deltaOp, error) {
	var p Proposal
	if len(raw) == 0 || raw[0] != recordMark {
		return p, nil, fmt.Errorf("a proposal of an unknown layout")
	}
	n, k := binary.Uvarint(raw[1:])
	if k <= 0 || uint64(len(raw)-1-k) < n {
		return p, nil, fmt.Errorf("a proposal cut short")
	}
	body := raw[1+k:]
	if err := json.Unmarshal(body[:n], &p); err != nil {
		return p, nil, err
	}
	if !ops {
		return p, nil, nil
	}
	var out []deltaOp
	if err := json.Unmarshal(body[n:], &out); err != nil {
		return p, nil, fmt.Errorf("reading the change of proposal %d: %w", p.Number, err)
	}
	return p, out, nil
}

// proposal reads d's proposal n, its text too when text is true.
func (b *buckets) proposal(d Document, n int, text bool) (Proposal, error) {
	raws, err := b.numbered(bucketProposals, d.ID, []int{n})
	if err != nil {
		return Proposal{}, err
	}
	return b.proposalFrom(d, n, raws[0], text)
}

// proposalFrom is proposal given d's proposal n as stored (raw; nil: not found).
func (b *buckets) proposalFrom(d Document, n int, raw []byte, text bool) (Proposal, error) {
	if raw == nil {
		return Proposal{}, &NoProposalError{Document: d, Asked: n}
	}
	p, ops, err := decodeProposal(raw, text)
	if err != nil {
		return Proposal{}, fmt.Errorf("reading proposal %d of %s: %w", n, d.ID, err)
	}
	if !text {
		return p, nil
	}
	base, err := b.version(d.ID, p.Base)
	if err != nil {
		return Proposal{}, err
	}
	lines, err := rebuild(record{Version: Version{Number: p.Base}, Ops: ops}, linediff.Lines(eol(base.Text)), nil)
	if err != nil {
		return Proposal{}, fmt.Errorf("proposal %d of %s: %w", n, d.ID, err)
	}
	p.Text = textOf(record{NoEOL: p.NoEOL}, lines)
	return p, nil
}

// Proposal returns a named document, its proposal n with its text, and the version the
// proposal is against. It returns what Find returns, and a *NoProposalError.
func (r *Reader) Proposal(name string, n int) (Document, Proposal, Version, error) {
	d, err := r.b.named(name)
	if err != nil {
		return d, Proposal{}, Version{}, err
	}
	p, err := r.b.proposal(d, n, true)
	if err != nil {
		return d, p, Version{}, err
	}
	base, err := r.b.version(d.ID, p.Base)
	return d, p, base, err
}

// Proposals returns a named document's open proposals, newest first, at most limit of
// them, numbered below before (0: from the newest); their texts are left out. How many are
// open in all is d.Review.Open. Its cost is limit's, however many proposals there are.
func (r *Reader) Proposals(name string, before, limit int) (Document, []Proposal, error) {
	d, err := r.b.named(name)
	if err != nil {
		return d, nil, err
	}
	ps, err := r.b.openProposals(d, before, limit)
	return d, ps, err
}

func (b *buckets) openProposals(d Document, before, limit int) ([]Proposal, error) {
	if d.Review == nil || d.Review.Open == 0 || limit < 1 {
		return nil, nil
	}
	open, err := b.reviewSub(bucketOpen)
	if err != nil || open == nil {
		return nil, err
	}
	if before <= 0 {
		before = math.MaxInt32
	}
	var nums []int
	c := open.Cursor()
	k, _ := c.Seek(idKey(d.ID, before))
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	for ; k != nil && len(nums) < limit && len(k) == len(d.ID)+8 && string(k[:len(d.ID)]) == d.ID; k, _ = c.Prev() {
		nums = append(nums, int(binary.BigEndian.Uint64(k[len(d.ID):])))
	}
	raws, err := b.numbered(bucketProposals, d.ID, nums)
	if err != nil {
		return nil, err
	}
	ps := make([]Proposal, 0, len(nums))
	for i, n := range nums {
		p, err := b.proposalFrom(d, n, raws[i], false)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// Waiting is a document with open proposals.
type Waiting struct {
	Document  Document
	Proposals []Proposal // the newest open ones
}

// Waiting lists the space's documents that have open proposals, latest saved first, each
// with at most limit of its open proposals, newest first. It reads the space's inbox index
// (every open proposal and waiting comment is a key there), not every document: its cost
// is that of what waits, however many documents the space has.
func (r *Reader) Waiting(limit int) ([]Waiting, error) {
	x, err := r.inbox()
	if err != nil || x.idx == nil {
		return nil, err
	}
	seen := map[string]bool{}
	var docs []Document
	c := x.idx.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		// <who>0<at, 8 bytes><id><kind><n, 8 bytes>: the id ends 9 bytes before the key.
		who := bytes.IndexByte(k, 0)
		if who < 0 || len(k) < who+1+8+1+1+8 || k[len(k)-9] != inboxProposal {
			continue
		}
		id := string(k[who+1+8 : len(k)-9])
		if seen[id] {
			continue
		}
		seen[id] = true
		d, ok, err := r.b.doc(id)
		if err != nil {
			return nil, err
		}
		if ok && d.Deleted == nil && d.Review != nil && d.Review.Open > 0 {
			docs = append(docs, d)
		}
	}
	slices.SortFunc(docs, func(a, b Document) int { return bytes.Compare(recentKey(b), recentKey(a)) })
	out := make([]Waiting, 0, len(docs))
	for _, d := range docs {
		ps, err := r.b.openProposals(d, 0, limit)
		if err != nil {
			return nil, err
		}
		out = append(out, Waiting{Document: d, Proposals: ps})
	}
	return out, nil
}

// Accept makes proposal n of a named document a version of kind accept, by the agent that
// proposed it, for its person, accepted by who (a person). The proposal's text is merged
// line by line with what was saved since its base, as the person's own save would be
// (Save): where both changed the same lines, prefer chooses, and with linediff.Clash
// nothing is saved and a *ClashError says where, the proposal still open. edit, when not
// nil, is the person's own text for it (accepting after editing), made from edit.Base.
// A proposal whose change the text already has makes no version (Saved.Unchanged) and is
// accepted all the same.
//
// It returns the proposal as decided. It returns what Find returns, a *NoProposalError,
// a *DecidedError, a *ClashError, a *TitleTakenError, and ErrBadText for an edit's text.
func (s *Store) Accept(ctx context.Context, name string, n int, who Author, edit *Edit, prefer linediff.Prefer) (Saved, Proposal, error) {
	var status Status
	how := func(b *buckets, d Document, latest Version, at func(int) (Version, error)) (Next, error) {
		p, err := b.proposal(d, n, true)
		if err != nil {
			return Next{}, err
		}
		if p.Status != StatusOpen {
			return Next{}, &DecidedError{Document: d, Proposal: p}
		}
		title := latest.Title
		from, err := at(p.Base)
		if err != nil {
			return Next{}, err
		}
		if p.Title != from.Title {
			title = p.Title
		}
		text := p.Text
		if edit != nil {
			text = edit.Text
			if edit.Base != 0 {
				if from, err = at(edit.Base); err != nil {
					return Next{}, err
				}
			}
		}
		if from.Number == latest.Number {
			status = StatusAccepted
			return Next{Title: title, Text: text}, nil
		}
		status = StatusMerged
		merged, err := mergeSince(d, from, latest, text, prefer)
		if err != nil {
			return Next{}, err
		}
		return Next{Title: title, Text: merged}, nil
	}
	var decidedAs Proposal
	then := func(b *buckets, d *Document, saved *Saved) error {
		p, err := b.proposal(*d, n, false)
		if err != nil {
			return err
		}
		if p.Status != StatusOpen {
			return &DecidedError{Document: *d, Proposal: p}
		}
		p.Status = status
		p.Decided = &Decision{By: who.By, At: s.now(), Version: d.Version, Edited: edit != nil}
		decidedAs = p
		return b.decide(d, p)
	}
	// The version is the agent's, for its person; who accepted it is said beside them. The
	// author is known only once the proposal is read: Change takes it up front, so it is
	// read here first, and checked again (by number, in the commit) as it is decided.
	var (
		d     Document
		first Proposal
	)
	err := s.View(ctx, func(r *Reader) (err error) { d, first, _, err = r.Proposal(name, n); return err })
	if err != nil {
		return Saved{}, Proposal{}, err
	}
	if first.Status != StatusOpen {
		return Saved{}, Proposal{}, &DecidedError{Document: d, Proposal: first}
	}
	// The version is the proposal's session's (its Undo undoes it too), come in accepted.
	by := Author{By: first.Author.By, For: first.Author.For, Accepted: who.By, Door: DoorAccept, Client: first.Author.Client, Session: first.Author.Session}
	saved, err := s.change(ctx, d.ID, KindAccept, by, how, then)
	if err != nil {
		return Saved{}, Proposal{}, err
	}
	return saved, decidedAs, nil
}

// Decline declines proposal n of a named document, by who (a person), for the reason why
// (one paragraph, at most MaxReason bytes). It returns the proposal as decided, or what
// Find returns, a *NoProposalError, a *DecidedError, or ErrNoReason.
func (s *Store) Decline(ctx context.Context, name string, n int, who Author, why string) (Proposal, error) {
	why = strings.TrimSpace(why)
	switch {
	case why == "":
		return Proposal{}, fmt.Errorf("%w: say why, so the agent can do better", ErrNoReason)
	case len(why) > MaxReason:
		return Proposal{}, fmt.Errorf("%w of at most %d bytes; this one has %d", ErrNoReason, MaxReason, len(why))
	case !utf8.ValidString(why) || strings.ContainsFunc(why, func(r rune) bool { return unicode.IsControl(r) && r != '\n' }):
		return Proposal{}, fmt.Errorf("%w in plain text (no control characters)", ErrNoReason)
	}
	var out Proposal
	err := s.update(ctx, func(b *buckets) error {
		d, err := b.named(name)
		if err != nil {
			return err
		}
		p, err := b.proposal(d, n, false)
		if err != nil {
			return err
		}
		if p.Status != StatusOpen {
			return &DecidedError{Document: d, Proposal: p}
		}
		p.Status = StatusDeclined
		p.Decided = &Decision{By: who.By, At: s.now(), Why: why}
		out = p
		return b.decide(&d, p)
	})
	return out, err
}

// decide writes proposal p (decided) of d, takes it out of the open ones, logs the
// decision and counts it in d's record.
func (b *buckets) decide(d *Document, p Proposal) error {
	props, err := b.reviewSub(bucketProposals)
	if err != nil {
		return err
	}
	key := idKey(d.ID, p.Number)
	raw := props.Get(key)
	if raw == nil {
		return fmt.Errorf("proposal %d of %s has no record", p.Number, d.ID)
	}
	_, ops, err := decodeProposal(raw, true)
	if err != nil {
		return err
	}
	if raw, err = encodeProposal(p, ops); err != nil {
		return err
	}
	if err := props.Put(key, raw); err != nil {
		return err
	}
	open, err := b.reviewSub(bucketOpen)
	if err != nil {
		return err
	}
	if err := open.Delete(key); err != nil {
		return err
	}
	if err := b.inboxProposalMark(d.ID, p, false); err != nil {
		return err
	}
	log, err := b.reviewSub(bucketDecisions)
	if err != nil {
		return err
	}
	rv := review(d)
	rv.Decided++
	rv.Open = max(rv.Open-1, 0)
	entry, err := json.Marshal(decided{N: p.Number, Author: p.Author, Status: p.Status, Kind: p.Kind, Made: p.At.UnixNano(), D: *p.Decided})
	if err != nil {
		return err
	}
	if err := log.Put(idKey(d.ID, rv.Decided), entry); err != nil {
		return err
	}
	if err := b.event(p.Decided.At, d.ID, Event{What: EventDecision, N: p.Number, Title: d.Title, Kind: p.Kind, Author: Author{By: p.Decided.By}, Status: p.Status, By: p.Author.By}); err != nil {
		return err
	}
	return b.putDoc(*d)
}

// toldScan is how many of a document's latest proposals and decisions Told looks through:
// what it tells is bounded however long the document's review has gone on. Proposals are
// read toldPage at once (they may be large, and the reader's latest is often among the
// first), decisions all at once.
const (
	toldScan = 200
	toldPage = 16
)

// idKeys are the keys <id><n> of nums (idKey).
func idKeys(id string, nums []int) [][]byte {
	ks := make([][]byte, len(nums))
	for i, n := range nums {
		ks[i] = idKey(id, n)
	}
	return ks
}

// countDown is hi, hi-1, ..., lo.
func countDown(hi, lo int) []int {
	out := make([]int, 0, max(hi-lo+1, 0))
	for n := hi; n >= lo; n-- {
		out = append(out, n)
	}
	return out
}

// numbered reads keys <id><n> of the space's bucket name at once, for each of nums, as
// stored: nil for one not found (or n < 1, not looked for).
func (b *buckets) numbered(name, id string, nums []int) ([][]byte, error) {
	if len(nums) == 0 {
		return nil, nil
	}
	out := make([][]byte, len(nums))
	bk, err := b.reviewSub(name)
	if err != nil || bk == nil {
		return out, err
	}
	var ks [][]byte
	for _, n := range nums {
		if n >= 1 {
			ks = append(ks, idKey(id, n))
		}
	}
	got := kv.GetAll(bk, ks)
	for i, n := range nums {
		if n >= 1 {
			out[i], got = got[0], got[1:]
		}
	}
	return out, nil
}

// told returns what became of reader's proposals on d since reader's latest proposal: the
// decisions made after it, newest first, at most most of them, and how many more there are.
// It looks at the latest toldScan proposals and decisions only.
func (b *buckets) told(d Document, reader Author, most int) ([]Proposal, int, error) {
	if d.Review == nil || d.Review.Decided == 0 || reader.By == "" {
		return nil, 0, nil
	}
	var since int64
	props, err := b.reviewSub(bucketProposals)
	if err != nil || props == nil {
		return nil, 0, err
	}
	var page [][]byte // the proposals of n on down, read toldPage at once
	for n := d.Review.Proposals; n >= 1 && n > d.Review.Proposals-toldScan; n-- {
		if (d.Review.Proposals-n)%toldPage == 0 {
			page = kv.GetAll(props, idKeys(d.ID, countDown(n, max(n-toldPage+1, 1))))
		}
		raw := page[0]
		page = page[1:]
		if raw == nil {
			continue
		}
		p, _, err := decodeProposal(raw, false)
		if err != nil {
			return nil, 0, err
		}
		if sameAgent(p.Author, reader) {
			since = p.At.UnixNano()
			break
		}
	}
	log, err := b.reviewSub(bucketDecisions)
	if err != nil || log == nil {
		return nil, 0, err
	}
	var (
		out  []Proposal
		more int
	)
	decisions := kv.GetAll(log, idKeys(d.ID, countDown(d.Review.Decided, max(d.Review.Decided-toldScan+1, 1))))
	for i, n := 0, d.Review.Decided; n >= 1 && n > d.Review.Decided-toldScan; i, n = i+1, n-1 {
		raw := decisions[i]
		if raw == nil {
			continue
		}
		var e decided
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, 0, fmt.Errorf("reading decision %d of %s: %w", n, d.ID, err)
		}
		if !sameAgent(e.Author, reader) || e.D.At.UnixNano() < since {
			continue
		}
		if len(out) == most {
			more++
			continue
		}
		dec := e.D
		out = append(out, Proposal{Number: e.N, Author: e.Author, Status: e.Status, Kind: e.Kind, At: time.Unix(0, e.Made), Decided: &dec})
	}
	return out, more, nil
}

// sameAgent reports whether a and b are one agent working for one person.
func sameAgent(a, b Author) bool { return a.By == b.By && a.For == b.For }

// purgeReview deletes every key of document id in the review buckets.
func (b *buckets) purgeReview(id string) error {
	for _, name := range reviewBuckets {
		bk, err := b.reviewSub(name)
		if err != nil {
			return err
		}
		prefix := []byte(id)
		c := bk.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
			if err := c.Delete(); err != nil {
				return fmt.Errorf("purging %s of %s: %w", name, id, err)
			}
		}
	}
	return nil
}

// Notes are what a read of a document shows after its text: its open proposals, and what
// became of the reader's own.
type Notes struct {
	Document  Document   // the record as the notes were read
	Open      int        // open proposals in all
	Proposals []Proposal // the newest open ones, at most the number asked for
	Told      []Proposal // the reader's proposals decided since its latest one here, newest first
	ToldMore  int        // more of those than Told gives
	Comments  CommentsRead
}

// Notes reads what a read of version (0: the latest) of document id shows after its text,
// for reader (the agent that reads, for its person): at most most of each list, and of each
// comment's replies the latest few. A document that never had a proposal or a comment costs
// one lookup of its record.
func (r *Reader) Notes(id string, version int, reader Author, most int) (Notes, error) {
	d, ok, err := r.b.doc(id)
	if err != nil || !ok {
		return Notes{}, err
	}
	return r.b.notes(d, version, reader, most)
}

// notes is Notes of d, its record as read in this transaction.
func (b *buckets) notes(d Document, version int, reader Author, most int) (Notes, error) {
	n := Notes{Document: d}
	if d.Review == nil {
		return n, nil
	}
	n.Open = d.Review.Open
	var err error
	if n.Proposals, err = b.openProposals(d, 0, most); err != nil {
		return n, err
	}
	if n.Told, n.ToldMore, err = b.told(d, reader, most); err != nil {
		return n, err
	}
	n.Comments, err = b.comments(d, version, 2*most, 3)
	return n, err
}

// Preview is an open proposal as the person weighs it: its text and base, the latest
// version, and what accepting it as it is would make of the latest text.
type Preview struct {
	Document     Document
	Proposal     Proposal // its text included
	Base, Latest Version
	// Merged is the latest text with the proposal merged in, as Accept would save it, when
	// Conflicts is empty; Conflicts are where both it and a version since changed the same
	// lines (accepting it as it is would then clash).
	Merged    string
	Conflicts []linediff.Conflict
}

// Preview reads proposal n of a named document, its base and the latest version, and
// merges it with the latest as Accept would, saving nothing. It returns what Find returns
// and a *NoProposalError.
func (r *Reader) Preview(name string, n int) (Preview, error) {
	var (
		pv  Preview
		err error
	)
	b := r.b
	if pv.Document, err = b.named(name); err != nil {
		return pv, err
	}
	if pv.Proposal, err = b.proposal(pv.Document, n, true); err != nil {
		return pv, err
	}
	if pv.Base, err = b.version(pv.Document.ID, pv.Proposal.Base); err != nil {
		return pv, err
	}
	if pv.Latest, err = b.version(pv.Document.ID, pv.Document.Version); err != nil {
		return pv, err
	}
	if pv.Base.Number == pv.Latest.Number {
		pv.Merged = pv.Proposal.Text
		return pv, nil
	}
	pv.Merged, pv.Conflicts = linediff.Merge3(pv.Base.Text, pv.Latest.Text, pv.Proposal.Text)
	return pv, nil
}
