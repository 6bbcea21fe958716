package threads

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

var (
	// ErrNotFound is returned by Get and Page when the space has no conversation with that id.
	ErrNotFound = errors.New("no conversation with that id in this space")
	// ErrBadBefore is returned by Page when before is not the id of a message that can be read
	// in that conversation.
	ErrBadBefore = errors.New("before is not the id of a message of this conversation")
	// ErrBadID is returned by Say and Import for a conversation id that is empty, longer than
	// 200 bytes, not UTF-8, or has control characters.
	ErrBadID = errors.New("a conversation's id is 1 to 200 bytes of UTF-8 with no control characters")
	// ErrBadText is returned by Say and Import for a message whose text is empty, longer
	// than 8 MiB, not valid UTF-8, or has NUL bytes.
	ErrBadText = errors.New("a message's text is 1 byte to 8 MiB of UTF-8 without NUL bytes")
	// ErrBadTime is returned by Say and Import for a message time that a ULID cannot hold:
	// before 1970 or after the year 10889.
	ErrBadTime = errors.New("a message's time is between 1970 and the year 10889")
)

// Limits on what a conversation holds.
const (
	// MaxID is the longest id of a conversation, or external id of a message, in bytes.
	MaxID = 200
	// MaxText is the largest text of a message, in bytes.
	MaxText = 8 << 20
)

// Store keeps the conversations of one space. It holds nothing but its configuration and
// is safe for concurrent use: a call reads through the Reader View gives it, and writes
// with the methods below, each its own transaction.
type Store struct {
	db    kv.DB
	space string
	now   func() time.Time
}

// New returns the store of space's conversations in db. The space's name is checked on the
// first write (spaces.ErrBadSpace); a read in a space that was never written finds nothing.
func New(db kv.DB, space string) *Store {
	return &Store{db: db, space: space, now: time.Now}
}

// Reader reads one snapshot of a space's conversations: what one call shows (a listing, a
// page of messages, people's names) read together, as of one state of the store. It lives
// for the function Store.View gives it, and is that function's alone.
type Reader struct {
	tx      kv.Tx
	space   string
	v       view
	names   spaces.Names
	named   bool
	unbuilt bool // a search found the index not built
}

// errUnbuilt is a search that needs the index built first: View builds it and runs its
// function again.
var errUnbuilt = errors.New("the space's conversations have no search index yet")

// View runs fn with a Reader of one snapshot of the space's conversations (kv.DB.View: fn
// may run more than once, each time with a new Reader, and must set its results afresh).
// When a search of fn found the index not built (a store written before it), View builds
// it (EnsureIndex), in a write transaction of its own, and runs fn again.
func (s *Store) View(ctx context.Context, fn func(r *Reader) error) error {
	unbuilt := false
	err := s.db.View(ctx, func(tx kv.Tx) error {
		r := &Reader{tx: tx, space: s.space, v: readView(tx, s.space)}
		err := fn(r)
		unbuilt = r.unbuilt
		return err
	})
	if !unbuilt {
		return err
	}
	if err := s.EnsureIndex(ctx, nil); err != nil {
		return err
	}
	return s.db.View(ctx, func(tx kv.Tx) error {
		return fn(&Reader{tx: tx, space: s.space, v: readView(tx, s.space)})
	})
}

// ReadIn runs fn on one snapshot of s's conversations (Store.View) and returns what its
// last run returned: for a read of one value, without a variable to set in the View.
func ReadIn[T any](ctx context.Context, s *Store, fn func(r *Reader) (T, error)) (T, error) {
	var out T
	err := s.View(ctx, func(r *Reader) (err error) {
		out, err = fn(r)
		return err
	})
	return out, err
}

// Names are people's display names as the snapshot has them, read once a Reader.
func (r *Reader) Names() spaces.Names {
	if !r.named {
		// AllNames fails only as a transaction does (a kv.Failure, which View returns).
		r.names, _ = spaces.AllNames(r.tx)
		r.named = true
	}
	return r.names
}

// WithClock returns a copy of s that takes the time from now wherever a message has none.
func (s *Store) WithClock(now func() time.Time) *Store {
	c := *s
	c.now = now
	return &c
}

