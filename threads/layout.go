package threads

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/search"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/oklog/ulid/v2"
)

// rootName is the one bucket threads owns inside a space's bucket; the rest nest in it.
const rootName = "conversations"

var (
	summaryName  = []byte("summary")
	recentName   = []byte("recent")
	messagesName = []byte("messages")
	privateName  = []byte("private")
	externalName = []byte("external")
)

// activitySize is the length of the time that starts a key of the recent index.
const activitySize = 12

// maxTime is the latest time a ULID can hold.
var maxTime = ulid.Time(ulid.MaxTime())

// summary is a conversation's stored summary: what Recent shows without reading messages
// other than the two it names.
type summary struct {
	Title   string    `json:"title,omitempty"`
	Created time.Time `json:"created"`
	Last    time.Time `json:"last,omitzero"`
	Count   int       `json:"count,omitempty"`
	First   string    `json:"first,omitempty"`  // ULID of the first non-private message
	Latest  string    `json:"latest,omitempty"` // ULID of the latest non-private message
	Origin  string    `json:"origin,omitempty"` // the importer that made it (ImportParts' Origin); "" for the others
}

// activity is the time a conversation is listed by in recent.
func (s summary) activity() time.Time {
	if s.Count > 0 {
		return s.Last
	}
	return s.Created
}

// record is a message as stored; its id is its key.
type record struct {
	At       time.Time `json:"at"`
	From     string    `json:"from"`
	To       string    `json:"to,omitempty"`
	Text     string    `json:"text"`
	Private  bool      `json:"private,omitempty"`
	External string    `json:"external,omitempty"`
}

func decodeMessage(key, val []byte) (Message, error) {
	var id ulid.ULID
	if err := id.UnmarshalBinary(key); err != nil {
		return Message{}, fmt.Errorf("malformed key %x: %w", key, err)
	}
	var r record
	if err := json.Unmarshal(val, &r); err != nil {
		return Message{}, fmt.Errorf("malformed message %s: %w", id, err)
	}
	return Message{ID: id.String(), At: r.At, From: r.From, To: r.To, Text: r.Text, Private: r.Private, External: r.External}, nil
}

func parseKey(s string) (ulid.ULID, error) { return ulid.ParseStrict(s) }

// activityKey is the key of conversation id in the recent index.
func activityKey(t time.Time, id string) []byte {
	k := make([]byte, activitySize+len(id))
	binary.BigEndian.PutUint64(k, uint64(t.Unix())^1<<63)
	binary.BigEndian.PutUint32(k[8:], uint32(t.Nanosecond()))
	copy(k[activitySize:], id)
	return k
}

// view is a space's buckets for reading; each is nil until something was written there.
type view struct {
	summaries, recent, messages, private, external kv.Bucket
}

func readView(tx kv.Tx, space string) view {
	root := spaces.Sub(tx, space, rootName)
	if root == nil {
		return view{}
	}
	return view{
		summaries: root.Bucket(summaryName),
		recent:    root.Bucket(recentName),
		messages:  root.Bucket(messagesName),
		private:   root.Bucket(privateName),
		external:  root.Bucket(externalName),
	}
}

// items reads the ids of the conversations that are the index x's items nums (x.Keys) and
// their stored summaries, each read at once: in nums' order, "" and nil for an item the
// index has no key for, nil for a conversation v doesn't have.
func (v view) items(x search.Index, nums []uint32) (ids []string, sums [][]byte) {
	ids = x.Keys(nums)
	ks := make([][]byte, len(ids))
	for i, id := range ids {
		ks[i] = []byte(id)
	}
	return ids, kv.GetAll(v.summaries, ks)
}

// conversation reads the summary of conversation id and its first and latest messages.
func (v view) conversation(id string) (Conversation, error) {
	var raw []byte
	if v.summaries != nil {
		raw = v.summaries.Get([]byte(id))
	}
	s, err := decodeSummary(id, raw)
	if err != nil {
		return Conversation{}, err
	}
	return s.conversation(id, v.message)
}

