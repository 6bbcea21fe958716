package threads

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// Why a version was made: an imported conversation (a Claude Code transcript, imported or
// followed) holds the tool calls its agent made and their answers. An answer that saved a
// version says so in words the server wrote: "Saved [Title](…/document/<id>) as version N".
// When such an answer is imported, the space's conversations note it (whyName), keyed by
// the document and version, in the transaction that adds the message: the link is found by
// the answer naming the version, never guessed from times. A transcript imported after the
// version was made (the import runs later, or the follower catches up) links it from then
// on: the link is read when the version is shown, not fixed when it is made. The note is in
// the conversation's space and read only in the document's: a conversation of another space
// is never named (docs/PRIVACY.md).

var whyName = []byte("why") // <document id><version, 8 bytes>: {"c": conversation, "m": the answer's message}

// savedAnswer is the write tools' answer, as a tool_result step holds it.
var savedAnswer = regexp.MustCompile(`Saved \[(?:[^\]\\]|\\.)*\]\((?:[^()\s]*/document/|compass://document/)([0-9A-HJKMNP-TV-Z]{26})\) as version (\d{1,9})\b`)

type whyNote struct {
	Conversation string `json:"c"`
	Message      string `json:"m"`
}

func whyKey(doc string, n int) []byte { return binary.BigEndian.AppendUint64([]byte(doc), uint64(n)) }

// noteWhy notes the versions a tool's answer m, just added to conversation conv, says it
// saved.
func (w *writer) noteWhy(conv string, m Message) error {
	if !m.Private || !strings.HasPrefix(m.Text, "tool_result ") {
		return nil
	}
	found := savedAnswer.FindAllStringSubmatch(m.Text, 8)
	if len(found) == 0 {
		return nil
	}
	b, err := w.root.CreateBucketIfNotExists(whyName)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(whyNote{Conversation: conv, Message: m.ID})
	if err != nil {
		return err
	}
	for _, f := range found {
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 1 {
			continue
		}
		if err := b.Put(whyKey(f[1], n), raw); err != nil {
			return fmt.Errorf("noting why version %d of %s was made: %w", n, f[1], err)
		}
	}
	return nil
}

// Why is the conversation a version was made in, and the person's message that led to it.
type Why struct {
	Conversation Conversation
	Prompt       Message // the person's latest message before the tool's answer; zero if none
}

// whyBack is how many of a conversation's messages before the answer Why looks through for
// the person's message.
const whyBack = 200

// Why returns the conversation of r's space that version n of document doc was made in,
// and the person's message that led to it; ok is false when none of the space's
// conversations says it made that version.
func (r *Reader) Why(doc string, n int) (w Why, ok bool, err error) {
	root := spaces.Sub(r.tx, r.space, rootName)
	if root == nil {
		return w, false, nil
	}
	b := root.Bucket(whyName)
	if b == nil {
		return w, false, nil
	}
	raw := b.Get(whyKey(doc, n))
	if raw == nil {
		return w, false, nil
	}
	var note whyNote
	if err := json.Unmarshal(raw, &note); err != nil {
		return w, false, fmt.Errorf("reading why version %d of %s was made: %w", n, doc, err)
	}
	v := r.v
	if w.Conversation, err = v.conversation(note.Conversation); err != nil {
		return w, false, nil // the conversation was deleted since
	}
	key, err := parseKey(note.Message)
	if err != nil || v.messages == nil {
		return w, true, nil
	}
	if msgs := v.messages.Bucket([]byte(note.Conversation)); msgs != nil {
		w.Prompt, err = lastPrompt(msgs, key[:])
	}
	return w, true, err
}

// lastPrompt is the latest message of a person before key in a conversation's messages.
func lastPrompt(msgs kv.Bucket, key []byte) (Message, error) {
	c := msgs.Cursor()
	k, v := c.Seek(key)
	if k == nil {
		k, v = c.Last()
	} else if bytes.Equal(k, key) || bytes.Compare(k, key) > 0 {
		k, v = c.Prev()
	}
	for i := 0; k != nil && i < whyBack; i++ {
		m, err := decodeMessage(k, v)
		if err != nil {
			return Message{}, err
		}
		if strings.HasPrefix(m.From, "person:") {
			return m, nil
		}
		k, v = c.Prev()
	}
	return Message{}, nil
}

// Say says w in one line: `from conversation “Launch” (ID): Ana: move the launch to the
// 9th`, the person's message cut at about 120 characters.
func (w Why) Say(names spaces.Names) string {
	title := w.Conversation.Title
	if title == "" {
		title = w.Conversation.ID
	}
	s := fmt.Sprintf("from conversation “%s” (%s)", title, w.Conversation.ID)
	if w.Prompt.ID != "" {
		text := strings.Join(strings.Fields(w.Prompt.Text), " ")
		if r := []rune(text); len(r) > 120 {
			text = string(r[:120]) + "…"
		}
		s += ": " + names.ShowString(w.Prompt.From) + ": " + text
	}
	return s
}
