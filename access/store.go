package access

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/oklog/ulid/v2"
)

var (
	// ErrBadPerson is returned for a person's id that is empty, has a ':', white space, or
	// characters that aren't shown (control and format characters), or is not one line.
	ErrBadPerson = errors.New("a person's id is one word without ':', like ana")
	// ErrBadAgent is returned by AddToken for an agent's name with white space, ':' or
	// characters that aren't shown.
	ErrBadAgent = errors.New("an agent's name is one word without ':', like north")
	// ErrUnknownToken is returned by Verify for a secret that is no token's (wrapped in
	// ErrMistypedToken when it isn't even shaped as one).
	ErrUnknownToken = errors.New("unknown token")
	// ErrMistypedToken is returned by Verify for a secret that starts as a token does
	// (cmp_) but is cut short, or has a character that no token has or a checksum that
	// doesn't match: copied in part, or mistyped. It wraps ErrUnknownToken.
	ErrMistypedToken = fmt.Errorf("%w: incomplete or mistyped (its length or checksum is not a token's)", ErrUnknownToken)
	// ErrExpiredToken is returned by Verify for a token past its expiry.
	ErrExpiredToken = errors.New("expired token")
	// ErrRevokedToken is returned by Verify for a revoked token, and by Rotate.
	ErrRevokedToken = errors.New("revoked token")
	// ErrNoToken is returned by Revoke and Rotate for an id that no token has.
	ErrNoToken = errors.New("no token with that id")
)

var (
	bucketAccess   = []byte("access")
	bucketMembers  = []byte("members")
	bucketMemberOf = []byte("member_of")
	bucketTokens   = []byte("tokens")
	bucketTokenIDs = []byte("token_ids")
)

// usedEvery is how often a token's last-used time is written: at most once a minute, so
// that a busy token doesn't make every request a write.
const usedEvery = time.Minute

// Store keeps members and tokens in a store (package kv).
type Store struct {
	db    kv.DB
	owner Member // the server's configured person and space: a member without a row
	now   func() time.Time
	used  *usedTimes
}

type usedTimes struct {
	sync.Mutex
	at map[string]time.Time // token id → when this process last wrote its last-used time
}

// New returns the members and tokens kept in db.
func New(db kv.DB) *Store {
	return &Store{db: db, now: time.Now, used: &usedTimes{at: map[string]time.Time{}}}
}

// WithOwner returns s where person is a member of space without a row saying so: a
// server's configured person (--for) in its configured space (--space), so that a
// one-person setup needs no members add.
func (s *Store) WithOwner(space, person string) *Store {
	c := *s
	c.owner = Member{Space: space, Person: person}
	return &c
}

// Now is the time as s's clock has it (WithClock).
func (s *Store) Now() time.Time { return s.now() }

// WithClock returns s reading the time from now (for tests of expiry).
func (s *Store) WithClock(now func() time.Time) *Store {
	c := *s
	c.now = now
	return &c
}

// CheckPerson returns ErrBadPerson unless id can be a person's id.
func CheckPerson(id string) error {
	if _, err := spaces.ParseActor("person:" + id); err != nil || strings.ContainsAny(id, ":") || hasUnseen(id) {
		return fmt.Errorf("%w; got %q", ErrBadPerson, id)
	}
	return nil
}

// hasUnseen reports whether s has white space or characters that aren't shown (control
// and format characters): in an id they would let two ids read alike in members and tokens
// list, or rewrite the terminal they are listed on (escape sequences, bidi overrides).
func hasUnseen(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Z)
	})
}

// Member is a person who may see a space.
type Member struct {
	Space, Person string
	Added         time.Time // zero for the owner, who has no row
}

