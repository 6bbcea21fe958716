package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"

	"github.com/compass-mcp/compass-mcp/access"
)

// A decision on the page (accept, decline, edit, restore, delete, and every other POST a
// signed-in browser makes) needs proof that the person's browser made it, not a program
// holding the person's cookie (issue 34: a reviewed agent that got hold of a sign-in link
// could accept its own proposals). Two proofs, both required:
//
//   - the request says it came from the page itself: Sec-Fetch-Site: same-origin, or an
//     Origin naming the page's own host (access.SentFromPage). Browsers send both on every form post
//     and fetch; http.CrossOriginProtection lets a request with neither through, so a plain
//     HTTP client passed. Here it is refused with 403.
//   - the form carries the session's form token (form_token, {{template "formtoken" $}}),
//     which only a page shown to that session holds.
//
// The token is an HMAC of the session's cookie under a fixed label: it needs no store of
// its own and no extra read (the cookie is read for every page anyway), it is the same on
// every replica serving the store, it ends with the session, and it gives away nothing of
// the cookie (HttpOnly) that a page's HTML shows it beside.

// formTokenLabel is what the HMAC signs: the token is good for nothing else.
const formTokenLabel = "compass-mcp form token v1"

// formToken is the form token of the session whose cookie is cookie.
func formToken(cookie string) string {
	m := hmac.New(sha256.New, []byte(cookie))
	m.Write([]byte(formTokenLabel))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// rightToken reports whether r's form carries the form token of p's session. Only the
// request's body counts (PostFormValue): a token in a URL would leak into logs and history.
func rightToken(r *http.Request, p who) bool {
	got := r.PostFormValue("form_token")
	return got != "" && hmac.Equal([]byte(got), []byte(formToken(p.cookie)))
}

// changes reports whether r's method may change something (anything but GET, HEAD,
// OPTIONS).
func changes(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// browserOnly refuses, with 403 and a page saying why, a request that would change
// something and does not say it came from the page (access.SentFromPage): every POST of the page,
// the sign-in and sign-out forms too. No browser's form or fetch is refused by it.
func (s *Site) browserOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if changes(r) && !access.SentFromPage(r) {
			s.log.Warn("refused a page request that no browser sent", "method", r.Method, "path", r.URL.Path)
			s.problem(w, r, http.StatusForbidden, "Refused: not sent from your page",
				"This request changes something but doesn't say it came from this page (no Sec-Fetch-Site: same-origin, no matching Origin), as every browser's form does. Decisions are made on the page, in a browser, or with compass-mcp on the command line.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// crossOrigin answers a request http.CrossOriginProtection refused: a form of another
// site's page.
func (s *Site) crossOrigin(w http.ResponseWriter, r *http.Request) {
	s.log.Warn("refused a page request from another origin", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"))
	s.problem(w, r, http.StatusForbidden, "Refused: sent from another site",
		"This request came from a page of another site, not from this page. Nothing was changed. Decisions are made on this page or with compass-mcp on the command line.")
}

// badToken answers a signed-in POST whose form token is missing or not its session's.
func (s *Site) badToken(w http.ResponseWriter, r *http.Request) {
	s.log.Warn("refused a page form without its session's token", "path", r.URL.Path)
	s.problem(w, r, http.StatusForbidden, "Refused: the form is out of date",
		"This form was not sent from a page shown to this browser's session (its form token is missing or old, as after signing in again). Go back, reload the page and try again.")
}
