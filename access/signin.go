package access

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// A person signs a browser in to their page with a one-time code ("compass-mcp open"
// prints the link that carries it); the page then keeps the browser signed in with a
// cookie. Both are kept by hash, as tokens are: a copy of the file signs nobody in. Their
// rows stay where the page kept them before they moved here (see the package's Layout).
var (
	bucketWeb         = []byte("web")
	bucketSignInCodes = []byte("codes")
	bucketSignedIn    = []byte("sessions")
)

const (
	// CodeLife is how long a sign-in code can be used (once).
	CodeLife = 15 * time.Minute
	// SignedInLife is how long a browser stays signed in.
	SignedInLife = 30 * 24 * time.Hour
	// signInChars is the length of a sign-in code and of a signed-in browser's cookie: 32
	// random bytes in hex.
	signInChars = 64
	// sweepSignIns bounds how many expired rows one write forgets.
	sweepSignIns = 100
)

// ErrBadCode is returned by RedeemCode for a code that is unknown, used or expired, or
// whose person is no longer a member of its space.
var ErrBadCode = errors.New("the sign-in link is unknown, used, or expired")

// SignIn is who a sign-in code, or a browser it signed in, is for.
type SignIn struct {
	Person  string    `json:"person"`
	Space   string    `json:"space"`          // the space the code was made in
	Next    string    `json:"next,omitempty"` // a code's: the path of the page it leads to
	Expires time.Time `json:"expires"`
}

// NewSignInCode makes a one-time sign-in code for person in space that leads to next (a
// path of the page; "/" when empty or not a path), usable once within CodeLife.
func (s *Store) NewSignInCode(ctx context.Context, person, space, next string) (string, error) {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		next = "/"
	}
	code, err := randomHex(signInChars / 2)
	if err != nil {
		return "", fmt.Errorf("making a sign-in code: %w", err)
	}
	now := s.now()
	row, _ := json.Marshal(SignIn{Person: person, Space: space, Next: next, Expires: now.Add(CodeLife)})
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		codes, err := signIns(tx, bucketSignInCodes)
		if err != nil {
			return err
		}
		sweepExpired(codes, now)
		key := hashOf(code)
		return codes.Put(key[:], row)
	})
	if err != nil {
		return "", fmt.Errorf("keeping a sign-in code: %w", err)
	}
	return code, nil
}

// RedeemCode uses up code and signs a browser in for its person: it returns the cookie's
// value, good for SignedInLife, and what the code was for. It returns ErrBadCode for a
// code that is unknown, used or expired, or whose person may no longer see its space.
func (s *Store) RedeemCode(ctx context.Context, code string) (cookie string, g SignIn, err error) {
	if len(code) != signInChars {
		return "", SignIn{}, ErrBadCode // no code has that shape: no need to lock the store
	}
	if cookie, err = randomHex(signInChars / 2); err != nil {
		return "", SignIn{}, fmt.Errorf("making a browser's cookie: %w", err)
	}
	now := s.now()
	refused := false
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		codes, err := signIns(tx, bucketSignInCodes)
		if err != nil {
			return err
		}
		key := hashOf(code)
		raw := codes.Get(key[:])
		if raw == nil {
			return ErrBadCode
		}
		if err := codes.Delete(key[:]); err != nil {
			return err
		}
		// A refused code is used up all the same: the deletion commits, the refusal follows.
		if json.Unmarshal(raw, &g) != nil || now.After(g.Expires) || !slices.Contains(s.spacesOf(tx, g.Person), g.Space) {
			refused = true
			return nil
		}
		browsers, err := signIns(tx, bucketSignedIn)
		if err != nil {
			return err
		}
		sweepExpired(browsers, now)
		row, _ := json.Marshal(SignIn{Person: g.Person, Space: g.Space, Expires: now.Add(SignedInLife)})
		key = hashOf(cookie)
		return browsers.Put(key[:], row)
	})
	if err == nil && refused {
		err = ErrBadCode
	}
	if err != nil {
		return "", SignIn{}, err
	}
	return cookie, g, nil
}

// CodeFor returns whom code signs in, without using it up: for the page to ask before it
// signs a browser in. It returns ErrBadCode as RedeemCode would.
func (s *Store) CodeFor(ctx context.Context, code string) (SignIn, error) {
	if len(code) != signInChars {
		return SignIn{}, ErrBadCode
	}
	var g SignIn
	bad := false
	err := s.db.View(ctx, func(tx kv.Tx) error {
		g, bad = SignIn{}, false // the View may run again
		codes := signInsIn(tx, bucketSignInCodes)
		if codes == nil {
			bad = true
			return nil
		}
		key := hashOf(code)
		raw := codes.Get(key[:])
		bad = raw == nil || json.Unmarshal(raw, &g) != nil || s.now().After(g.Expires) || !slices.Contains(s.spacesOf(tx, g.Person), g.Space)
		return nil
	})
	if err != nil {
		return SignIn{}, fmt.Errorf("reading a sign-in code: %w", err)
	}
	if bad {
		return SignIn{}, ErrBadCode
	}
	return g, nil
}

