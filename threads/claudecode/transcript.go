package claudecode

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/threads"
)

// Agent is who the assistant's messages of a Claude Code session are from.
const Agent = "agent:claude-code"

// maxTitle is the length to which a first prompt is cut to title its conversation.
const maxTitle = 80

// maxStep is the length to which a step's rendering (thinking, a tool call or its result) is
// cut, as package threads cuts a Claude export's.
const maxStep = 4 << 10

// record is the part of a transcript line that the import reads; the rest is ignored.
type record struct {
	Type             string   `json:"type"`
	UUID             string   `json:"uuid"`
	SessionID        string   `json:"sessionId"`
	Timestamp        string   `json:"timestamp"`
	IsSidechain      bool     `json:"isSidechain"`
	IsMeta           bool     `json:"isMeta"`
	IsCompactSummary bool     `json:"isCompactSummary"`
	Summary          string   `json:"summary"`     // type "summary"
	CustomTitle      string   `json:"customTitle"` // type "custom-title"
	Message          *message `json:"message"`
}

// message is a record's message: content is a string or an array of blocks.
type message struct {
	Content json.RawMessage `json:"content"`
}

type block struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"` // thinking
	Name     string          `json:"name"`     // tool_use
	Input    json.RawMessage `json:"input"`    // tool_use
	Content  json.RawMessage `json:"content"`  // tool_result: a string, or blocks of text and images
}

// transcript is what the parser keeps of one transcript between lines (and between reads).
type transcript struct {
	Session string    `json:"session,omitempty"` // the conversation that summaries title: the first sessionId seen, else the file's name
	Last    time.Time `json:"last,omitzero"`     // the time of the latest line that had one: lines without take it
	// Title is the latest summary's; Pending while it may not have reached its conversation
	// (a summary comes before the session's first message, or the conversation isn't yet made).
	Title   string    `json:"title,omitempty"`
	Pending bool      `json:"pending,omitempty"`
	stem    string    // the file's name without .jsonl: the session while no line names one
	mod     time.Time // the file's time: the time of messages before any line gave one
}

// own is the file's own conversation: the session its lines name, else its name.
func (f *transcript) own() string {
	if f.Session != "" {
		return f.Session
	}
	return f.stem
}

// parseLine turns one transcript line into the part of a conversation it gives (messages, a
// title), or none; ok is false for a line that isn't a JSON object (the caller counts it).
// me is the person ("person:ana") whose prompts these are.
func (f *transcript) parseLine(raw []byte, me string) (p threads.Part, ok bool) {
	r, ok := decodeRecord(raw)
	if !ok {
		return p, false
	}
	if isSession(r.SessionID) && f.Session == "" {
		f.Session = r.SessionID
	}
	p.Conversation = r.SessionID
	if !isSession(p.Conversation) {
		p.Conversation = f.own()
	}
	at := f.Last
	if at.IsZero() {
		at = f.mod
	}
	if t, err := time.Parse(time.RFC3339Nano, r.Timestamp); err == nil && threads.CheckTime(t) == nil {
		at, f.Last = t, t
	}
	switch r.Type {
	case "summary", "custom-title":
		if t := threads.CleanTitle(r.Summary + r.CustomTitle); t != "" {
			f.Title, f.Pending = t, true
		}
	case "user", "assistant":
		if r.Message != nil {
			p.Messages, p.DefaultTitle = messages(r, raw, at, me)
		}
	default: // system, progress, file-history-snapshot, queue-operation, and what comes next
	}
	return p, true
}

// decodeRecord reads a transcript line's record; ok is false for a line that isn't a JSON
// object.
func decodeRecord(raw []byte) (r record, ok bool) {
	if err := json.Unmarshal(raw, &r); err == nil {
		return r, true
	}
	// A record whose known fields have unexpected types is still a record: retry with
	// only the fields that decode.
	var loose map[string]json.RawMessage
	if json.Unmarshal(raw, &loose) != nil {
		return record{}, false
	}
	return looseRecord(loose), true
}

// messages is what a user or assistant record (raw, as read) says, at at: its steps as
// private messages, then its text; and, when the text is a prompt the person typed, the title
// it gives a conversation that has none.
func messages(r record, raw []byte, at time.Time, me string) ([]threads.Message, string) {
	ext := r.UUID
	if threads.CheckExternal(ext) != nil || len(ext) > threads.MaxID-8 { // room for a step's "#<block>"
		sum := sha256.Sum256(raw)
		ext = "sha256:" + hex.EncodeToString(sum[:16])
	}
	base := threads.Message{At: at, From: Agent, Private: r.IsSidechain}
	if r.Type == "user" {
		base.From, base.To = me, Agent
		// Not typed by the person: notes Claude Code adds (isMeta), the summary it writes when
		// it compacts a session, and the wrappers of slash commands and their output.
		base.Private = base.Private || r.IsMeta || r.IsCompactSummary
	}
	texts, msgs := content(r, base, ext)
	joined := strings.TrimSpace(strings.Join(texts, "\n\n"))
	if joined == "" {
		return msgs, ""
	}
	pub := base
	pub.Text = cleanText(joined, threads.MaxText)
	pub.External = ext
	if r.Type == "user" && !pub.Private && isCommandText(joined) {
		pub.Private = true
	}
	msgs = append(msgs, pub)
	if r.Type == "user" && !pub.Private {
		return msgs, promptTitle(joined)
	}
	return msgs, ""
}

