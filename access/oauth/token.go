package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
)

// tokenError is a refusal at the token endpoint (RFC 6749 section 5.2).
type tokenError struct {
	status      int
	code, descr string
}

func (e *tokenError) Error() string { return e.code + ": " + e.descr }

func invalidGrant(descr string) *tokenError {
	return &tokenError{http.StatusBadRequest, "invalid_grant", descr}
}

// token is the token endpoint: authorization codes and refresh tokens in, token rows out.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if preflight(w, r, "POST", "Content-Type, Authorization") {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "POST the token request as a form")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the token request must be a form (application/x-www-form-urlencoded)")
		return
	}
	f := r.PostForm
	clientID := f.Get("client_id")
	if id, _, ok := r.BasicAuth(); ok && clientID == "" {
		clientID = id // a public client that sends its id the confidential way
	}
	if clientID == "" {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "send client_id")
		return
	}
	if len(f["resource"]) > 1 {
		oauthError(w, http.StatusBadRequest, "invalid_target", "give one resource")
		return
	}
	var (
		resp map[string]any
		err  error
	)
	switch f.Get("grant_type") {
	case "authorization_code":
		resp, err = s.exchangeCode(ctx, clientID, f.Get("code"), f.Get("code_verifier"), f.Get("redirect_uri"), f.Get("resource"))
	case "refresh_token":
		resp, err = s.refresh(ctx, clientID, f.Get("refresh_token"), f.Get("resource"))
	default:
		err = &tokenError{http.StatusBadRequest, "unsupported_grant_type", "grant_type is authorization_code or refresh_token"}
	}
	var te *tokenError
	switch {
	case errors.As(err, &te):
		oauthError(w, te.status, te.code, te.descr)
	case err != nil:
		serverError(w, "issuing a token", err)
	default:
		w.Header().Set("Pragma", "no-cache")
		writeJSON(w, http.StatusOK, resp)
	}
}

// exchangeCode redeems an authorization code. The code is burned by the first attempt,
// right or wrong; a second attempt also ends whatever the first obtained.
func (s *Server) exchangeCode(ctx context.Context, clientID, token, verifier, redirectURI, resource string) (map[string]any, error) {
	if token == "" || verifier == "" {
		return nil, &tokenError{http.StatusBadRequest, "invalid_request", "send code and code_verifier"}
	}
	key := hash(token)
	var c code
	var refusal *tokenError
	var ended []string // rows to revoke, when the code was used before
	now := s.now()
	err := s.readFirst(ctx, func(tx kv.Tx) error {
		c, refusal, ended = code{}, nil, nil
		b := bucket(tx, codesBucket)
		found, err := get(b, key, &c)
		if err != nil {
			return err
		}
		if !found {
			refusal = invalidGrant("unknown or expired authorization code")
			return nil
		}
		if !tx.Writable() {
			return errWrite // a real code: burned by this attempt, right or wrong
		}
		if c.Burned {
			refusal = invalidGrant("the authorization code was already used; what it gave is revoked")
			if c.Chain != "" {
				ended, err = endChain(tx, c.Chain)
				c.Chain = ""
			}
			c.Reused = true
			if err != nil {
				return err
			}
			return put(b, key, c)
		}
		c.Burned = true
		if err := put(b, key, c); err != nil {
			return err
		}
		refusal = s.checkCode(c, now, clientID, verifier, redirectURI, resource)
		return nil
	})
	s.revokeRows(ctx, ended)
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		return nil, refusal
	}
	g := grant{Person: c.Person, Agent: c.Agent, Spaces: c.Spaces, ReadOnly: c.ReadOnly, Review: c.Review,
		Client: clientLabel(c.ClientName, c.RedirectURI), Resource: c.Resource}
	return s.issue(ctx, clientID, g, func(tx kv.Tx, chainID string) error {
		// The code may have been presented again while the row was minted.
		var cur code
		if found, err := get(bucket(tx, codesBucket), key, &cur); err != nil {
			return err
		} else if !found || cur.Reused {
			return invalidGrant("the authorization code was used twice")
		}
		cur.Chain = chainID
		return put(bucket(tx, codesBucket), key, cur)
	})
}

// errWrite is what a function given to readFirst returns, in the read transaction, when
// the request needs a write.
var errWrite = errors.New("this needs a write transaction")

