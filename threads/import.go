package threads

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// ImportSummary says what an Import did.
type ImportSummary struct {
	Conversations int // conversations created or changed (a message added, a new title)
	Messages      int // messages added
	Skipped       int // messages skipped as already there (by external id)
}

// ImportError is returned by Import for input it cannot take, saying where; nothing of that
// input was imported.
type ImportError struct {
	Line  int   // JSON Lines: the line, from 1; 0 for a Claude export
	Index int   // a Claude export: the conversation's index in the array, from 0; -1 when the array itself is wrong, and in JSON Lines
	Err   error // what is wrong; it may wrap ErrBadID, ErrBadText, ErrBadTime or spaces.ErrBadActor
}

func (e *ImportError) Error() string {
	switch {
	case e.Line > 0:
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	case e.Index >= 0:
		return fmt.Sprintf("conversation at index %d: %v", e.Index, e.Err)
	}
	return fmt.Sprintf("Claude export: %v", e.Err)
}

func (e *ImportError) Unwrap() error { return e.Err }

// progressEvery is how many messages pass between two calls of Import's progress function.
const progressEvery = 1000

// Import adds the conversations of r to the space, all in one transaction. r is JSON Lines
// (one message a line, as the SPEC says) or a Claude data export's conversations.json, told
// apart by content: a first non-space byte '[' is a Claude export. me is the person (an id,
// or "person:<id>") that a Claude export's "human" stands for; its "assistant" is
// agent:claude, and its tool_use and tool_result blocks become private messages.
//
// A message already imported (the same external id: a line's id, a Claude message's uuid,
// else a hash of what the line says and how many identical lines came before it) is skipped,
// so importing the same input twice adds nothing the second time.
//
// progress, if not nil, is called with the number of messages read so far, every 1,000 and
// at the end of the input, before anything is written.
//
// Input that Import cannot take gives an *ImportError naming the line (JSON Lines) or the
// conversation's index (Claude), and nothing of r is imported.
func (s *Store) Import(ctx context.Context, r io.Reader, me string, progress func(done int)) (ImportSummary, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if p, _ := br.Peek(3); bytes.Equal(p, []byte("\uFEFF")) {
		_, _ = br.Discard(3)
	}
	claude := isClaude(br)
	// Read and check the whole input first, outside any transaction: reading stdin (or a
	// slow disk) must not hold the data file, which another process may be waiting for.
	im := &importer{now: s.now().Round(0), seen: map[[sha256.Size]byte]int{}, progress: progress}
	var err error
	if claude {
		err = im.claude(br, me)
	} else {
		err = im.jsonl(br)
	}
	if err != nil {
		return ImportSummary{}, err
	}
	if progress != nil && (im.done == 0 || im.done%progressEvery != 0) {
		progress(im.done)
	}
	var sum ImportSummary
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		w, err := newWriter(tx, s.space)
		if err != nil {
			return err
		}
		sum = ImportSummary{}
		for _, o := range im.ops {
			t, err := w.thread(o.conv)
			if err != nil {
				return fmt.Errorf("%s: %w", o.where(), err)
			}
			t.setTitle(o.title)
			if !o.began.IsZero() {
				t.began(o.began)
			}
			for _, m := range im.msgs[o.from:o.to] {
				_, added, err := w.add(t, m)
				if err != nil {
					return fmt.Errorf("%s: importing into conversation %q: %w", o.where(), t.id, err)
				}
				if added {
					sum.Messages++
				} else {
					sum.Skipped++
				}
			}
		}
		sum.Conversations, err = w.flush()
		return err
	})
	if err != nil {
		return ImportSummary{}, err
	}
	return sum, nil
}

// isClaude reports whether the first byte of br that isn't white space is '[', without
// consuming any. Beyond the reader's buffer of white space, it says no: JSON Lines then.
func isClaude(br *bufio.Reader) bool {
	for n := 1; n <= br.Size(); n++ {
		p, _ := br.Peek(n)
		if len(p) < n {
			return false
		}
		switch p[n-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			return true
		}
		return false
	}
	return false
}

// importer reads one input's messages into ops, counting them, to be written afterwards
// in one transaction.
type importer struct {
	ops      []op
	msgs     []Message
	now      time.Time // the time of messages that have none
	seen     map[[sha256.Size]byte]int
	done     int
	progress func(int)
}

// op is messages to add to one conversation, read from one place of the input: msgs[from:to]
// of the importer's.
type op struct {
	line, index int // where it was read: the line (JSON Lines), else the conversation's index
	conv        string
	title       string    // "" keeps the conversation's title
	began       time.Time // a Claude conversation's creation; zero for JSON Lines
	from, to    int
}

func (o op) where() string {
	if o.line > 0 {
		return fmt.Sprintf("line %d", o.line)
	}
	return fmt.Sprintf("conversation at index %d", o.index)
}

// add queues m for conversation conv, with the title given there ("" for none): in the
// last op when it is for the same conversation, title and start, else in a new one.
func (im *importer) add(line, index int, conv, title string, began time.Time, m Message) {
	im.msgs = append(im.msgs, m)
	if n := len(im.ops); n > 0 && im.ops[n-1].conv == conv && im.ops[n-1].title == title && im.ops[n-1].began.Equal(began) {
		im.ops[n-1].to++
	} else {
		im.ops = append(im.ops, op{line: line, index: index, conv: conv, title: title, began: began, from: len(im.msgs) - 1, to: len(im.msgs)})
	}
	im.done++
	if im.progress != nil && im.done%progressEvery == 0 {
		im.progress(im.done)
	}
}

// contentID makes an external id for a message that has none, from what it says, when as
// given ("" when it wasn't), and how many identical messages came before it in this input:
// the same input gives the same ids, and two identical lines stay two messages.
func (im *importer) contentID(conv, at string, m Message) string {
	h := sha256.New()
	for _, f := range []string{conv, at, m.From, m.To, m.Text} {
		_ = binary.Write(h, binary.BigEndian, uint64(len(f)))
		_, _ = io.WriteString(h, f)
	}
	if m.Private {
		_, _ = h.Write([]byte{1})
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	n := im.seen[sum]
	im.seen[sum] = n + 1
	if n > 0 {
		_ = binary.Write(h, binary.BigEndian, uint64(n))
		h.Sum(sum[:0])
	}
	return "sha256:" + hex.EncodeToString(sum[:16])
}