// Message is one thing said in a conversation.
type Message struct {
	ID       string    // a ULID made from At: ids sort by time, and in the order added within a millisecond
	At       time.Time // when it was said
	From     string    // "person:ana" or "agent:north"
	To       string    // the agent addressed ("agent:north"), or empty
	Text     string    // what was said
	Private  bool      // an agent's private step: never returned by Page, never counted
	External string    // the id it was imported under, if any: the same id is not added twice
}

// Conversation is a conversation's summary, as Recent and Get give it.
type Conversation struct {
	ID, Title string
	Created   time.Time // when it began (its earliest message, or the export's creation time)
	Last      time.Time // time of the latest non-private message; zero when none
	Count     int       // non-private messages
	First     Message   // the first non-private message; zero when none
	Latest    Message   // the latest non-private message; zero when none
	Origin    string    // the importer that made it (ImportParts), like "claude-code"; "" when made otherwise
}

// Recent returns up to limit conversations (at least 1) of the space, latest activity first,
// leaving out the one whose id is except and those with nothing to read (no messages, or
// only private ones: a model would see "0 messages" and a private step's time). A
// conversation's activity is its latest non-private message's time, or its creation time
// while it has none. It reads the recent index from the end: its cost is limit's, plus the
// conversations with nothing to read it passes, whatever the number of messages.
func (r *Reader) Recent(limit int, except string) ([]Conversation, error) {
	limit = max(limit, 1)
	var out []Conversation
	v := r.v
	if v.recent == nil {
		return out, nil
	}
	c := v.recent.Cursor()
	k, _ := c.Last()
	for k != nil && len(out) < limit {
		// As many as may still be listed, their summaries read at once: each is listed
		// or passed (nothing to read), so no more are read than one by one.
		var ids [][]byte
		for ; k != nil && len(ids) < limit-len(out); k, _ = c.Prev() {
			if len(k) <= activitySize {
				return nil, fmt.Errorf("reading the recent conversations of space %s: malformed key %x", r.space, k)
			}
			if id := k[activitySize:]; string(id) != except {
				ids = append(ids, slices.Clone(id))
			}
		}
		for i, raw := range kv.GetAll(v.summaries, ids) {
			id := string(ids[i])
			sum, err := decodeSummary(id, raw)
			if err != nil {
				return nil, err
			}
			conv, err := sum.conversation(id, v.message)
			if err != nil {
				return nil, err
			}
			if conv.Count == 0 {
				continue
			}
			out = append(out, conv)
		}
	}
	return out, nil
}

// Get returns the summary of the conversation with id, or ErrNotFound.
func (r *Reader) Get(id string) (Conversation, error) {
	return r.v.conversation(id)
}

// Page returns the newest limit (at least 1) non-private messages of conversation id that
// came before the message whose id is before ("" reads from the end), oldest first, and
// whether older ones remain. Its cost is limit's, whatever the conversation's length.
// It returns ErrNotFound for a conversation the space does not have, and ErrBadBefore when
// before is not one of its messages (a private step's id is not one either).
func (r *Reader) Page(id string, limit int, before string) (msgs []Message, more bool, err error) {
	return r.v.page(id, limit, before)
}

