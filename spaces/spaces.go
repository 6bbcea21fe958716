// Package spaces says what a space is and who is in it, and scopes every lookup to one space.
//
// Every document and conversation is kept in the bucket of its space (Bucket, Sub, CreateSub),
// so a lookup made through a space's bucket cannot reach another space's data, by id or by
// title: the scoping is the layout, not a filter each caller must remember.
//
// # Layout
//
//	spaces/<space>/...   one bucket a space; docstore and threads own the buckets inside it
//	people/<id>          a person's display name
package spaces

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/kv"
)

var (
	// ErrBadSpace is returned by Valid (and so by CreateSub) for a space name that is
	// empty, longer than 64 bytes, or has characters other than letters, digits, '-', '_' and '.'.
	ErrBadSpace = errors.New("a space's name is 1 to 64 letters, digits, '-', '_' or '.'")
	// ErrBadActor is returned by ParseActor for anything but "person:<id>" or "agent:<name>".
	ErrBadActor = errors.New(`an author is "person:<id>" or "agent:<name>"`)
	// ErrBadName is returned by SetName for an empty display name or one with control characters.
	ErrBadName = errors.New("a display name is 1 to 100 characters with no line breaks or control characters")
)

var (
	spacesBucket = []byte("spaces")
	peopleBucket = []byte("people")
)

// Valid reports whether name can name a space, returning ErrBadSpace when it can't.
func Valid(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%w: %q", ErrBadSpace, name)
	}
	for _, r := range name {
		ok := r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !ok {
			return fmt.Errorf("%w: %q", ErrBadSpace, name)
		}
	}
	return nil
}

// Bucket returns the bucket of space in tx, or nil when nothing was ever kept there.
func Bucket(tx kv.Tx, space string) kv.Bucket {
	root := tx.Bucket(spacesBucket)
	if root == nil {
		return nil
	}
	return root.Bucket([]byte(space))
}

// Sub returns the bucket named name inside space's bucket, or nil when there is none yet.
func Sub(tx kv.Tx, space, name string) kv.Bucket {
	b := Bucket(tx, space)
	if b == nil {
		return nil
	}
	return b.Bucket([]byte(name))
}

// CreateSub returns the bucket named name inside space's bucket, creating both as needed.
// tx must be writable.
func CreateSub(tx kv.Tx, space, name string) (kv.Bucket, error) {
	if err := Valid(space); err != nil {
		return nil, err
	}
	root, err := tx.CreateBucketIfNotExists(spacesBucket)
	if err != nil {
		return nil, fmt.Errorf("creating the spaces bucket: %w", err)
	}
	sb, err := root.CreateBucketIfNotExists([]byte(space))
	if err != nil {
		return nil, fmt.Errorf("creating the bucket of space %s: %w", space, err)
	}
	b, err := sb.CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return nil, fmt.Errorf("creating bucket %s of space %s: %w", name, space, err)
	}
	return b, nil
}

// Actor is a person or an agent: who said something, or who saved a version.
type Actor struct {
	Agent bool   // an agent (the model) rather than a person
	ID    string // the person's id ("ana") or the agent's name ("north")
}

// Person returns the actor for the person with id.
func Person(id string) Actor { return Actor{ID: id} }

// Agent returns the actor for the agent called name.
func Agent(name string) Actor { return Actor{Agent: true, ID: name} }

// String gives the stored form: "person:ana" or "agent:north".
func (a Actor) String() string {
	if a.ID == "" {
		return ""
	}
	if a.Agent {
		return "agent:" + a.ID
	}
	return "person:" + a.ID
}