// decodeSummary decodes raw, conversation id's stored summary; nil is ErrNotFound.
func decodeSummary(id string, raw []byte) (summary, error) {
	if raw == nil {
		return summary{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	var s summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return summary{}, fmt.Errorf("reading the summary of conversation %q: %w", id, err)
	}
	return s, nil
}

// conversation is s, the summary of conversation id, with its first and latest messages
// as message (view.message, or one that finds them in what was read) gives them.
func (s summary) conversation(id string, message func(conv, msg string) (Message, error)) (Conversation, error) {
	conv := Conversation{ID: id, Title: s.Title, Created: s.Created, Last: s.Last, Count: s.Count, Origin: s.Origin}
	var err error
	if conv.First, err = message(id, s.First); err != nil {
		return Conversation{}, err
	}
	if conv.Latest, err = message(id, s.Latest); err != nil {
		return Conversation{}, err
	}
	return conv, nil
}

// message reads the non-private message of conversation conv whose id is msg; "" gives the
// zero Message.
func (v view) message(conv, msg string) (Message, error) {
	if msg == "" {
		return Message{}, nil
	}
	key, err := parseKey(msg)
	if err != nil {
		return Message{}, fmt.Errorf("conversation %q names message %q: %w", conv, msg, err)
	}
	var val []byte
	if v.messages != nil {
		if b := v.messages.Bucket([]byte(conv)); b != nil {
			val = b.Get(key[:])
		}
	}
	if val == nil {
		return Message{}, errMissing(conv, msg)
	}
	m, err := decodeMessage(key[:], val)
	if err != nil {
		return Message{}, fmt.Errorf("reading a message of conversation %q: %w", conv, err)
	}
	return m, nil
}

// errMissing is the error of conversation conv naming message msg, which it doesn't have.
func errMissing(conv, msg string) error {
	return fmt.Errorf("conversation %q names message %s, which it doesn't have", conv, msg)
}

// writer adds to a space's conversations within one write transaction, keeping the summaries
// of the conversations it touched in memory until flush writes them, once each.
type writer struct {
	v       view
	root    kv.Bucket
	threads map[string]*thread
}

// thread is one conversation being written to.
type thread struct {
	id              string
	sum             summary
	stored          []byte // its key in recent as stored; nil for a new conversation
	changed         bool
	msgs, priv, ext kv.Bucket
	found           found // what the search index must learn of it
}

func newWriter(tx kv.Tx, space string) (*writer, error) {
	root, err := spaces.CreateSub(tx, space, rootName)
	if err != nil {
		return nil, err
	}
	var v view
	for _, b := range []struct {
		to   *kv.Bucket
		name []byte
	}{{&v.summaries, summaryName}, {&v.recent, recentName}, {&v.messages, messagesName}, {&v.private, privateName}, {&v.external, externalName}} {
		if *b.to, err = root.CreateBucketIfNotExists(b.name); err != nil {
			return nil, fmt.Errorf("creating the %s bucket of space %s: %w", b.name, space, err)
		}
	}
	return &writer{v: v, root: root, threads: map[string]*thread{}}, nil
}

// thread returns conversation id, to be written to, making it if the space has none.
func (w *writer) thread(id string) (*thread, error) {
	if t := w.threads[id]; t != nil {
		return t, nil
	}
	if err := CheckID(id); err != nil {
		return nil, err
	}
	t := &thread{id: id}
	if raw := w.v.summaries.Get([]byte(id)); raw != nil {
		if err := json.Unmarshal(raw, &t.sum); err != nil {
			return nil, fmt.Errorf("reading the summary of conversation %q: %w", id, err)
		}
		t.stored = activityKey(t.sum.activity(), id)
	} else {
		t.changed = true
	}
	var err error
	if t.msgs, err = w.v.messages.CreateBucketIfNotExists([]byte(id)); err != nil {
		return nil, fmt.Errorf("creating the messages bucket of conversation %q: %w", id, err)
	}
	if t.priv, err = w.v.private.CreateBucketIfNotExists([]byte(id)); err != nil {
		return nil, fmt.Errorf("creating the private bucket of conversation %q: %w", id, err)
	}
	if t.ext, err = w.v.external.CreateBucketIfNotExists([]byte(id)); err != nil {
		return nil, fmt.Errorf("creating the external bucket of conversation %q: %w", id, err)
	}
	w.threads[id] = t
	return t, nil
}

// setTitle gives t title, unless title is empty.
func (t *thread) setTitle(title string) {
	if title != "" && title != t.sum.Title {
		t.found.retitle(t.sum.Title, title)
		t.sum.Title = title
		t.changed = true
	}
}

// began records that t began at at, unless it began earlier.
func (t *thread) began(at time.Time) {
	if t.sum.Created.IsZero() || at.Before(t.sum.Created) {
		t.sum.Created = at
		t.changed = true
	}
}

// add appends m (checked by the caller) to t and returns it as kept, and whether it is new:
// a message whose External t already has is not added again, and that one is returned.
func (w *writer) add(t *thread, m Message) (Message, bool, error) {
	if m.External != "" {
		if key := t.ext.Get([]byte(m.External)); key != nil {
			val := t.msgs.Get(key)
			if val == nil {
				val = t.priv.Get(key)
			}
			if val == nil {
				return Message{}, false, fmt.Errorf("external id %q names message %x, which conversation %q doesn't have", m.External, key, t.id)
			}
			old, err := decodeMessage(key, val)
			return old, false, err
		}
	}
	m.At = m.At.Round(0) // no monotonic clock reading: the time as it will be read back
	id, err := newKey(m.At, t.msgs, t.priv)
	if err != nil {
		return Message{}, false, err
	}
	m.ID = id.String()
	val, err := json.Marshal(record{At: m.At, From: m.From, To: m.To, Text: m.Text, Private: m.Private, External: m.External})
	if err != nil {
		return Message{}, false, fmt.Errorf("encoding message %s: %w", m.ID, err)
	}
	b := t.msgs
	if m.Private {
		b = t.priv
	}
	if err := b.Put(id[:], val); err != nil {
		return Message{}, false, fmt.Errorf("storing message %s: %w", m.ID, err)
	}
	if m.External != "" {
		if err := t.ext.Put([]byte(m.External), id[:]); err != nil {
			return Message{}, false, fmt.Errorf("storing the external id of message %s: %w", m.ID, err)
		}
	}
	t.began(m.At)
	if !m.Private {
		t.found.said(m.Text)
		t.sum.Count++
		if t.sum.First == "" || m.ID < t.sum.First {
			t.sum.First = m.ID
		}
		if t.sum.Latest == "" || m.ID > t.sum.Latest {
			t.sum.Latest = m.ID
			t.sum.Last = m.At
		}
	}
	t.changed = true
	return m, true, nil
}

// flush writes the summaries of the conversations that changed, and moves them in recent.
// It returns how many changed.
func (w *writer) flush() (int, error) {
	n := 0
	for id, t := range w.threads {
		if !t.changed {
			continue
		}
		n++
		if t.sum.Created.IsZero() {
			return n, fmt.Errorf("conversation %q has no time to be listed by", id)
		}
		val, err := json.Marshal(t.sum)
		if err != nil {
			return n, fmt.Errorf("encoding the summary of conversation %q: %w", id, err)
		}
		if err := w.v.summaries.Put([]byte(id), val); err != nil {
			return n, fmt.Errorf("storing the summary of conversation %q: %w", id, err)
		}
		key := activityKey(t.sum.activity(), id)
		if t.stored != nil && !bytes.Equal(t.stored, key) {
			if err := w.v.recent.Delete(t.stored); err != nil {
				return n, fmt.Errorf("moving conversation %q in recent: %w", id, err)
			}
		}
		if err := w.v.recent.Put(key, nil); err != nil {
			return n, fmt.Errorf("listing conversation %q in recent: %w", id, err)
		}
		if err := w.index(t); err != nil {
			return n, fmt.Errorf("indexing conversation %q: %w", id, err)
		}
		t.stored, t.changed = key, false
	}
	return n, nil
}

// newKey makes the ULID of a message at at, greater than any key of the same millisecond in
// bs: the messages of one conversation in one millisecond keep the order they were added in.
func newKey(at time.Time, bs ...kv.Bucket) (ulid.ULID, error) {
	var id ulid.ULID
	if err := id.SetTime(ulid.Timestamp(at)); err != nil || at.Before(time.Unix(0, 0)) {
		return id, fmt.Errorf("%w, got %s", ErrBadTime, at.Format(time.RFC3339))
	}
	var last []byte
	for _, b := range bs {
		if k := lastWithPrefix(b, id[:6]); k != nil && bytes.Compare(k, last) > 0 {
			last = k
		}
	}
	var r [10]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	if last == nil {
		// The top bit clear leaves room for 2^79 increments in this millisecond.
		r[0] &= 0x7f
		copy(id[6:], r[:])
		return id, nil
	}
	// One more than the last, plus up to 2^16-1 at random: still not guessable from the last.
	step := 1 + uint64(binary.BigEndian.Uint16(r[:2]))
	hi := binary.BigEndian.Uint16(last[6:8])
	lo := binary.BigEndian.Uint64(last[8:16])
	lo += step
	if lo < step {
		hi++
		if hi == 0 {
			return id, fmt.Errorf("too many messages in the millisecond of %s", at.Format(time.RFC3339Nano))
		}
	}
	binary.BigEndian.PutUint16(id[6:8], hi)
	binary.BigEndian.PutUint64(id[8:16], lo)
	return id, nil
}

// lastWithPrefix returns a copy of the last key of b that starts with prefix, or nil.
func lastWithPrefix(b kv.Bucket, prefix []byte) []byte {
	c := b.Cursor()
	next := append([]byte(nil), prefix...)
	i := len(next) - 1
	for ; i >= 0; i-- {
		next[i]++
		if next[i] != 0 {
			break
		}
	}
	var k []byte
	if i < 0 {
		k, _ = c.Last()
	} else if k, _ = c.Seek(next); k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return nil
	}
	return append([]byte(nil), k...)
}
