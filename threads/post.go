package threads

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Post is one message sent by a chat integration (a Slack or Discord bridge, a support
// inbox), field by field as it came: Add checks each as an import checks a line.
type Post struct {
	From    string // person:<id> or agent:<name>
	To      string // optional: person:<id> or agent:<name>
	Text    string
	At      string // optional: RFC 3339; now when empty
	Private bool
	ID      string // optional: the sender's id for the message; the same id is added once
	Title   string // optional: the conversation's title (replaces it)
}

// FieldError is a Post that Add refuses, naming the field at fault.
type FieldError struct {
	Field string // "from", "text", ... or "conversation" for the conversation's id
	Err   error
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %q: %v", e.Field, e.Err) }
func (e *FieldError) Unwrap() error { return e.Err }

// Add adds p to conversation conv (made if the space has none), checking it as Import checks
// a line of JSON Lines. It returns the message as kept and whether it is new: a p whose ID
// the conversation already has adds nothing, and the message kept under that id is returned.
// A p that can't be kept gives a *FieldError.
func (s *Store) Add(ctx context.Context, conv string, p Post) (Message, bool, error) {
	m, err := s.checkPost(conv, p)
	if err != nil {
		return Message{}, false, err
	}
	return s.append(ctx, conv, p.Title, m)
}

// checkPost turns p into the message to add, or says which field is at fault.
func (s *Store) checkPost(conv string, p Post) (Message, error) {
	if err := CheckID(conv); err != nil {
		return Message{}, &FieldError{"conversation", err}
	}
	var m Message
	var err error
	if p.From == "" {
		return Message{}, &FieldError{"from", errors.New("missing: who says it, person:<id> or agent:<name>")}
	}
	if m.From, err = prefixedActor(p.From); err != nil {
		return Message{}, &FieldError{"from", err}
	}
	if p.To != "" {
		if m.To, err = prefixedActor(p.To); err != nil {
			return Message{}, &FieldError{"to", err}
		}
	}
	m.Text, m.Private = p.Text, p.Private
	m.At = s.now()
	if p.At != "" {
		if m.At, err = time.Parse(time.RFC3339Nano, p.At); err != nil {
			return Message{}, &FieldError{"at", fmt.Errorf("want an RFC 3339 time like 2026-11-08T10:42:00Z, got %q", truncate(p.At, 40))}
		}
	}
	if err := CheckMessage(m); err != nil {
		field := "text"
		if errors.Is(err, ErrBadTime) {
			field = "at"
		}
		return Message{}, &FieldError{field, err}
	}
	if p.ID != "" {
		if err := CheckExternal(p.ID); err != nil {
			return Message{}, &FieldError{"id", err}
		}
		m.External = p.ID
	}
	return m, nil
}
