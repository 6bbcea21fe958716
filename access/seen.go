package access

import (
	"context"
	"fmt"
	"slices"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// SeenBy returns the spaces person sees on their own page, in their inbox and in their
// activity, sorted. On a store with members (a team's), those are the spaces they are a
// member of, as SpacesOf says. On a store without members the store is one person's: its
// owner (WithOwner) sees every space it holds, so that work waiting in another space than
// --space is not hidden from them. What an agent's token reaches is not widened by it:
// tokens, sessions and OAuth grants keep SpacesOf.
func (s *Store) SeenBy(ctx context.Context, person string) ([]string, error) {
	var out []string
	err := s.db.View(ctx, func(tx kv.Tx) error {
		out = s.seenBy(tx, person)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the spaces %s sees: %w", person, err)
	}
	return out, nil
}

// OnePerson reports whether the store has no members: every space is its owner's.
func (s *Store) OnePerson(ctx context.Context) (bool, error) {
	var one bool
	err := s.db.View(ctx, func(tx kv.Tx) error {
		one = !hasMembers(tx)
		return nil
	})
	return one, err
}

func (s *Store) seenBy(tx kv.Tx, person string) []string {
	mine := s.spacesOf(tx, person)
	// A person with a member row is on a team's store: no more to read.
	if s.owner.Person == "" || person != s.owner.Person || len(mine) > 1 || len(mine) == 1 && mine[0] != s.owner.Space || hasMembers(tx) {
		return mine
	}
	for _, sp := range spaces.ListIn(tx) {
		if i, found := slices.BinarySearch(mine, sp); !found && spaces.Valid(sp) == nil {
			mine = slices.Insert(mine, i, sp)
		}
	}
	return mine
}

// hasMembers reports whether any person is a member of any space (members add).
func hasMembers(tx kv.Tx) bool {
	root := tx.Bucket(bucketAccess)
	if root == nil {
		return false
	}
	byPerson := root.Bucket(bucketMemberOf)
	if byPerson == nil {
		return false
	}
	var names [][]byte
	byPerson.ForEachBucket(func(name []byte) error {
		names = append(names, slices.Clone(name))
		return nil
	})
	for _, n := range names {
		if b := byPerson.Bucket(n); b != nil {
			if k, _ := b.Cursor().First(); k != nil {
				return true
			}
		}
	}
	return false
}
