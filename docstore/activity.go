package docstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The activity of a space is what happened in it, by time: every version made, every
// proposal opened and decided, every comment (and reply) made, every document deleted or
// brought back. Each space keeps it as an index (bucketActivity) written in the same
// transaction as what it records, keyed by when, so that a page of it, newest first,
// reads that page's keys in each space whatever the history's length. A store written
// before the index has none: the first read finds it not built, and View builds it from
// the versions (their proposals and comments before it are not in it).
//
// Each entry holds what a line of the activity shows (who, for whom, through which door,
// in which session, the document's title then), so a page reads no version, proposal or
// comment.

const bucketActivity = "doc_activity" // <at ns, 8 bytes><id><what><n, 8 bytes>: an Event (JSON)

// activityBuilt is the key that says the space's activity index is built: shorter than
// any entry's, it sorts first.
var activityBuilt = []byte{0}

// What an activity entry records (Event.What).
const (
	EventVersion  = 'v' // a version was made (N: its number)
	EventProposal = 'p' // a proposal was opened (N: its number)
	EventDecision = 'd' // a proposal was accepted or declined (N: the proposal's number)
	EventComment  = 'c' // a comment or a reply was made (N: its number)
	EventDelete   = 'x' // the document was deleted
	EventUndelete = 'u' // the document was brought back
)

// Limits on a read of the activity.
const (
	// ActivityPage is the most events one read of the activity returns.
	ActivityPage = 200
)

// activityScan is the most entries one read looks at in a space when a filter (Agent,
// Document) leaves most out: a page's cost is bounded whatever the history; the read then
// gives the position where it stopped (Activity.Next) to go on from.
var activityScan = 20000

// Event is one thing that happened in a space.
type Event struct {
	Space   string    `json:"-"`
	At      time.Time `json:"-"`
	Doc     string    `json:"-"` // the document's id
	What    byte      `json:"-"`
	N       int       `json:"-"`
	Title   string    `json:"t"`           // the document's title then
	Kind    Kind      `json:"k,omitempty"` // a version's or a proposal's kind
	Author  Author    `json:"a"`           // who did it (a decision: the person who decided)
	Added   int       `json:"+,omitempty"`
	Removed int       `json:"r,omitempty"`
	Status  Status    `json:"s,omitempty"` // a decision's
	By      string    `json:"b,omitempty"` // a decision's: who made the proposal ("agent:north")
}

// ActivityFilter chooses what a read of the activity returns.
type ActivityFilter struct {
	Since    time.Time // if set, nothing before
	Agent    string    // if set, only what this actor did ("agent:north", "person:ana")
	Document string    // if set, only what happened to the document of this id
	Session  string    // if set, only what this session did
}

func (f ActivityFilter) keeps(e Event) bool {
	return (f.Agent == "" || e.Author.By == f.Agent) && (f.Document == "" || e.Doc == f.Document) &&
		(f.Session == "" || e.Author.Session == f.Session)
}

// Activity is one page of what happened, newest first.
type Activity struct {
	Events []Event
	// Next is the position of the page after this one (ActivityFilter and the same spaces
	// with it), "" on the last.
	Next string
}

func activityKey(at time.Time, id string, what byte, n int) []byte {
	k := make([]byte, 0, 8+len(id)+1+8)
	k = binary.BigEndian.AppendUint64(k, uint64(at.UnixNano()))
	k = append(append(k, id...), what)
	return binary.BigEndian.AppendUint64(k, uint64(n))
}

// activity is the space's activity bucket (nil in a read of a space that has none).
func (b *buckets) activity() (kv.Bucket, error) { return b.reviewSub(bucketActivity) }

// event records e in the space's activity, in the caller's transaction.
func (b *buckets) event(at time.Time, id string, e Event) error {
	bk, err := b.activity()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := bk.Put(activityKey(at, id, e.What, e.N), raw); err != nil {
		return fmt.Errorf("keeping the activity of %s: %w", id, err)
	}
	return nil
}

func versionEvent(v Version) Event {
	return Event{What: EventVersion, N: v.Number, Title: v.Title, Kind: v.Kind, Author: v.Author, Added: v.Added, Removed: v.Removed}
}

