package threads

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// sourcesName is the bucket, in a space's conversations, of how far an importer that follows
// files (package claudecode) read each: under a key the importer chooses, a record of its own.
var sourcesName = []byte("sources")

// Part is what an importer read for one conversation.
type Part struct {
	Conversation string    // its id (CheckID)
	Title        string    // if set, the conversation's title from now on
	DefaultTitle string    // if set, its title while it has none
	Messages     []Message // added in order; each with its time (CheckMessage) and From
}

// Origin is an importer that makes conversations of its own (package claudecode's
// "claude-code"): ImportParts marks the conversations it makes with its name, and adds to no
// conversation that another origin, or none, made.
type Origin struct {
	Name string // kept in each conversation it makes
	// Agent, if set, is the agent whose messages the importer writes (agent:claude-code): a
	// conversation without an origin is taken as the importer's, and marked so, when one of
	// its first adoptScan messages (people's or private) is from or to that agent. That is a
	// conversation the importer made before origins were kept.
	Agent string
}

// adoptScan is how many messages of each of a conversation's buckets Origin.Agent is looked
// for in: the first prompt of an imported session is to its agent.
const adoptScan = 64

// PartsSummary says what an ImportParts did.
type PartsSummary struct {
	ImportSummary
	// Refused lists the conversations (once each) that parts named but another origin, or
	// none, made: nothing was added to them.
	Refused []string
}

// ImportParts is Import for an importer that reads its input itself, a little at a time: it
// adds parts to their conversations and stores sources (key: a record of how far the importer
// read, kept as given) in one write transaction, so that what was read and where reading
// stopped are kept together or not at all, and a restart reads only what is new.
//
// The conversations it makes are origin's (its Name kept in each), and it adds to no other:
// a part for a conversation that another origin, or none, made is left out and its id listed
// in Refused (so that what an importer reads can't write into a conversation of the chat
// bridge, say). A zero Origin makes conversations without one, and adds to any.
//
// Messages are checked as Say checks them (ErrBadText, ErrBadTime, spaces.ErrBadActor, an
// external id); one that fails leaves nothing of the call behind. A message whose External
// its conversation has is skipped, and a part without messages for a conversation the space
// doesn't have (a title that came before its conversation) is left out.
func (s *Store) ImportParts(ctx context.Context, origin Origin, parts []Part, sources map[string][]byte) (PartsSummary, error) {
	var sum PartsSummary
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		sum = PartsSummary{}
		w, err := newWriter(tx, s.space)
		if err != nil {
			return err
		}
		refused := map[string]bool{}
		for _, p := range parts {
			if len(p.Messages) == 0 && w.threads[p.Conversation] == nil && w.v.summaries.Get([]byte(p.Conversation)) == nil {
				continue
			}
			if refused[p.Conversation] {
				continue
			}
			t, err := w.thread(p.Conversation)
			if err != nil {
				return err
			}
			if !t.madeBy(origin) {
				refused[p.Conversation] = true
				sum.Refused = append(sum.Refused, p.Conversation)
				continue
			}
			if p.Title != "" {
				t.setTitle(CleanTitle(p.Title))
			} else if p.DefaultTitle != "" && t.sum.Title == "" {
				t.setTitle(CleanTitle(p.DefaultTitle))
			}
			for _, m := range p.Messages {
				if m, err = checked(m); err != nil {
					return fmt.Errorf("a message for conversation %q: %w", t.id, err)
				}
				got, added, err := w.add(t, m)
				if err != nil {
					return fmt.Errorf("importing into conversation %q: %w", t.id, err)
				}
				if added {
					if err := w.noteWhy(t.id, got); err != nil {
						return err
					}
				}
				if added {
					sum.Messages++
				} else {
					sum.Skipped++
				}
			}
		}
		b, err := w.root.CreateBucketIfNotExists(sourcesName)
		if err != nil {
			return err
		}
		for key, val := range sources {
			if err := b.Put([]byte(key), val); err != nil {
				return fmt.Errorf("storing how far %s was read: %w", key, err)
			}
		}
		sum.Conversations, err = w.flush()
		return err
	})
	return sum, err
}

// madeBy reports whether origin may add to t: t is new (and is then marked origin's), or
// origin made it, or (Origin.Agent) made it before origins were kept (and is marked so now).
func (t *thread) madeBy(origin Origin) bool {
	switch {
	case origin.Name == "" || t.sum.Origin == origin.Name:
		return true
	case t.stored == nil: // made in this call
		t.sum.Origin, t.changed = origin.Name, true
		return true
	case t.sum.Origin != "" || origin.Agent == "":
		return false
	}
	agent, err := spaces.ParseActor(origin.Agent)
	if err != nil {
		return false
	}
	for _, b := range []kv.Bucket{t.msgs, t.priv} {
		c, n := b.Cursor(), 0
		for k, v := c.First(); k != nil && n < adoptScan; k, v = c.Next() {
			var r record
			if json.Unmarshal(v, &r) == nil && (r.From == agent.String() || r.To == agent.String()) {
				t.sum.Origin, t.changed = origin.Name, true
				return true
			}
			n++
		}
	}
	return false
}

// checked is m as Say keeps it: its actors in their long form, its text, time and external
// id checked. Unlike Say, a zero time is refused: an importer gives every message its own.
func checked(m Message) (Message, error) {
	from, err := spaces.ParseActor(m.From)
	if err != nil {
		return m, fmt.Errorf("from: %w", err)
	}
	m.From = from.String()
	if m.To != "" {
		to, err := spaces.ParseActor(m.To)
		if err != nil {
			return m, fmt.Errorf("to: %w", err)
		}
		m.To = to.String()
	}
	if m.External != "" {
		if err := CheckExternal(m.External); err != nil {
			return m, err
		}
	}
	return m, CheckMessage(m)
}

// Sources returns the records ImportParts stored under those of keys that have one.
func (r *Reader) Sources(keys []string) map[string][]byte {
	out := map[string][]byte{}
	root := spaces.Sub(r.tx, r.space, rootName)
	if root == nil {
		return out
	}
	b := root.Bucket(sourcesName)
	if b == nil {
		return out
	}
	for _, k := range keys {
		if raw := b.Get([]byte(k)); raw != nil {
			out[k] = bytes.Clone(raw) // a value is the transaction's only until it ends
		}
	}
	return out
}