// SignedIn returns who the browser with cookie was signed in for, if it still is.
func (s *Store) SignedIn(ctx context.Context, cookie string) (SignIn, bool, error) {
	g, _, ok, err := s.signedIn(ctx, cookie, false)
	return g, ok, err
}

// SignedInSpaces is SignedIn and SpacesOf the person it returns, in one read transaction:
// what every page the browser asks for first needs (on PostgreSQL, one round trip once warm).
func (s *Store) SignedInSpaces(ctx context.Context, cookie string) (SignIn, []string, bool, error) {
	return s.signedIn(ctx, cookie, true)
}

// Browser is the page's side of the one decision of who a request acts as (Gate.Decide is
// the bearer doors'): the person the browser's session cookie signs in, as a Principal with
// the spaces they may see now (SignedInSpaces); ok is false for a cookie that signs nobody
// in, or a person who may see no space. A browser acts as its person's own self: never
// read-only, never reviewed (review mode is for agents, and the page is where the person
// decides). The Host rule (ForeignHost) is asked first, by the page's guard; a POST also
// needs the browser's proof (package web, proof.go).
func (s *Store) Browser(ctx context.Context, cookie string) (Principal, bool, error) {
	g, mine, ok, err := s.signedIn(ctx, cookie, true)
	if err != nil || !ok || len(mine) == 0 {
		return Principal{}, false, err
	}
	return Principal{Person: g.Person, Spaces: mine}, true, nil
}

func (s *Store) signedIn(ctx context.Context, cookie string, withSpaces bool) (SignIn, []string, bool, error) {
	if len(cookie) != signInChars {
		return SignIn{}, nil, false, nil
	}
	var (
		g     SignIn
		found bool
		mine  []string
	)
	err := s.db.View(ctx, func(tx kv.Tx) error {
		g, found, mine = SignIn{}, false, nil // the View may run again
		browsers := signInsIn(tx, bucketSignedIn)
		if browsers == nil {
			return nil
		}
		key := hashOf(cookie)
		raw := browsers.Get(key[:])
		found = raw != nil && json.Unmarshal(raw, &g) == nil
		if found && withSpaces {
			mine = s.seenBy(tx, g.Person)
		}
		return nil
	})
	if err != nil {
		return SignIn{}, nil, false, fmt.Errorf("reading a signed-in browser: %w", err)
	}
	if !found || s.now().After(g.Expires) {
		return SignIn{}, nil, false, nil
	}
	return g, mine, true, nil
}

// SignOut ends the signed-in browser with cookie, if there is one.
func (s *Store) SignOut(ctx context.Context, cookie string) error {
	if len(cookie) != signInChars {
		return nil
	}
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		browsers, err := signIns(tx, bucketSignedIn)
		if err != nil {
			return err
		}
		key := hashOf(cookie)
		return browsers.Delete(key[:])
	})
	if err != nil {
		return fmt.Errorf("signing a browser out: %w", err)
	}
	return nil
}

// signIns returns web/<name>, creating both; tx must be writable.
func signIns(tx kv.Tx, name []byte) (kv.Bucket, error) {
	w, err := tx.CreateBucketIfNotExists(bucketWeb)
	if err != nil {
		return nil, err
	}
	return w.CreateBucketIfNotExists(name)
}

// signInsIn returns web/<name>, or nil when there is none yet.
func signInsIn(tx kv.Tx, name []byte) kv.Bucket {
	w := tx.Bucket(bucketWeb)
	if w == nil {
		return nil
	}
	return w.Bucket(name)
}

// sweepExpired forgets up to sweepSignIns expired (or unreadable) rows of b: each write
// forgets a few, so the bucket holds what is alive.
func sweepExpired(b kv.Bucket, now time.Time) {
	var old [][]byte
	c := b.Cursor()
	for k, v := c.First(); k != nil && len(old) < sweepSignIns; k, v = c.Next() {
		var g SignIn
		if json.Unmarshal(v, &g) != nil || now.After(g.Expires) {
			old = append(old, bytes.Clone(k))
		}
	}
	for _, k := range old {
		_ = b.Delete(k) // a failed delete is swept again by the next write
	}
}