// AddMember makes person a member of space; added is false when they were one already.
func (s *Store) AddMember(ctx context.Context, space, person string) (added bool, err error) {
	if err := spaces.Valid(space); err != nil {
		return false, err
	}
	if err := CheckPerson(person); err != nil {
		return false, err
	}
	at := []byte(s.now().UTC().Format(time.RFC3339))
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		bySpace, err := nested(tx, bucketMembers, space)
		if err != nil {
			return err
		}
		if bySpace.Get([]byte(person)) != nil {
			return nil
		}
		byPerson, err := nested(tx, bucketMemberOf, person)
		if err != nil {
			return err
		}
		added = true
		if err := bySpace.Put([]byte(person), at); err != nil {
			return err
		}
		return byPerson.Put([]byte(space), at)
	})
	if err != nil {
		return false, fmt.Errorf("adding %s to space %s: %w", person, space, err)
	}
	return added, nil
}

// RemoveMember takes person out of space; removed is false when they weren't in it. Their
// tokens stop reaching space at once (the next request is refused).
func (s *Store) RemoveMember(ctx context.Context, space, person string) (removed bool, err error) {
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		root := tx.Bucket(bucketAccess)
		if root == nil {
			return nil
		}
		bySpace := sub(root, bucketMembers, space)
		if bySpace == nil || bySpace.Get([]byte(person)) == nil {
			return nil
		}
		removed = true
		if err := bySpace.Delete([]byte(person)); err != nil {
			return err
		}
		if byPerson := sub(root, bucketMemberOf, person); byPerson != nil {
			return byPerson.Delete([]byte(space))
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("removing %s from space %s: %w", person, space, err)
	}
	return removed, nil
}

