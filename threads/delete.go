package threads

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/search"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// Delete removes conversation id of the space for good, in one write transaction: its
// summary, its messages, an agent's private steps, the external ids its messages were
// imported under, and its words in the search index. It returns the conversation as it was,
// or ErrNotFound.
//
// An import of the same input afterwards brings it back (nothing remembers it was there);
// a follower of files (ImportParts) goes on from where it had read, so what it had read
// stays deleted and only what is written after comes in.
func (s *Store) Delete(ctx context.Context, id string) (Conversation, error) {
	var conv Conversation
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		v := readView(tx, s.space)
		var err error
		if conv, err = v.conversation(id); err != nil {
			return err
		}
		return v.remove(spaces.Sub(tx, s.space, rootName), id)
	})
	return conv, err
}

// DeleteAll removes every conversation of the space, as Delete does, in one write
// transaction, and returns how many there were.
func (s *Store) DeleteAll(ctx context.Context) (int, error) {
	var n int
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		n = 0
		v := readView(tx, s.space)
		if v.summaries == nil {
			return nil
		}
		var ids []string
		if err := v.summaries.ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		}); err != nil {
			return err
		}
		root := spaces.Sub(tx, s.space, rootName)
		for _, id := range ids {
			if err := v.remove(root, id); err != nil {
				return err
			}
		}
		n = len(ids)
		return nil
	})
	return n, err
}

// remove deletes what the space keeps of conversation id (which it has), root being the
// space's conversations bucket. Its nested buckets are emptied, not deleted: on PostgreSQL,
// another server may still know a deleted bucket by its name (kv/pg's DeleteBucket), and a
// conversation's id may be written to again.
func (v view) remove(root kv.Bucket, id string) error {
	key := []byte(id)
	var sum summary
	if err := json.Unmarshal(v.summaries.Get(key), &sum); err != nil {
		return fmt.Errorf("reading the summary of conversation %q: %w", id, err)
	}
	// What the index holds of it is its title and what people may read, as eachText gives it.
	var text strings.Builder
	if b := v.messages.Bucket(key); b != nil {
		if err := b.ForEach(func(mk, mv []byte) error {
			m, err := decodeMessage(mk, mv)
			text.WriteString(m.Text)
			text.WriteByte('\n')
			return err
		}); err != nil {
			return err
		}
	}
	if parent := root.Bucket(searchName); parent != nil {
		x, err := search.WriteIndex(parent)
		if err != nil {
			return err
		}
		if x.Built() {
			if err := x.Remove(id, sum.Title, text.String()); err != nil {
				return fmt.Errorf("taking conversation %q out of the search index: %w", id, err)
			}
			if err := x.Forget(id); err != nil {
				return err
			}
		}
	}
	for _, b := range []kv.Bucket{v.messages, v.private, v.external} {
		if b == nil {
			continue
		}
		if err := empty(b.Bucket(key)); err != nil {
			return fmt.Errorf("deleting the messages of conversation %q: %w", id, err)
		}
	}
	if err := v.recent.Delete(activityKey(sum.activity(), id)); err != nil {
		return err
	}
	return v.summaries.Delete(key)
}

// empty deletes every key of b (nil: none).
func empty(b kv.Bucket) error {
	if b == nil {
		return nil
	}
	var keys [][]byte
	if err := b.ForEach(func(k, _ []byte) error {
		keys = append(keys, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
