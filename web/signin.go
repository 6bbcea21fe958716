package web

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/doclink"
	"github.com/compass-mcp/compass-mcp/kv"
)

// The page keeps its own things in the data file, beside the spaces:
//
//	web/codes/<sha256(code)>       a one-time sign-in code: {person, space, next, expires}
//	web/sessions/<sha256(cookie)>  a signed-in browser: {person, space, expires}
//	web/store                      this store's random id (see StoreID)
//	web/page                       the page last served on this store (see Announce)
//
// Only hashes of codes and cookies are kept, so a copy of the file signs nobody in.
var (
	webBucket      = []byte("web")
	codesBucket    = []byte("codes")
	sessionsBucket = []byte("sessions")
	storeKey       = []byte("store")
	pageKey        = []byte("page")
)

const (
	// CodeLife is how long a sign-in link from "compass-mcp open" can be used (once).
	CodeLife = 15 * time.Minute
	// SessionLife is how long a browser stays signed in.
	SessionLife = 30 * 24 * time.Hour
)

// ErrBadCode is returned by SignIn for a code that is unknown, used or expired.
var ErrBadCode = errors.New("the sign-in link is unknown, used, or expired")

type grant struct {
	Person  string    `json:"person"`
	Space   string    `json:"space"`
	Next    string    `json:"next,omitempty"`
	Expires time.Time `json:"expires"`
}

func secret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func hashOf(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// NewCode makes a one-time sign-in code for person on space that leads to next (a path
// of the page, "/" when empty or not a path), usable once within CodeLife. The link to
// give is <page>/signin?code=<code>.
func NewCode(db kv.DB, person, space, next string) (string, error) {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		next = "/"
	}
	code := secret()
	g, _ := json.Marshal(grant{Person: person, Space: space, Next: next, Expires: time.Now().Add(CodeLife)})
	err := db.Update(func(tx kv.Tx) error {
		b, err := sub(tx, codesBucket)
		if err != nil {
			return err
		}
		sweep(b)
		return b.Put(hashOf(code), g)
	})
	if err != nil {
		return "", fmt.Errorf("keeping a sign-in code: %w", err)
	}
	return code, nil
}

func sub(tx kv.Tx, name []byte) (kv.Bucket, error) {
	w, err := tx.CreateBucketIfNotExists(webBucket)
	if err != nil {
		return nil, err
	}
	return w.CreateBucketIfNotExists(name)
}

// sweep forgets expired grants, a few at a time.
func sweep(b kv.Bucket) {
	now := time.Now()
	var old [][]byte
	c := b.Cursor()
	for k, v := c.First(); k != nil && len(old) < 100; k, v = c.Next() {
		var g grant
		if json.Unmarshal(v, &g) != nil || now.After(g.Expires) {
			old = append(old, k)
		}
	}
	for _, k := range old {
		b.Delete(k)
	}
}

// redeem uses up a code and makes a session for its person: it returns the cookie's value
// and the grant.
func redeem(db kv.DB, code string) (string, grant, error) {
	var g grant
	cookie := secret()
	err := db.Update(func(tx kv.Tx) error {
		codes, err := sub(tx, codesBucket)
		if err != nil {
			return err
		}
		raw := codes.Get(hashOf(code))
		if raw == nil {
			return ErrBadCode
		}
		if err := codes.Delete(hashOf(code)); err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &g); err != nil || time.Now().After(g.Expires) {
			return ErrBadCode
		}
		sessions, err := sub(tx, sessionsBucket)
		if err != nil {
			return err
		}
		sweep(sessions)
		s, _ := json.Marshal(grant{Person: g.Person, Space: g.Space, Expires: time.Now().Add(SessionLife)})
		return sessions.Put(hashOf(cookie), s)
	})
	return cookie, g, err
}

// cookieName is the session cookie's name, the store's own: browsers keep cookies by host,
// not port, so two pages on 127.0.0.1 (two stores) must not overwrite each other's.
func (s *Site) cookieName() string { return "compass_" + s.store[:12] }

// who is the signed-in person a page is for.
type who struct {
	Person string
	Spaces []string // the spaces they may see, sorted
	Home   string   // the one shown without ?space=
	cookie string
}