// ParseActor reads "person:ana" or "agent:north". A bare "ana" is taken as a person.
// It returns ErrBadActor for an empty id, another prefix, or line breaks.
func ParseActor(s string) (Actor, error) {
	kind, id, found := strings.Cut(s, ":")
	if !found {
		kind, id = "person", s
	}
	if id == "" || strings.ContainsAny(id, "\r\n\x00") || !utf8.ValidString(id) || len(id) > 100 {
		return Actor{}, fmt.Errorf("%w, got %q", ErrBadActor, s)
	}
	switch kind {
	case "person":
		return Person(id), nil
	case "agent":
		return Agent(id), nil
	}
	return Actor{}, fmt.Errorf("%w, got %q", ErrBadActor, s)
}

// SetName records the display name of the person with id, shown wherever that person is.
// It returns ErrBadName for an empty or multi-line name.
func SetName(ctx context.Context, db kv.DB, id, name string) error {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 100 || !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("%w, got %q", ErrBadName, name)
	}
	if _, err := ParseActor("person:" + id); err != nil {
		return err
	}
	return db.Update(ctx, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(peopleBucket)
		if err != nil {
			return fmt.Errorf("creating the people bucket: %w", err)
		}
		return b.Put([]byte(id), []byte(name))
	})
}

// Names shows actors the way people read them, from the names recorded with SetName.
type Names struct {
	people kv.Bucket
	all    map[string]string // when read whole (AllNames)
}

// NamesIn gives the names as they are in tx; use it only within tx.
func NamesIn(tx kv.Tx) Names { return Names{people: tx.Bucket(peopleBucket)} }

// AllNames reads every name in tx, for use after it ends.
func AllNames(tx kv.Tx) (Names, error) {
	all := map[string]string{}
	b := tx.Bucket(peopleBucket)
	if b == nil {
		return Names{all: all}, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		all[string(k)] = string(v)
		return nil
	})
	return Names{all: all}, err
}

// NamesOf reads the names of actors (each in its stored form, "person:ana") in tx, for use
// after it ends, and shows any other actor by its id: a write whose answer names one person
// reads that name alone, not every name (AllNames) under its lock.
func NamesOf(tx kv.Tx, actors ...string) Names {
	all := map[string]string{}
	if b := tx.Bucket(peopleBucket); b != nil {
		for _, s := range actors {
			if a, err := ParseActor(s); err == nil && !a.Agent {
				if name := b.Get([]byte(a.ID)); name != nil {
					all[a.ID] = string(name)
				}
			}
		}
	}
	return Names{all: all}
}

// Show gives a person's display name (or id, when none was set) and an agent's own name.
func (n Names) Show(a Actor) string {
	if n.all != nil {
		if name, ok := n.all[a.ID]; ok && !a.Agent {
			return name
		}
		return a.ID
	}
	if a.Agent || n.people == nil {
		return a.ID
	}
	if name := n.people.Get([]byte(a.ID)); name != nil {
		return string(name)
	}
	return a.ID
}

// ShowString is Show for an actor in its stored form; a malformed one is shown as it is.
func (n Names) ShowString(s string) string {
	a, err := ParseActor(s)
	if err != nil {
		return s
	}
	return n.Show(a)
}

// Named is a person's id and the display name recorded with SetName.
type Named struct{ ID, Name string }

// People lists the people who have a display name, by id.
func People(ctx context.Context, db kv.DB) ([]Named, error) {
	var out []Named
	err := db.View(ctx, func(tx kv.Tx) error {
		out = nil // the View may run again
		b := tx.Bucket(peopleBucket)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			out = append(out, Named{ID: string(k), Name: string(v)})
			return nil
		})
	})
	return out, err
}

// List returns the spaces that hold anything (documents, conversations), sorted.
func List(ctx context.Context, db kv.DB) ([]string, error) {
	var out []string
	err := db.View(ctx, func(tx kv.Tx) error {
		out = ListIn(tx) // the View may run again
		return nil
	})
	return out, err
}

// ListIn is List in a transaction of the caller's.
func ListIn(tx kv.Tx) []string {
	var out []string
	root := tx.Bucket(spacesBucket)
	if root == nil {
		return nil
	}
	root.ForEachBucket(func(name []byte) error {
		out = append(out, string(name))
		return nil
	})
	return out
}