// readFirst runs fn in a read transaction, and again in a write transaction only if it
// returned errWrite: a request that can be refused with a read (a made-up code, refresh
// token or client: anyone can send those, as fast as they like) costs no write, nor, on
// PostgreSQL, the store's write lock. fn checks everything again in the write, where
// another request may have changed it; it must set its results afresh on every run.
func (s *Server) readFirst(ctx context.Context, fn func(kv.Tx) error) error {
	err := s.db.View(ctx, fn)
	if errors.Is(err, errWrite) {
		return s.db.Update(ctx, fn)
	}
	return err
}

// checkCode is what must hold of a code and the request redeeming it.
func (s *Server) checkCode(c code, now time.Time, clientID, verifier, redirectURI, resource string) *tokenError {
	switch {
	case c.Expires.Before(now):
		return invalidGrant("the authorization code has expired; authorize again")
	case c.ClientID != clientID:
		return invalidGrant("the authorization code was issued to another client")
	case (redirectURI != "" || c.RedirectGiven) && redirectURI != c.RedirectURI:
		// OAuth 2.1 section 4.1.3: required, and identical, when the authorization request had it.
		return invalidGrant("redirect_uri is not the one the code was sent to")
	case !validVerifier(verifier):
		return invalidGrant("code_verifier must be 43 to 128 unreserved characters")
	}
	sum := sha256.Sum256([]byte(verifier))
	if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(c.Challenge)) != 1 {
		return invalidGrant("code_verifier does not match the code_challenge")
	}
	if resource != "" && s.resource(resource) != c.Resource {
		return &tokenError{http.StatusBadRequest, "invalid_target", fmt.Sprintf("the code was issued for %s, not %s", c.Resource, resource)}
	}
	return nil
}

// refresh rotates a refresh token: the old one is used up, a new one and a new access token
// come back. A used refresh token presented again ends its chain: someone holds a copy.
func (s *Server) refresh(ctx context.Context, clientID, token, resource string) (map[string]any, error) {
	if token == "" {
		return nil, &tokenError{http.StatusBadRequest, "invalid_request", "send refresh_token"}
	}
	key := hash(token)
	var rt refresh
	var ch chain
	var refusal *tokenError
	var ended []string
	now := s.now()
	err := s.readFirst(ctx, func(tx kv.Tx) error {
		rt, ch, refusal, ended = refresh{}, chain{}, nil, nil
		found, err := get(bucket(tx, refreshBucket), key, &rt)
		if err != nil {
			return err
		}
		if found {
			found, err = get(bucket(tx, chainsBucket), []byte(rt.Chain), &ch)
			if err != nil {
				return err
			}
		}
		switch {
		case !found:
			refusal = invalidGrant("unknown, expired or revoked refresh token; sign in again")
		case ch.ClientID != clientID:
			refusal = invalidGrant("the refresh token was issued to another client")
		case !tx.Writable() && (rt.Used || !rt.Expires.Before(now) && !ch.Expires.Before(now) && (resource == "" || s.resource(resource) == ch.Grant.Resource)):
			return errWrite // reused (the chain ends) or good (the token is used up)
		case rt.Used:
			refusal = invalidGrant("the refresh token was already used, so a copy of it is somewhere else: the sign-in is ended; sign in again")
			ended, err = endChain(tx, rt.Chain)
			slog.Warn("oauth: a used refresh token came back; its chain is revoked", "person", ch.Grant.Person, "client", ch.Grant.Client)
			return err
		case rt.Expires.Before(now) || ch.Expires.Before(now):
			refusal = invalidGrant("the refresh token has expired; sign in again")
		case resource != "" && s.resource(resource) != ch.Grant.Resource:
			refusal = &tokenError{http.StatusBadRequest, "invalid_target", fmt.Sprintf("the refresh token is for %s, not %s", ch.Grant.Resource, resource)}
		default:
			rt.Used = true
			return put(bucket(tx, refreshBucket), key, rt)
		}
		return nil
	})
	s.revokeRows(ctx, ended)
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		return nil, refusal
	}
	now = s.now()
	accessToken, err := s.access.Rotate(ctx, ch.Row, now.Add(s.accessTTL))
	if errors.Is(err, access.ErrRevokedToken) || errors.Is(err, access.ErrNoToken) {
		// The person revoked the connector's token (tokens revoke): the chain ends with it.
		err := s.db.Update(ctx, func(tx kv.Tx) error {
			_, err := endChain(tx, rt.Chain)
			return err
		})
		if err != nil {
			return nil, err
		}
		return nil, invalidGrant("access was revoked; sign in again")
	}
	if err != nil {
		return nil, fmt.Errorf("renewing token row %s: %w", ch.Row, err)
	}
	return s.keep(ctx, rt.Chain, ch, accessToken, now, false)
}