// Members lists the members of space (of every space when space is ""), by space then
// person, with the owner (see WithOwner) among them.
func (s *Store) Members(ctx context.Context, space string) ([]Member, error) {
	var out []Member
	err := s.db.View(ctx, func(tx kv.Tx) error {
		out = nil // the View may run again
		root := tx.Bucket(bucketAccess)
		if root == nil {
			return nil
		}
		all := root.Bucket(bucketMembers)
		if all == nil {
			return nil
		}
		return all.ForEachBucket(func(name []byte) error {
			if space != "" && string(name) != space {
				return nil
			}
			return all.Bucket(name).ForEach(func(person, at []byte) error {
				added, _ := time.Parse(time.RFC3339, string(at))
				out = append(out, Member{Space: string(name), Person: string(person), Added: added})
				return nil
			})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing members: %w", err)
	}
	if s.owner.Person != "" && (space == "" || space == s.owner.Space) && !slices.ContainsFunc(out, func(m Member) bool {
		return m.Space == s.owner.Space && m.Person == s.owner.Person
	}) {
		out = append(out, s.owner)
	}
	slices.SortFunc(out, func(a, b Member) int {
		return cmpPair(a.Space, a.Person, b.Space, b.Person)
	})
	return out, nil
}

// SpacesOf returns the spaces person is a member of, sorted: the spaces that person's
// page shows, and the most any of their tokens reaches.
func (s *Store) SpacesOf(ctx context.Context, person string) ([]string, error) {
	var out []string
	err := s.db.View(ctx, func(tx kv.Tx) error {
		out = s.spacesOf(tx, person)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the spaces of %s: %w", person, err)
	}
	return out, nil
}

func (s *Store) spacesOf(tx kv.Tx, person string) []string {
	var out []string
	if root := tx.Bucket(bucketAccess); root != nil {
		if b := sub(root, bucketMemberOf, person); b != nil {
			b.ForEach(func(space, _ []byte) error {
				out = append(out, string(space))
				return nil
			})
		}
	}
	if s.owner.Person != "" && person == s.owner.Person {
		if i, found := slices.BinarySearch(out, s.owner.Space); !found {
			out = slices.Insert(out, i, s.owner.Space)
		}
	}
	return out
}

// NewToken is what a token is made with: by the command line (tokens add) or, later, an
// OAuth consent.
type NewToken struct {
	Person   string
	Agent    string    // "" lets the client's own name stand
	Spaces   []string  // nil: every space the person is a member of, now or later
	ReadOnly bool      // may read, not write
	Review   bool      // its agent's changes are proposals, for its person to review
	Expires  time.Time // zero: never
	Client   string    // what minted it ("" for the command line; an OAuth client's name)
	Resource string    // the OAuth resource (RFC 8707) it is bound to; "" for anywhere (see Gate.OAuth)
}

// Token is a token's row: everything but its secret, which is never stored.
type Token struct {
	ID       string    `json:"id"`
	Hash     string    `json:"hash"` // hex SHA-256 of the secret
	Person   string    `json:"person"`
	Agent    string    `json:"agent,omitempty"`
	Spaces   []string  `json:"spaces,omitempty"`
	ReadOnly bool      `json:"read_only,omitempty"`
	Review   bool      `json:"review,omitempty"`
	Client   string    `json:"client,omitempty"`
	Resource string    `json:"resource,omitempty"`
	Created  time.Time `json:"created"`
	Expires  time.Time `json:"expires,omitzero"`
	Revoked  time.Time `json:"revoked,omitzero"`
	LastUsed time.Time `json:"last_used,omitzero"`
}

// AddToken makes a token and returns its secret, which is shown this once and never
// again: only its SHA-256 is kept.
func (s *Store) AddToken(ctx context.Context, n NewToken) (secret string, t Token, err error) {
	if err := CheckPerson(n.Person); err != nil {
		return "", Token{}, err
	}
	if n.Agent != "" {
		if _, err := spaces.ParseActor("agent:" + n.Agent); err != nil || strings.ContainsAny(n.Agent, ":") || hasUnseen(n.Agent) {
			return "", Token{}, fmt.Errorf("%w; got %q", ErrBadAgent, n.Agent)
		}
	}
	var spaceList []string
	for _, sp := range n.Spaces {
		if err := spaces.Valid(sp); err != nil {
			return "", Token{}, err
		}
		if !slices.Contains(spaceList, sp) {
			spaceList = append(spaceList, sp)
		}
	}
	slices.Sort(spaceList)
	if secret, err = newSecret(); err != nil {
		return "", Token{}, fmt.Errorf("making a token's secret: %w", err)
	}
	now := s.now().UTC()
	hash := hashOf(secret)
	t = Token{
		ID: ulid.MustNew(ulid.Timestamp(now), rand.Reader).String(), Hash: hex.EncodeToString(hash[:]),
		Person: n.Person, Agent: n.Agent, Spaces: spaceList, ReadOnly: n.ReadOnly, Review: n.Review, Client: n.Client,
		Resource: n.Resource,
		Created:  now, Expires: n.Expires.UTC(),
	}
	row, err := json.Marshal(t)
	if err != nil {
		return "", Token{}, err
	}
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		tokens, err := bucket(tx, bucketTokens)
		if err != nil {
			return err
		}
		ids, err := bucket(tx, bucketTokenIDs)
		if err != nil {
			return err
		}
		if err := tokens.Put(hash[:], row); err != nil {
			return err
		}
		return ids.Put([]byte(t.ID), hash[:])
	})
	if err != nil {
		return "", Token{}, fmt.Errorf("saving a token for %s: %w", n.Person, err)
	}
	return secret, t, nil
}

// Tokens lists the tokens of person (everyone's when person is ""), oldest first.
func (s *Store) Tokens(ctx context.Context, person string) ([]Token, error) {
	var out []Token
	err := s.db.View(ctx, func(tx kv.Tx) error {
		out = nil // the View may run again
		root := tx.Bucket(bucketAccess)
		if root == nil || root.Bucket(bucketTokens) == nil {
			return nil
		}
		return root.Bucket(bucketTokens).ForEach(func(_, row []byte) error {
			var t Token
			if err := json.Unmarshal(row, &t); err != nil {
				return fmt.Errorf("a damaged token row: %w", err)
			}
			if person == "" || t.Person == person {
				out = append(out, t)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing tokens: %w", err)
	}
	slices.SortFunc(out, func(a, b Token) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Revoke marks the token with id revoked: from now on every request with it gets 401.
// The row stays, so tokens list still shows it. It returns ErrNoToken for an unknown id.
func (s *Store) Revoke(ctx context.Context, id string) (Token, error) {
	var t Token
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		return s.change(tx, id, func(row *Token) {
			if row.Revoked.IsZero() {
				row.Revoked = s.now().UTC()
			}
			t = *row
		})
	})
	return t, err
}

// Rotate gives the token with id a new secret, working until expires (zero: never); the
// old secret stops working at once. The row (its id, person, agent, spaces, rights and
// last use) stays one row, so an OAuth client that refreshes shows once in tokens list. It
// returns ErrNoToken for an unknown id and ErrRevokedToken for a revoked token.
func (s *Store) Rotate(ctx context.Context, id string, expires time.Time) (secret string, err error) {
	if secret, err = newSecret(); err != nil {
		return "", fmt.Errorf("making a token's secret: %w", err)
	}
	hash := hashOf(secret)
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		root := tx.Bucket(bucketAccess)
		var old []byte
		if root != nil && root.Bucket(bucketTokenIDs) != nil {
			old = root.Bucket(bucketTokenIDs).Get([]byte(id))
		}
		if old == nil {
			return fmt.Errorf("%w: %q", ErrNoToken, id)
		}
		tokens := root.Bucket(bucketTokens)
		var t Token
		if err := json.Unmarshal(tokens.Get(old), &t); err != nil {
			return fmt.Errorf("reading token %s: %w", id, err)
		}
		if !t.Revoked.IsZero() {
			return fmt.Errorf("%w: %s", ErrRevokedToken, id)
		}
		t.Hash, t.Expires = hex.EncodeToString(hash[:]), expires.UTC()
		row, err := json.Marshal(t)
		if err != nil {
			return err
		}
		if err := tokens.Delete(bytes.Clone(old)); err != nil {
			return err
		}
		if err := tokens.Put(hash[:], row); err != nil {
			return err
		}
		return root.Bucket(bucketTokenIDs).Put([]byte(id), hash[:])
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// change rewrites the row of token id with fn.
func (s *Store) change(tx kv.Tx, id string, fn func(*Token)) error {
	root := tx.Bucket(bucketAccess)
	if root == nil || root.Bucket(bucketTokenIDs) == nil {
		return fmt.Errorf("%w: %q", ErrNoToken, id)
	}
	hash := root.Bucket(bucketTokenIDs).Get([]byte(id))
	if hash == nil {
		return fmt.Errorf("%w: %q", ErrNoToken, id)
	}
	tokens := root.Bucket(bucketTokens)
	var t Token
	if err := json.Unmarshal(tokens.Get(hash), &t); err != nil {
		return fmt.Errorf("reading token %s: %w", id, err)
	}
	fn(&t)
	row, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return tokens.Put(bytes.Clone(hash), row)
}

// HasTokens reports whether any token row exists (revoked and expired ones too): once one
// does, every request must carry a token.
func (s *Store) HasTokens(ctx context.Context) (bool, error) {
	var has bool
	err := s.db.View(ctx, func(tx kv.Tx) error {
		has = false // the View may run again
		if root := tx.Bucket(bucketAccess); root != nil {
			if b := root.Bucket(bucketTokens); b != nil {
				k, _ := b.Cursor().First()
				has = k != nil
			}
		}
		return nil
	})
	return has, err
}

// Guarded reports whether a server with the static token (--token; "" for none) on s's
// store has tokens, the static one or token rows: what serving beyond loopback needs, for
// the page as for /mcp. A store that can't be read has none.
func (s *Store) Guarded(ctx context.Context, static string) bool {
	if static != "" {
		return true
	}
	has, err := s.HasTokens(ctx)
	return err == nil && has
}

// Verify returns the principal of the token whose secret is given. It returns
// ErrUnknownToken, ErrExpiredToken or ErrRevokedToken when there is none to act as.
//
// The row is found by the secret's SHA-256 (one B+tree lookup, however many tokens there
// are) and the stored hash compared with it in constant time. The token's last-used time
// is written at most once a minute by this process.
func (s *Store) Verify(ctx context.Context, secret string) (Principal, error) {
	if !wellFormed(secret) {
		return Principal{}, ErrMistypedToken
	}
	hash := hashOf(secret)
	var (
		t     Token
		found bool
		p     Principal
	)
	err := s.db.View(ctx, func(tx kv.Tx) error {
		t, found, p = Token{}, false, Principal{} // the View may run again
		root := tx.Bucket(bucketAccess)
		if root == nil || root.Bucket(bucketTokens) == nil {
			return nil
		}
		row := root.Bucket(bucketTokens).Get(hash[:])
		if row == nil {
			return nil
		}
		if err := json.Unmarshal(row, &t); err != nil {
			return fmt.Errorf("reading a token row: %w", err)
		}
		stored, err := hex.DecodeString(t.Hash)
		if err != nil || subtle.ConstantTimeCompare(stored, hash[:]) != 1 {
			return nil
		}
		found = true
		p = Principal{Person: t.Person, Agent: t.Agent, ReadOnly: t.ReadOnly, Review: t.Review, TokenID: t.ID, Client: t.Client, Resource: t.Resource}
		mine := s.spacesOf(tx, t.Person)
		if t.Spaces == nil {
			p.Spaces = mine
		} else {
			for _, sp := range t.Spaces {
				if _, ok := slices.BinarySearch(mine, sp); ok {
					p.Spaces = append(p.Spaces, sp)
				}
			}
		}
		return nil
	})
	now := s.now()
	switch {
	case err != nil:
		return Principal{}, err
	case !found:
		return Principal{}, ErrUnknownToken
	case !t.Revoked.IsZero():
		return Principal{}, ErrRevokedToken
	case !t.Expires.IsZero() && !now.Before(t.Expires):
		return Principal{}, ErrExpiredToken
	}
	s.touch(ctx, t.ID, now)
	return p, nil
}

// touch writes token id's last-used time unless this process did so less than usedEvery ago.
func (s *Store) touch(ctx context.Context, id string, now time.Time) {
	s.used.Lock()
	if last, ok := s.used.at[id]; ok && now.Sub(last) < usedEvery {
		s.used.Unlock()
		return
	}
	s.used.at[id] = now
	s.used.Unlock()
	err := s.db.Batch(ctx, func(tx kv.Tx) error {
		return s.change(tx, id, func(t *Token) { t.LastUsed = now.UTC() })
	})
	if err != nil {
		slog.Warn("could not record when a token was last used", "token", id, "err", err)
	}
}

// bucket returns access/<name>, creating both; tx must be writable.
func bucket(tx kv.Tx, name []byte) (kv.Bucket, error) {
	root, err := tx.CreateBucketIfNotExists(bucketAccess)
	if err != nil {
		return nil, err
	}
	return root.CreateBucketIfNotExists(name)
}

// nested returns access/<name>/<key>, creating all three; tx must be writable.
func nested(tx kv.Tx, name []byte, key string) (kv.Bucket, error) {
	b, err := bucket(tx, name)
	if err != nil {
		return nil, err
	}
	return b.CreateBucketIfNotExists([]byte(key))
}

func sub(root kv.Bucket, name []byte, key string) kv.Bucket {
	b := root.Bucket(name)
	if b == nil {
		return nil
	}
	return b.Bucket([]byte(key))
}

func cmpPair(a1, a2, b1, b2 string) int {
	if c := strings.Compare(a1, b1); c != 0 {
		return c
	}
	return strings.Compare(a2, b2)
}
