package threads

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/internal/jsonargs"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// claudeAgent is who a Claude export's "assistant" messages are from.
const claudeAgent = "agent:claude"

// maxStep is the length to which a tool_use or tool_result block's rendering is cut.
const maxStep = 4 << 10

// claudeConversation is one element of a Claude export's conversations.json. Fields not
// named here are ignored: exports gain fields over time.
type claudeConversation struct {
	UUID         string          `json:"uuid"`
	Name         string          `json:"name"`
	CreatedAt    string          `json:"created_at"`
	ChatMessages []claudeMessage `json:"chat_messages"`
}

type claudeMessage struct {
	UUID      string        `json:"uuid"`
	Sender    string        `json:"sender"`
	Text      string        `json:"text"`
	Content   []claudeBlock `json:"content"`
	CreatedAt string        `json:"created_at"`
}

type claudeBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`    // tool_use
	Input   json.RawMessage `json:"input"`   // tool_use
	Content json.RawMessage `json:"content"` // tool_result: a string, or blocks of text
}

// claude imports a Claude export from r, decoding one conversation at a time.
func (im *importer) claude(r io.Reader, me string) error {
	person, err := spaces.ParseActor(me)
	if err != nil || person.Agent {
		return fmt.Errorf("importing a Claude export needs the person its \"human\" messages are from (person:<id>), got %q", me)
	}
	in := &budget{r: &utf8Reader{r: r}, limit: maxConversation}
	in.reset()
	dec := json.NewDecoder(in)
	tok, err := dec.Token()
	if err != nil {
		return &ImportError{Index: -1, Err: fmt.Errorf("not valid JSON: %v", err)}
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return &ImportError{Index: -1, Err: errors.New("a Claude export is a JSON array of conversations")}
	}
	for i := 0; dec.More(); i++ {
		var (
			raw json.RawMessage
			c   claudeConversation
		)
		in.reset()
		if err := dec.Decode(&raw); err != nil {
			return &ImportError{Index: i, Err: decodeError(err)}
		}
		// The decoder would turn an escape of half a character into U+FFFD: refuse it, as
		// the tools do.
		if at := jsonargs.LoneSurrogate(raw); at >= 0 {
			return &ImportError{Index: i, Err: fmt.Errorf("%w, at byte %d of the conversation", jsonargs.ErrSurrogate, at)}
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return &ImportError{Index: i, Err: decodeError(err)}
		}
		raw = nil
		conv, err := im.parseClaude(c, person.String())
		if err != nil {
			return &ImportError{Index: i, Err: err}
		}
		if len(conv.msgs) == 0 {
			im.ops = append(im.ops, op{index: i, conv: c.UUID, title: conv.title, began: conv.created, from: len(im.msgs), to: len(im.msgs)})
		}
		for _, m := range conv.msgs {
			im.add(0, i, c.UUID, conv.title, conv.created, m)
		}
	}
	if _, err := dec.Token(); err != nil {
		return &ImportError{Index: -1, Err: fmt.Errorf("not valid JSON: %v", err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &ImportError{Index: -1, Err: errors.New("there is more after the array of conversations")}
	}
	return nil
}

// parsedConversation is a Claude conversation read and checked, ready to add.
type parsedConversation struct {
	title   string
	created time.Time
	msgs    []Message
}

// parseClaude checks conversation c and turns its messages into ours: each tool_use and
// tool_result block a private message, then the text blocks together as one message.
func (im *importer) parseClaude(c claudeConversation, person string) (parsedConversation, error) {
	if err := CheckID(c.UUID); err != nil {
		return parsedConversation{}, fmt.Errorf("uuid: %w", err)
	}
	p := parsedConversation{title: CleanTitle(c.Name), created: im.now}
	convAt := ""
	if c.CreatedAt != "" {
		t, err := parseTime(c.CreatedAt)
		if err != nil {
			return parsedConversation{}, fmt.Errorf("created_at: %w", err)
		}
		p.created, convAt = t, c.CreatedAt
	}
	for j, cm := range c.ChatMessages {
		msgs, err := im.parseClaudeMessage(c.UUID, convAt, cm, person, p.created)
		if err != nil {
			return parsedConversation{}, fmt.Errorf("message at index %d: %w", j, err)
		}
		p.msgs = append(p.msgs, msgs...)
	}
	return p, nil
}

func (im *importer) parseClaudeMessage(conv, convAt string, cm claudeMessage, person string, created time.Time) ([]Message, error) {
	var base Message
	switch cm.Sender {
	case "human":
		base.From, base.To = person, claudeAgent
	case "assistant":
		base.From = claudeAgent
	default:
		return nil, fmt.Errorf("sender %q: want \"human\" or \"assistant\"", truncate(cm.Sender, 40))
	}
	at := convAt
	base.At = created
	if cm.CreatedAt != "" {
		t, err := parseTime(cm.CreatedAt)
		if err != nil {
			return nil, fmt.Errorf("created_at: %w", err)
		}
		base.At, at = t, cm.CreatedAt
	}
	if err := CheckMessage(Message{Text: "-", At: base.At}); err != nil {
		return nil, fmt.Errorf("created_at: %w", err)
	}
	if cm.UUID != "" {
		if err := CheckExternal(cm.UUID); err != nil {
			return nil, fmt.Errorf("uuid: %w", err)
		}
	}

	var msgs []Message
	var texts []string
	for b, block := range cm.Content {
		var step string
		switch block.Type {
		case "text":
			texts = append(texts, block.Text)
			continue
		case "tool_use":
			step = "tool_use " + block.Name + " " + compactJSON(block.Input)
		case "tool_result":
			step = "tool_result " + resultText(block.Content)
		default: // images, thinking and what else exports may hold: not said, not a tool step
			continue
		}
		m := base
		// A tool step is a short summary nobody is shown: a NUL in a tool's output is
		// written as the symbol for it rather than refusing the whole export.
		step = strings.ReplaceAll(step, "\x00", "\u2400")
		m.Text, m.Private = truncate(strings.TrimSpace(step), maxStep), true
		if cm.UUID != "" {
			m.External = cm.UUID + "#" + strconv.Itoa(b)
		} else {
			m.External = im.contentID(conv, at, m)
		}
		msgs = append(msgs, m)
	}
	text := strings.Join(texts, "\n\n")
	if len(cm.Content) == 0 {
		text = cm.Text
	}
	if strings.TrimSpace(text) == "" {
		return msgs, nil
	}
	if len(text) > MaxText {
		return nil, fmt.Errorf("text: %w, got %d bytes", ErrBadText, len(text))
	}
	m := base
	m.Text = text
	if err := CheckMessage(m); err != nil {
		return nil, fmt.Errorf("text: %w", err)
	}
	if cm.UUID != "" {
		m.External = cm.UUID
	} else {
		m.External = im.contentID(conv, at, m)
	}
	return append(msgs, m), nil
}

// parseTime reads a Claude export's time: RFC 3339, with fractions of a second or not.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want an RFC 3339 time like 2026-11-08T10:42:00Z, got %q", truncate(s, 40))
	}
	return t, nil
}

// resultText renders a tool_result's content: a string as it is, blocks of text joined, and
// anything else as compact JSON.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) == nil {
		var texts []string
		for _, b := range blocks {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n")
		}
	}
	return compactJSON(raw)
}

func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// decodeError says what went wrong decoding a conversation, naming the field for a type that
// doesn't fit.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("field %s: a JSON %s where %s belongs", te.Field, te.Value, jsonKind(te.Type))
	}
	return fmt.Errorf("not valid JSON: %v", err)
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array"
	case reflect.Struct:
		return "an object"
	case reflect.Bool:
		return "true or false"
	}
	return t.String()
}

// maxConversation bounds the JSON of one conversation of a Claude export: the decoder holds
// a whole value in memory, so a 1 GB one would take gigabytes before it could be refused.
const maxConversation = 64 << 20

var errBigConversation = fmt.Errorf("the conversation's JSON is over %d MiB", maxConversation>>20)

// budget reads from r, failing once more than limit bytes were read since the last reset.
type budget struct {
	r           io.Reader
	limit, left int64
}

func (b *budget) reset() { b.left = b.limit }

func (b *budget) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errBigConversation
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// utf8Reader passes r's bytes on, failing at the first that isn't valid UTF-8: the JSON
// decoder would quietly turn it into U+FFFD.
type utf8Reader struct {
	r      io.Reader
	buf    []byte // read from r: buf[:ready] checked, buf[ready:] the start of a cut character
	ready  int
	offset int64 // of buf[0] in the input
	err    error
}

func (u *utf8Reader) Read(p []byte) (int, error) {
	for u.ready == 0 {
		if u.err != nil {
			if len(u.buf) > 0 {
				return 0, fmt.Errorf("not valid UTF-8 at byte %d: a character is cut short", u.offset)
			}
			return 0, u.err
		}
		if cap(u.buf)-len(u.buf) < 4096 {
			u.buf = append(make([]byte, 0, len(u.buf)+32<<10), u.buf...)
		}
		n, err := u.r.Read(u.buf[len(u.buf):cap(u.buf)])
		u.buf, u.err = u.buf[:len(u.buf)+n], err
		for u.ready < len(u.buf) {
			if !utf8.FullRune(u.buf[u.ready:]) {
				break
			}
			r, size := utf8.DecodeRune(u.buf[u.ready:])
			if r == utf8.RuneError && size == 1 {
				return 0, fmt.Errorf("not valid UTF-8 at byte %d", u.offset+int64(u.ready))
			}
			u.ready += size
		}
	}
	n := copy(p, u.buf[:u.ready])
	u.buf = u.buf[n:]
	u.ready -= n
	u.offset += int64(n)
	return n, nil
}