// content reads a record's message: a string is its one text; an array of blocks gives the
// texts of its text blocks (and [image] for an image in a prompt), and each step (thinking,
// a tool call or its result) as a private message like base, its external id ext#<block>.
// Content of any other shape gives nothing.
func content(r record, base threads.Message, ext string) (texts []string, steps []threads.Message) {
	raw := bytes.TrimSpace(r.Message.Content)
	var text string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &text) == nil {
		return []string{text}, nil
	}
	var blocks []block
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &blocks) != nil {
		return nil, nil
	}
	for i, b := range blocks {
		var step string
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
			continue
		case "image":
			if r.Type == "user" {
				texts = append(texts, "[image]")
			}
			continue
		case "thinking":
			step = "thinking " + b.Thinking
		case "redacted_thinking":
			step = "thinking (redacted)"
		case "tool_use":
			step = "tool_use " + b.Name + " " + compactJSON(b.Input)
		case "tool_result":
			step = "tool_result " + resultText(b.Content)
		default:
			continue
		}
		s := base
		s.Private = true
		s.Text = cleanText(strings.TrimSpace(step), maxStep)
		s.External = ext + "#" + strconv.Itoa(i)
		steps = append(steps, s)
	}
	return texts, steps
}

// titled gives p the pending summary title when it adds to the file's own conversation.
func (f *transcript) titled(p threads.Part) threads.Part {
	if f.Pending && len(p.Messages) > 0 && p.Conversation == f.own() {
		p.Title, f.Pending = f.Title, false
	}
	return p
}

// isCommandText reports whether a user record's text is Claude Code's wrapping of a slash
// command or of a local command's output rather than a prompt.
func isCommandText(s string) bool {
	for _, p := range []string{"<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>", "<command-args>", "Caveat: The messages below were generated by the user while running local commands"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// looseRecord reads the fields of a record that decode, leaving the others zero.
func looseRecord(fields map[string]json.RawMessage) record {
	var r record
	str := func(name string, to *string) { _ = json.Unmarshal(fields[name], to) }
	flag := func(name string, to *bool) { _ = json.Unmarshal(fields[name], to) }
	str("type", &r.Type)
	str("uuid", &r.UUID)
	str("sessionId", &r.SessionID)
	str("timestamp", &r.Timestamp)
	str("summary", &r.Summary)
	str("customTitle", &r.CustomTitle)
	flag("isSidechain", &r.IsSidechain)
	flag("isMeta", &r.IsMeta)
	flag("isCompactSummary", &r.IsCompactSummary)
	var m message
	if json.Unmarshal(fields["message"], &m) == nil {
		r.Message = &m
	}
	return r
}

// resultText renders a tool result's content: a string as it is, text blocks joined, an
// image as [image], anything else as compact JSON.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return compactJSON(raw)
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image]")
		default:
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}

// cleanText makes s a text the store keeps, never refusing it: NUL bytes become the symbol
// for them, bytes that aren't UTF-8 become U+FFFD, and past n bytes it is cut.
func cleanText(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\u2400")
	}
	if len(s) > n {
		s = cut(s, n-len("…"))
	}
	return s
}

// promptTitle makes a title of a prompt: its first line that says something, white space
// folded, cut at maxTitle bytes.
func promptTitle(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			return threads.CleanTitle(cut(l, maxTitle))
		}
	}
	return ""
}

// splitLines calls fn with each complete line of buf (ending in '\n', without it) and the
// offset just past it, and returns the offset after the last line taken. A last line without
// its '\n' is taken when it is a whole JSON value (a record is an object: no prefix of one
// is one), and otherwise left to wait for the rest of it.
func splitLines(buf []byte, base int64, fn func(line []byte, end int64)) int64 {
	done := 0
	for done < len(buf) {
		i := bytes.IndexByte(buf[done:], '\n')
		if i < 0 {
			rest := bytes.TrimSpace(buf[done:])
			if len(rest) > 0 && json.Valid(rest) {
				fn(rest, base+int64(len(buf)))
				done = len(buf)
			}
			break
		}
		fn(bytes.TrimSuffix(buf[done:done+i], []byte("\r")), base+int64(done+i+1))
		done += i + 1
	}
	return base + int64(done)
}

// cut cuts s to at most n bytes, on a rune boundary, marking the cut with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// compactJSON is raw without its white space, or as it is when it isn't JSON.
func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// isSession reports whether s looks like a Claude Code session's id: a UUID
// (8-4-4-4-12 hexadecimal digits), as Claude Code names its sessions and their files. A
// record naming anything else names no session, and is its file's.
func isSession(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}