// page is Page in v.
func (v view) page(id string, limit int, before string) ([]Message, bool, error) {
	limit = max(limit, 1)
	if v.summaries == nil || v.summaries.Get([]byte(id)) == nil {
		return nil, false, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	var b kv.Bucket
	if v.messages != nil {
		b = v.messages.Bucket([]byte(id))
	}
	if b == nil {
		if before != "" {
			return nil, false, fmt.Errorf("%w: %q", ErrBadBefore, before)
		}
		return nil, false, nil
	}
	c := b.Cursor()
	var k, val []byte
	if before == "" {
		k, val = c.Last()
	} else {
		key, err := parseKey(before)
		if err != nil {
			return nil, false, fmt.Errorf("%w: %q", ErrBadBefore, before)
		}
		if found, _ := c.Seek(key[:]); string(found) != string(key[:]) {
			return nil, false, fmt.Errorf("%w: %q", ErrBadBefore, before)
		}
		k, val = c.Prev()
	}
	msgs := make([]Message, 0, min(limit, 64))
	for ; k != nil && len(msgs) < limit; k, val = c.Prev() {
		m, err := decodeMessage(k, val)
		if err != nil {
			return nil, false, fmt.Errorf("reading a message of conversation %q: %w", id, err)
		}
		msgs = append(msgs, m)
	}
	slices.Reverse(msgs)
	return msgs, k != nil, nil
}

// Say appends m to conversation id, creating the conversation (with that id and title) if the
// space has none. A title that isn't empty replaces the conversation's. m.At zero means now;
// m.ID is ignored (the store makes it); m.From is "person:<id>" or "agent:<name>" (a bare id
// is a person), m.To empty or the same. When m.External names a message the conversation
// already has, nothing is added and that message is returned. It returns the message as kept,
// or ErrBadID, ErrBadText, ErrBadTime, spaces.ErrBadActor or spaces.ErrBadSpace.
func (s *Store) Say(ctx context.Context, id, title string, m Message) (Message, error) {
	if err := CheckID(id); err != nil {
		return Message{}, err
	}
	from, err := spaces.ParseActor(m.From)
	if err != nil {
		return Message{}, fmt.Errorf("from: %w", err)
	}
	m.From = from.String()
	if m.To != "" {
		to, err := spaces.ParseActor(m.To)
		if err != nil {
			return Message{}, fmt.Errorf("to: %w", err)
		}
		m.To = to.String()
	}
	if m.At.IsZero() {
		m.At = s.now()
	}
	if m.External != "" {
		if err := CheckExternal(m.External); err != nil {
			return Message{}, err
		}
	}
	if err := CheckMessage(m); err != nil {
		return Message{}, err
	}
	kept, _, err := s.append(ctx, id, title, m)
	return kept, err
}

// append adds m (checked) to conversation id in one transaction, as Say says.
func (s *Store) append(ctx context.Context, id, title string, m Message) (kept Message, added bool, err error) {
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		w, err := newWriter(tx, s.space)
		if err != nil {
			return err
		}
		t, err := w.thread(id)
		if err != nil {
			return err
		}
		t.setTitle(CleanTitle(title))
		if kept, added, err = w.add(t, m); err != nil {
			return err
		}
		_, err = w.flush()
		return err
	})
	if err != nil {
		return Message{}, false, fmt.Errorf("adding a message to conversation %q: %w", id, err)
	}
	return kept, added, nil
}

// CheckMessage refuses a text or a time that the store cannot keep: ErrBadText, ErrBadTime.
func CheckMessage(m Message) error {
	if m.Text == "" || len(m.Text) > MaxText {
		return fmt.Errorf("%w, got %d bytes", ErrBadText, len(m.Text))
	}
	// Refused rather than repaired, as the tools refuse them: no text is kept with
	// characters nobody wrote, or with NUL bytes other programs cut text short at.
	if !utf8.ValidString(m.Text) {
		return fmt.Errorf("%w: it is not valid UTF-8", ErrBadText)
	}
	if strings.IndexByte(m.Text, 0) >= 0 {
		return fmt.Errorf("%w: it has a NUL byte", ErrBadText)
	}
	return CheckTime(m.At)
}

// CheckTime returns ErrBadTime for a time that a message's id (a ULID) cannot hold.
func CheckTime(at time.Time) error {
	if at.Before(time.Unix(0, 0)) || at.After(maxTime) {
		return fmt.Errorf("%w, got %s", ErrBadTime, at.Format(time.RFC3339))
	}
	return nil
}

// CheckID returns ErrBadID when id cannot name a conversation.
func CheckID(id string) error {
	if !validName(id) {
		return fmt.Errorf("%w, got %q", ErrBadID, truncate(id, 80))
	}
	return nil
}

// CheckExternal is CheckID for a message's external id (an error that says so, not ErrBadID).
func CheckExternal(ext string) error {
	if !validName(ext) {
		return fmt.Errorf("an external id is 1 to 200 bytes of UTF-8 with no control characters, got %q", truncate(ext, 80))
	}
	return nil
}

func validName(s string) bool {
	return s != "" && len(s) <= MaxID && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// CleanTitle makes title one the store keeps as it is, never refusing it: on one line
// (control characters become spaces), UTF-8, the ends trimmed, past 400 bytes cut.
func CleanTitle(title string) string {
	title = strings.ToValidUTF8(title, "\uFFFD")
	title = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, title)
	// A title is a line to list, not a store: past 400 bytes it is cut.
	return truncate(strings.TrimSpace(title), 400)
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
