package access

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// ErrNoSession is returned by Sessions.Check and Sessions.End for a session id that no
// session has: it never began, it ended, it went unused longer than the idle time, or it
// was begun by another principal (told apart from the others nowhere, so that a token
// that learns another's session id learns nothing from it).
var ErrNoSession = errors.New("no such session: start a new one (initialize)")

var bucketSessions = []byte("mcp_sessions")

// Sessions keeps the streamable HTTP MCP sessions of a store in the store itself, so that
// every server on it knows them: replicas on one PostgreSQL database answer any request
// of a session any of them began, and a server that restarts keeps its sessions. A
// session is kept to the principal that began it (Session.Who): another token naming it
// is told it doesn't exist, as go-sdk checks TokenInfo.UserID against the session's.
//
// A session that goes unused for the idle time ends, on every server at once: its
// last-used time is in the store, written when a request finds it older than a minute
// (less for short idle times), not on every request, so that a busy session is not a
// write a request. Ended sessions' rows are swept out as new sessions begin.
type Sessions struct {
	db   kv.DB
	idle time.Duration
	now  func() time.Time

	mu        sync.Mutex
	lastSweep time.Time
	sweepFrom []byte // where the next sweep goes on from: keys are hashes, so any order is fair
}

// Session is what the store keeps of an MCP session.
type Session struct {
	Who    string `json:"who"`              // see Principal.sessionOwner
	Client string `json:"client,omitempty"` // the client's name from initialize
	// Apps is whether the client declared the MCP Apps extension in initialize: every
	// server on the store shows the change view to it, not only the one it began on.
	Apps    bool      `json:"apps,omitempty"`
	Created time.Time `json:"created"`
	Seen    time.Time `json:"seen"` // last used, to within Sessions.refresh
}

// sweepScan bounds how many rows one sweep looks at, so that beginning a session stays
// quick however many there are; the next sweep goes on where it stopped.
const sweepScan = 1000

// NewSessions returns the sessions kept in db, each ending after idle unused (never, for
// an idle time of 0).
func NewSessions(db kv.DB, idle time.Duration) *Sessions {
	if idle <= 0 {
		idle = math.MaxInt64
	}
	return &Sessions{db: db, idle: idle, now: time.Now}
}

// WithClock returns s reading the time from now (for tests of expiry).
func (s *Sessions) WithClock(now func() time.Time) *Sessions {
	return &Sessions{db: s.db, idle: s.idle, now: now}
}

// refresh is how stale a session's last-used time may get before a request writes it
// again: a minute, or a quarter of the idle time if that is shorter, so that a session in
// use never looks idle.
func (s *Sessions) refresh() time.Duration { return min(time.Minute, s.idle/4) }

// sessionOwner is what a session keeps of the principal that began it: the token's id, or
// the person for the server's own token or an open loopback server.
func (p Principal) sessionOwner() string {
	if p.TokenID != "" {
		return p.TokenID
	}
	return "person:" + p.Person
}

// sessionKey is the key a session's row is kept under: the store holds no usable id.
func sessionKey(id string) []byte {
	h := hashOf(id)
	return h[:]
}

// Begin starts a session for p (whose client says it is client) and returns its id.
func (s *Sessions) Begin(ctx context.Context, p Principal, client string) (string, error) {
	return s.BeginClient(ctx, p, Client{Name: client})
}

// Client is what a session keeps of what its client said in initialize.
type Client struct {
	Name string // its name (clientInfo.name)
	Apps bool   // it declared the MCP Apps extension (io.modelcontextprotocol/ui)
}

// BeginClient starts a session for p, keeping what its client said, and returns its id.
func (s *Sessions) BeginClient(ctx context.Context, p Principal, client Client) (string, error) {
	random, err := randomHex(16)
	if err != nil {
		return "", err
	}
	id := "mcp-session-" + random
	now := s.now().UTC()
	row, _ := json.Marshal(Session{Who: p.sessionOwner(), Client: client.Name, Apps: client.Apps, Created: now, Seen: now})
	sweep := s.sweepDue(now)
	err = s.db.Batch(ctx, func(tx kv.Tx) error {
		sessions, err := bucket(tx, bucketSessions)
		if err != nil {
			return err
		}
		if sweep {
			s.sweep(sessions, now)
		}
		return sessions.Put(sessionKey(id), row)
	})
	if err != nil {
		return "", fmt.Errorf("beginning an MCP session: %w", err)
	}
	return id, nil
}