// forgetActivity drops document id's entries (Purge: gone for good, its title too). It
// reads the whole index of the space, as a purge reads the whole history.
func (b *buckets) forgetActivity(id string) error {
	bk, err := b.activity()
	if err != nil || bk == nil {
		return err
	}
	var drop [][]byte
	c := bk.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) == 8+len(id)+1+8 && string(k[8:8+len(id)]) == id {
			drop = append(drop, bytes.Clone(k))
		}
	}
	for _, k := range drop {
		if err := bk.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// EnsureActivity builds the space's activity index if it isn't built (a store written
// before it), from every version of every document: View does when a read finds it
// missing.
func (s *Store) EnsureActivity(ctx context.Context) error {
	return ensureBuilt(ctx, s, (*buckets).activity, func(bk kv.Bucket) bool { return bk != nil && bk.Get(activityBuilt) != nil },
		func(b *buckets, bk kv.Bucket) error {
			err := b.eachDoc(func(d Document) error {
				if err := b.headers(d.ID, 1, d.Version, func(v Version) error { return b.event(v.At, d.ID, versionEvent(v)) }); err != nil {
					return err
				}
				if d.Deleted != nil {
					return b.event(d.Deleted.At, d.ID, Event{What: EventDelete, Title: d.Title, Author: d.Deleted.By})
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("building the activity index of space %s: %w", s.space, err)
			}
			return bk.Put(activityBuilt, []byte{1})
		})
}

// activityAt is an entry found by a read: in which space, its key.
type activityAt struct {
	space string
	key   []byte
	raw   []byte
}

// Activity returns what happened in the spaces named (read In r's snapshot; a space the
// person may not see must not be named), newest first, that f keeps: at most limit events
// (at most ActivityPage) older than position after ("" for the newest: the Next of the page
// before). It reads at most limit+1 entries a space, or, with a filter that leaves entries
// out, at most activityScan, whatever the history. It returns ErrBadPosition for a
// position no page gave.
func (r *Reader) Activity(in []string, f ActivityFilter, after string, limit int) (Activity, error) {
	limit = min(max(limit, 1), ActivityPage)
	var before []byte
	if after != "" {
		var err error
		if before, err = hex.DecodeString(after); err != nil || len(before) < 8+1+1+8 || len(before) > 8+64+1+8+1 {
			return Activity{}, ErrBadPosition
		}
	}
	var since []byte
	if !f.Since.IsZero() {
		since = binary.BigEndian.AppendUint64(nil, uint64(f.Since.UnixNano()))
	}
	var (
		found []activityAt
		floor []byte // the highest key a space left unread: nothing at or below it is sure
		out   Activity
	)
	var missing error
	for _, sp := range in {
		rd := r.In(sp)
		bk, err := rd.b.activity()
		if err != nil {
			return Activity{}, err
		}
		if bk == nil || bk.Get(activityBuilt) == nil {
			if rd.b.docs != nil { // a space with documents, written before the index
				r.unbuilt.add(indexActivity, sp)
				missing = errUnbuilt
			}
			continue
		}
		c := bk.Cursor()
		var k, v []byte
		if before == nil {
			k, v = c.Last()
		} else {
			k, _ = c.Seek(before)
			if k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		}
		got, looked := 0, 0
		for ; len(k) > 8; k, v = c.Prev() {
			if since != nil && bytes.Compare(k[:8], since) < 0 {
				k = nil
				break
			}
			if got > limit || looked == activityScan {
				break
			}
			looked++
			e, err := decodeEvent(sp, k, v)
			if err != nil {
				return Activity{}, err
			}
			if !f.keeps(e) {
				continue
			}
			found = append(found, activityAt{space: sp, key: bytes.Clone(k), raw: bytes.Clone(v)})
			got++
		}
		if len(k) > 8 && bytes.Compare(k, floor) > 0 {
			floor = bytes.Clone(k)
		}
	}
	if missing != nil {
		return Activity{}, missing
	}
	slices.SortFunc(found, func(a, b activityAt) int { return bytes.Compare(b.key, a.key) })
	cut := len(found)
	if floor != nil {
		cut = 0
		for cut < len(found) && bytes.Compare(found[cut].key, floor) > 0 {
			cut++
		}
	}
	switch {
	case cut > limit:
		found = found[:limit]
		out.Next = hex.EncodeToString(found[limit-1].key)
	case floor != nil:
		found = found[:cut]
		// The page ends where a space stopped reading: the next goes on from the floor's
		// key, which it has not shown (Seek lands on it, and Prev goes below).
		next := bytes.Clone(floor)
		out.Next = hex.EncodeToString(append(next, 0))
	}
	for _, a := range found {
		e, err := decodeEvent(a.space, a.key, a.raw)
		if err != nil {
			return Activity{}, err
		}
		out.Events = append(out.Events, e)
	}
	return out, nil
}

// decodeEvent reads an activity entry of space.
func decodeEvent(space string, k, v []byte) (Event, error) {
	var e Event
	if len(k) < 8+1+8 {
		return e, fmt.Errorf("an activity key of space %s is %d bytes long", space, len(k))
	}
	if err := json.Unmarshal(v, &e); err != nil {
		return e, fmt.Errorf("reading an activity entry of space %s: %w", space, err)
	}
	e.Space = space
	e.At = time.Unix(0, int64(binary.BigEndian.Uint64(k[:8])))
	e.Doc = string(k[8 : len(k)-9])
	e.What = k[len(k)-9]
	e.N = int(binary.BigEndian.Uint64(k[len(k)-8:]))
	return e, nil
}

// Session is one run of an activity page's events: those of one session (or one event
// with none), newest first.
type Session struct {
	ID        string // "" for an event that has no session
	Author    Author // the newest event's
	From, To  time.Time
	Events    []Event
	Versions  int // versions made
	Documents int // documents they changed
	Proposals int
	Comments  int
	Decisions int
	Deletions int // deletes and bring-backs
}

// Sessions groups a page of events (newest first) by session, each group at the place
// of its newest event: an event without a session is a group of its own.
func Sessions(events []Event) []Session {
	var out []Session
	at := map[string]int{}
	docs := map[string]map[string]bool{}
	for _, e := range events {
		key := e.Space + "\x00" + e.Author.Session
		i, ok := at[key]
		if !ok || e.Author.Session == "" {
			i = len(out)
			at[key] = i
			out = append(out, Session{ID: e.Author.Session, Author: e.Author, To: e.At})
			docs[key] = map[string]bool{}
		}
		s := &out[i]
		s.From = e.At
		s.Events = append(s.Events, e)
		switch e.What {
		case EventVersion:
			s.Versions++
			if !docs[key][e.Doc] {
				docs[key][e.Doc] = true
				s.Documents++
			}
		case EventProposal:
			s.Proposals++
		case EventComment:
			s.Comments++
		case EventDecision:
			s.Decisions++
		case EventDelete, EventUndelete:
			s.Deletions++
		}
	}
	return out
}

// Counts says what a session did in words: "6 changes to 3 documents, 2 proposals, 1
// comment".
func (s Session) Counts() string {
	var parts []string
	plural := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	if s.Versions > 0 {
		parts = append(parts, plural(s.Versions, "change")+" to "+plural(s.Documents, "document"))
	}
	if s.Proposals > 0 {
		parts = append(parts, plural(s.Proposals, "proposal"))
	}
	if s.Decisions > 0 {
		parts = append(parts, plural(s.Decisions, "decision"))
	}
	if s.Comments > 0 {
		parts = append(parts, plural(s.Comments, "comment"))
	}
	if s.Deletions > 0 {
		parts = append(parts, plural(s.Deletions, "delete or bring-back"))
	}
	return strings.Join(parts, ", ")
}

// timeLayout is how the activity's lines say times (the tools' and the page's layout).
const timeLayout = "2006-01-02 15:04"

// Heading is the session's line: "north for Ana via Claude Code, 2026-12-06 14:02–14:31:
// 6 changes to 3 documents, 2 proposals, 1 comment". An event of no session is said by
// who did it alone.
func (s Session) Heading(names spaces.Names) string {
	who := s.Author.Show(names)
	if who == "" {
		who = "someone"
	}
	if s.Author.Door != "" || s.ID != "" || s.Author.By != "" {
		who += " " + s.Author.Via()
	}
	from, to := s.From.Local().Format(timeLayout), s.To.Local().Format(timeLayout)
	span := from
	switch {
	case from == to:
	case from[:10] == to[:10]:
		span += "–" + to[11:]
	default:
		span += " – " + to
	}
	return who + ", " + span + ": " + s.Counts()
}

// Line says what the event was, for a line under its session's: "Launch plan: version 5,
// edit +1 −1".
func (e Event) Line(names spaces.Names) string {
	switch e.What {
	case EventVersion:
		return fmt.Sprintf("%s: version %d, %s +%d \u2212%d", e.Title, e.N, e.Kind, e.Added, e.Removed)
	case EventProposal:
		return fmt.Sprintf("%s: change %d proposed, %s +%d \u2212%d", e.Title, e.N, e.Kind, e.Added, e.Removed)
	case EventDecision:
		return fmt.Sprintf("%s: change %d by %s %s", e.Title, e.N, names.ShowString(e.By), e.Status)
	case EventComment:
		return fmt.Sprintf("%s: comment %d", e.Title, e.N)
	case EventDelete:
		return e.Title + ": deleted"
	case EventUndelete:
		return e.Title + ": brought back"
	}
	return fmt.Sprintf("%s: %c %d", e.Title, e.What, e.N)
}

// DB is the store s reads and writes: for a front door that reads the space's
// conversations beside its documents (why a version was made).
func (s *Store) DB() kv.DB { return s.db }