// session finds the person a request's cookie signed in, if they still may see a space.
func (s *Site) session(r *http.Request) (who, bool) {
	c, err := r.Cookie(s.cookieName())
	if err != nil || len(c.Value) != 64 {
		return who{}, false
	}
	var g grant
	found := false
	err = s.db.View(func(tx kv.Tx) error {
		w := tx.Bucket(webBucket)
		if w == nil || w.Bucket(sessionsBucket) == nil {
			return nil
		}
		raw := w.Bucket(sessionsBucket).Get(hashOf(c.Value))
		found = raw != nil && json.Unmarshal(raw, &g) == nil
		return nil
	})
	if err != nil {
		s.log.Error("reading a session", "err", err)
		return who{}, false
	}
	if !found || time.Now().After(g.Expires) {
		return who{}, false
	}
	mine := s.spacesOf(g.Person)
	if len(mine) == 0 {
		return who{}, false
	}
	return who{Person: g.Person, Spaces: mine, Home: s.homeOf(mine), cookie: c.Value}, true
}

// signedIn lets only a signed-in browser through; any other is told how to sign in, and
// nothing else.
func (s *Site) signedIn(h func(http.ResponseWriter, *http.Request, who)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.session(r)
		if !ok {
			doc, _ := doclink.ID(r.URL.Path) // a document's page: the command to run names it
			s.render(w, r, http.StatusUnauthorized, "signin", page{Title: "Sign in", Data: signinView{Doc: doc}})
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		h(w, r, p)
	})
}

type signinView struct {
	Doc    string // the document the browser asked for, for the command to run
	Failed bool   // a sign-in link was refused
	Return bool   // another front door sent the browser here: come back to it once signed in
}

// SignedIn returns the person signed in on the browser that sent r: for the front doors
// beside the page that need a person's say, like the OAuth consent (package oauth).
func (s *Site) SignedIn(r *http.Request) (string, bool) {
	p, ok := s.session(r)
	return p.Person, ok
}

// pageHeaders are the headers every page has: what it may load, and that no other site
// may frame it (CSP frame-ancestors, and X-Frame-Options for browsers without it).
func pageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
}

// AskSignIn answers r, from a browser nobody is signed in on, with the sign-in page, saying
// to come back to r's page once signed in. r comes from another front door (the OAuth
// consent), not through the page's own guard, so the page's headers are set here.
func (s *Site) AskSignIn(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w.Header())
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, http.StatusUnauthorized, "signin", page{Title: "Sign in", Data: signinView{Return: true}})
}

func (s *Site) signin(w http.ResponseWriter, r *http.Request) {
	cookie, g, err := redeem(s.db, r.URL.Query().Get("code"))
	if err == nil && !slices.Contains(s.spacesOf(g.Person), g.Space) {
		err = ErrBadCode
	}
	if err != nil {
		if !errors.Is(err, ErrBadCode) {
			s.log.Error("signing in", "err", err)
		}
		s.render(w, r, http.StatusForbidden, "signin", page{Title: "Sign in", Data: signinView{Failed: true}})
		return
	}
	s.forget(r) // the session this browser had, if any, ends: one browser, one session
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(), Value: cookie, Path: "/", MaxAge: int(SessionLife.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure(r),
	})
	next := g.Next
	if u, err := url.Parse(next); err != nil || u.Host != "" || u.Scheme != "" {
		next = "/"
	}
	if next == "/" && g.Space != s.homeOf(s.spacesOf(g.Person)) {
		next = "/?space=" + url.QueryEscape(g.Space) // open --space launch: launch's documents
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// secure reports whether the session cookie is marked Secure: over TLS, or behind an https
// public URL (Config.Secure).
func (s *Site) secure(r *http.Request) bool { return s.cfg.Secure || r.TLS != nil }

// forget ends the session r's cookie names, if it names one.
func (s *Site) forget(r *http.Request) {
	c, err := r.Cookie(s.cookieName())
	if err != nil || len(c.Value) != 64 {
		return
	}
	err = s.db.Update(func(tx kv.Tx) error {
		b, err := sub(tx, sessionsBucket)
		if err != nil {
			return err
		}
		return b.Delete(hashOf(c.Value))
	})
	if err != nil {
		s.log.Error("ending a session", "err", err)
	}
}

func (s *Site) signout(w http.ResponseWriter, r *http.Request) {
	s.forget(r)
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure(r)})
	s.render(w, r, http.StatusOK, "signin", page{Title: "Signed out", Data: signinView{}})
}