// Check returns the session id names if p began it and it has not ended; else
// ErrNoSession. It writes the session's last-used time when that is older than refresh.
func (s *Sessions) Check(ctx context.Context, id string, p Principal) (Session, error) {
	sess, err := s.find(ctx, id, p)
	if err != nil {
		return Session{}, err
	}
	now := s.now().UTC()
	if now.Sub(sess.Seen) < s.refresh() {
		return sess, nil
	}
	sess.Seen = now
	err = s.db.Batch(ctx, func(tx kv.Tx) error {
		sessions, err := bucket(tx, bucketSessions)
		if err != nil {
			return err
		}
		raw := sessions.Get(sessionKey(id))
		var stored Session
		if raw == nil || json.Unmarshal(raw, &stored) != nil || !stored.Seen.Before(now) {
			return nil // ended, or seen later, meanwhile
		}
		stored.Seen = now
		row, _ := json.Marshal(stored)
		return sessions.Put(sessionKey(id), row)
	})
	if err != nil {
		// The session is good; only its last-used time is stale. Say so, and serve it.
		slog.Warn("could not record when an MCP session was last used", "err", err)
	}
	return sess, nil
}

// find reads session id, if it is p's and has not gone idle.
func (s *Sessions) find(ctx context.Context, id string, p Principal) (Session, error) {
	var sess Session
	err := s.db.View(ctx, func(tx kv.Tx) error {
		root := tx.Bucket(bucketAccess)
		if root == nil || root.Bucket(bucketSessions) == nil {
			return ErrNoSession
		}
		var err error
		sess, err = s.owned(root.Bucket(bucketSessions), id, p)
		return err
	})
	return sess, err
}

// owned returns session id from sessions if p began it and it has not gone idle; else
// ErrNoSession.
func (s *Sessions) owned(sessions kv.Bucket, id string, p Principal) (Session, error) {
	raw := sessions.Get(sessionKey(id))
	if raw == nil {
		return Session{}, ErrNoSession
	}
	var sess Session
	if err := json.Unmarshal(raw, &sess); err != nil {
		return Session{}, fmt.Errorf("reading an MCP session's row: %w", err)
	}
	if sess.Who != p.sessionOwner() || s.now().Sub(sess.Seen) > s.idle {
		return Session{}, ErrNoSession
	}
	return sess, nil
}

// End ends session id for every server, if p began it; else it returns ErrNoSession.
func (s *Sessions) End(ctx context.Context, id string, p Principal) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		sessions, err := bucket(tx, bucketSessions)
		if err != nil {
			return err
		}
		if _, err := s.owned(sessions, id, p); err != nil {
			return err
		}
		return sessions.Delete(sessionKey(id))
	})
}

// sweepDue reports whether this process should sweep ended sessions now: at most once a
// minute (or once an idle time, if shorter).
func (s *Sessions) sweepDue(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastSweep) < min(time.Minute, s.idle) {
		return false
	}
	s.lastSweep = now
	return true
}

// sweep deletes the rows of sessions idle for longer than the idle time, looking at up to
// sweepScan rows from where the last sweep stopped (from the first, after the last).
func (s *Sessions) sweep(sessions kv.Bucket, now time.Time) {
	s.mu.Lock()
	from := s.sweepFrom
	s.mu.Unlock()
	var old [][]byte
	c := sessions.Cursor()
	k, v := c.First()
	if from != nil {
		k, v = c.Seek(from)
	}
	for n := 0; k != nil && n < sweepScan; n++ {
		var sess Session
		if json.Unmarshal(v, &sess) != nil || now.Sub(sess.Seen) > s.idle {
			old = append(old, bytes.Clone(k))
		}
		k, v = c.Next()
	}
	next := bytes.Clone(k)
	for _, k := range old {
		_ = sessions.Delete(k) // a failed delete is swept again next time
	}
	s.mu.Lock()
	s.sweepFrom = next
	s.mu.Unlock()
}
