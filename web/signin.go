package web

import (
	"errors"
	"net"
	"net/http"
	"net/url"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/mdscan"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// Signing in is the access room's: a one-time code (access.Store.NewSignInCode, made by
// "compass-mcp open") is redeemed at /signin for a cookie that keeps the browser signed in
// (access.Store.RedeemCode, SignedIn, SignOut). The page sets and reads the cookie.

// cookieName is the session cookie's name, the store's own: browsers keep cookies by host,
// not port, so two pages on 127.0.0.1 (two stores) must not overwrite each other's.
func (s *Site) cookieName() string { return "compass_" + s.store[:12] }

// who is the signed-in person a page is for.
type who struct {
	Person string
	Spaces []string // the spaces they may see, sorted
	Home   string   // the one shown without ?space=
	cookie string
	// waiting is the header's count of what waits for them, read once for the request.
	waiting *inboxWaiting
}

// session finds the person a request's cookie signed in, if they still may see a space:
// access's decision for a browser (access.Store.Browser).
func (s *Site) session(r *http.Request) (who, bool) {
	c, err := r.Cookie(s.cookieName())
	if err != nil {
		return who{}, false
	}
	p, ok, err := s.cfg.Access.Browser(r.Context(), c.Value)
	if err != nil {
		s.log.Error("reading a session", "err", err)
	}
	if !ok {
		return who{}, false
	}
	return who{Person: p.Person, Spaces: p.Spaces, Home: s.homeOf(p.Spaces), cookie: c.Value, waiting: &inboxWaiting{person: p.Person}}, true
}

// signedIn lets only a signed-in browser through; any other is told how to sign in, and
// nothing else.
func (s *Site) signedIn(h func(http.ResponseWriter, *http.Request, who)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.session(r)
		if !ok {
			doc, _ := mdscan.DocumentID(r.URL.Path) // a document's page: the command to run names it
			s.render(w, r, http.StatusUnauthorized, "signin", page{Title: "Sign in", Data: signinView{Doc: doc, AskAgent: s.agentHandsLinks(r)}})
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if changes(r) && !rightToken(r, p) {
			s.badToken(w, r)
			return
		}
		h(w, r, p)
	})
}

type signinView struct {
	Doc      string // the document the browser asked for, for the command to run
	Failed   bool   // a sign-in link was refused
	Return   bool   // another front door sent the browser here: come back to it once signed in
	AskAgent bool   // the agent may hand the person a link (agentHandsLinks)
}

// agentHandsLinks reports whether the person may ask their agent for a sign-in link
// (list_documents sign_in), which a one-person server on this machine hands out: the
// request came to a loopback listener, the server has no tokens (a team's has), and its
// agents are not reviewed (Config.Review: then the tools hand no link).
// Someone who installed the one-click bundle has no compass-mcp command to run.
func (s *Site) agentHandsLinks(r *http.Request) bool {
	if s.cfg.Review {
		return false
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || !loopback(hostOf(local.String())) {
		return false
	}
	has, err := s.cfg.Access.HasTokens(r.Context())
	return err == nil && !has
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
	s.render(w, r, http.StatusUnauthorized, "signin", page{Title: "Sign in", Data: signinView{Return: true, AskAgent: s.agentHandsLinks(r)}})
}

// signin follows a sign-in link: it signs the browser in at once when the person opened
// the link themselves (from a terminal, the address bar, another app: Sec-Fetch-Site none,
// or a browser too old to say) and it replaces nobody else; otherwise it asks first.
// Without the question, any member with a link of their own could sign another person's
// browser in as themselves from a page of theirs (login CSRF), and that browser's next
// OAuth consent would give the agent their account.
func (s *Site) signin(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	g, err := s.cfg.Access.CodeFor(r.Context(), code)
	if err != nil {
		s.signinFailed(w, r, err)
		return
	}
	now, signedIn := s.session(r)
	if fromElsewhere(r) || signedIn && now.Person != g.Person {
		v := askView{Code: code, Person: g.Person}
		n := s.names(r.Context())
		v.Name = n.Show(spaces.Person(g.Person))
		if signedIn {
			v.Replaces = n.Show(spaces.Person(now.Person))
		}
		w.Header().Set("Cache-Control", "no-store")
		s.render(w, r, http.StatusOK, "asksignin", page{Title: "Sign in as " + v.Name + "?", Data: v})
		return
	}
	s.redeem(w, r, code)
}

// fromElsewhere reports whether r is a navigation another site started (a link or a form
// on another origin, by the browser's Sec-Fetch-Site).
func fromElsewhere(r *http.Request) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	return site == "cross-site" || site == "same-site"
}

// askView is the question the page asks before a sign-in link it didn't see the person
// open themselves signs the browser in.
type askView struct {
	Code, Person, Name string
	Replaces           string // who is signed in on the browser now, if anyone
}

// signinPost is the question's answer: the page's own form (a post from another origin, or
// one that doesn't say it came from the page, is refused before it gets here:
// http.CrossOriginProtection and browserOnly). It needs no form token: the browser may have
// no session yet, and the one-time code is the secret the question's page was shown.
func (s *Site) signinPost(w http.ResponseWriter, r *http.Request) {
	s.redeem(w, r, r.PostFormValue("code"))
}

// redeem uses code up and signs the browser in for its person, ending the session it had.
func (s *Site) redeem(w http.ResponseWriter, r *http.Request, code string) {
	cookie, g, err := s.cfg.Access.RedeemCode(r.Context(), code)
	if err != nil {
		s.signinFailed(w, r, err)
		return
	}
	s.forget(r) // the session this browser had, if any, ends: one browser, one session
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(), Value: cookie, Path: "/", MaxAge: int(access.SignedInLife.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure(r),
	})
	next := g.Next
	if u, err := url.Parse(next); err != nil || u.Host != "" || u.Scheme != "" {
		next = "/"
	}
	if next == "/" && g.Space != s.homeOf(s.spacesOf(r.Context(), g.Person)) {
		next = "/?space=" + url.QueryEscape(g.Space) // open --space launch: launch's documents
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Site) signinFailed(w http.ResponseWriter, r *http.Request, err error) {
	if !errors.Is(err, access.ErrBadCode) {
		s.log.Error("signing in", "err", err)
	}
	s.render(w, r, http.StatusForbidden, "signin", page{Title: "Sign in", Data: signinView{Failed: true, AskAgent: s.agentHandsLinks(r)}})
}

// secure reports whether the session cookie is marked Secure: over TLS, or behind an https
// public URL (Config.Secure).
func (s *Site) secure(r *http.Request) bool { return s.cfg.Secure || r.TLS != nil }

// forget ends the session r's cookie names, if it names one.
func (s *Site) forget(r *http.Request) {
	c, err := r.Cookie(s.cookieName())
	if err != nil {
		return
	}
	if err := s.cfg.Access.SignOut(r.Context(), c.Value); err != nil {
		s.log.Error("ending a session", "err", err)
	}
}

// signout ends the session; a browser still signed in must send its form token (the
// layout's form does), so that no page elsewhere, nor a program without the page, signs the
// person out. A cookie that signs nobody in is cleared whatever the form holds.
func (s *Site) signout(w http.ResponseWriter, r *http.Request) {
	if p, ok := s.session(r); ok && !rightToken(r, p) {
		s.badToken(w, r)
		return
	}
	s.forget(r)
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure(r)})
	s.render(w, r, http.StatusOK, "signin", page{Title: "Signed out", Data: signinView{AskAgent: s.agentHandsLinks(r)}})
}