// issue mints a token row for g, starts a chain for it, and keeps its first refresh token.
// also runs in the same transaction, to check what may have changed since the request was
// checked.
func (s *Server) issue(ctx context.Context, clientID string, g grant, also func(kv.Tx, string) error) (map[string]any, error) {
	now := s.now()
	g.Expires = now.Add(s.accessTTL)
	accessToken, row, err := s.access.AddToken(ctx, g.token())
	if err != nil {
		return nil, fmt.Errorf("minting a token row: %w", err)
	}
	id := secret("")
	ch := chain{ClientID: clientID, Grant: g, Row: row.ID}
	var resp map[string]any
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		if err := also(tx, id); err != nil {
			return err
		}
		resp, err = s.keepTx(tx, id, ch, accessToken, now, true)
		return err
	})
	if err != nil {
		s.revokeRows(ctx, []string{row.ID})
		return nil, err
	}
	return resp, nil
}

// keep stores chain id (still there, unless fresh) with a new refresh token, and returns
// the token answer.
func (s *Server) keep(ctx context.Context, id string, ch chain, accessToken string, now time.Time, fresh bool) (map[string]any, error) {
	var resp map[string]any
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		var err error
		resp, err = s.keepTx(tx, id, ch, accessToken, now, fresh)
		return err
	})
	return resp, err
}

func (s *Server) keepTx(tx kv.Tx, id string, ch chain, accessToken string, now time.Time, fresh bool) (map[string]any, error) {
	chains := bucket(tx, chainsBucket)
	if !fresh && chains.Get([]byte(id)) == nil {
		// Ended while the row was renewed (a used refresh token came back): whoever ended
		// it revoked the row.
		return nil, invalidGrant("the sign-in was ended while refreshing; sign in again")
	}
	ch.Grant.Expires = now.Add(s.accessTTL)
	ch.Expires = now.Add(s.refreshTTL)
	rtoken := secret("cmr_")
	if err := sweep(tx, refreshBucket, now); err != nil {
		return nil, err
	}
	if err := put(bucket(tx, refreshBucket), hash(rtoken), refresh{Chain: id, Expires: ch.Expires}); err != nil {
		return nil, err
	}
	if err := put(chains, []byte(id), ch); err != nil {
		return nil, err
	}
	return map[string]any{
		"access_token":  accessToken,
		"token_type":    "Bearer",
		"expires_in":    int(s.accessTTL / time.Second),
		"refresh_token": rtoken,
	}, nil
}

// endChain deletes chain id and returns its token row, to be revoked once the transaction
// is over. Its refresh tokens stay until they expire, leading nowhere.
func endChain(tx kv.Tx, id string) ([]string, error) {
	b := bucket(tx, chainsBucket)
	var ch chain
	found, err := get(b, []byte(id), &ch)
	if err != nil || !found {
		return nil, err
	}
	return []string{ch.Row}, b.Delete([]byte(id))
}

func (s *Server) revokeRows(ctx context.Context, ids []string) {
	for _, id := range ids {
		if _, err := s.access.Revoke(ctx, id); err != nil && !errors.Is(err, access.ErrNoToken) {
			slog.Error("oauth: revoking a token row", "row", id, "err", err)
		}
	}
}

// clientLabel is how a token row says which client it is for: its name and where it sends
// the person back, since the name is the client's own word.
func clientLabel(name, redirectURI string) string {
	if name == "" {
		name = "unnamed app"
	}
	return name + " (" + redirectHost(redirectURI) + ")"
}

func oauthError(w http.ResponseWriter, status int, code, descr string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="compass-mcp"`)
	}
	writeJSON(w, status, map[string]string{"error": code, "error_description": descr})
}

func serverError(w http.ResponseWriter, doing string, err error) {
	slog.Error("oauth: "+doing, "err", err)
	http.Error(w, "Internal error (logged on the server)", http.StatusInternalServerError)
}
