package oauth

import (
	"context"
	_ "embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

//go:embed consent.html
var consentHTML string

var consentPage = template.Must(template.New("consent").Parse(consentHTML))

// consentView is what the consent page shows.
type consentView struct {
	Problem      string // the request can't go on (shown alone)
	Error        string // the person's answer can't be taken as given
	ClientName   string
	ClientHost   string // a client ID metadata document's host
	RedirectHost string
	Person       string // the id, for commands
	Name         string // how the person is shown: the display name (SPEC: names, not ids)
	Consent      string
	Spaces       []spaceChoice
	Agent        string
	ReadOnly     bool
	Review       bool
}

type spaceChoice struct {
	Name    string
	Checked bool
}

// authorize is the authorization endpoint: it checks the request, then shows the person
// signed in on this browser what the client asks (or asks them to sign in first).
//
// A request whose client or redirect URI is wrong is answered here, never sent on: the
// redirect URI is not known to be the client's (RFC 6749 section 4.1.2.1). Other mistakes go
// back to the client as error redirects.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	clientID, redirectURI := q.Get("client_id"), q.Get("redirect_uri")
	if clientID == "" {
		s.problem(w, http.StatusBadRequest, "The request names no client (client_id).")
		return
	}
	if isClientIDURL(clientID) {
		// Fetching a client's document is done for a signed-in person only: otherwise anyone
		// who reaches the server could make it fetch URLs of their choosing.
		if _, ok := s.page.SignedIn(r); !ok {
			s.page.AskSignIn(w, r)
			return
		}
	}
	c, err := s.lookupClient(r, clientID)
	if err != nil {
		s.problem(w, http.StatusBadRequest, "The app that sent you here can't be identified: "+err.Error()+".")
		return
	}
	given := redirectURI != ""
	if !given && len(c.RedirectURIs) == 1 {
		redirectURI = c.RedirectURIs[0]
	}
	if !redirectMatches(c.RedirectURIs, redirectURI) {
		s.problem(w, http.StatusBadRequest, fmt.Sprintf("The redirect URI %q is not one the client registered.", redirectURI))
		return
	}
	req := request{ClientID: c.ID, ClientName: c.Name, RedirectURI: redirectURI, RedirectGiven: given, State: q.Get("state"), Scope: q.Get("scope")}
	fail := func(code, desc string) { s.redirectError(w, r, req, code, desc) }
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "only response_type=code is supported")
		return
	case q.Get("code_challenge") == "":
		fail("invalid_request", "PKCE is required: send code_challenge and code_challenge_method=S256")
		return
	case q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "code_challenge_method must be S256 (plain is not accepted)")
		return
	case !validS256(q.Get("code_challenge")):
		fail("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters)")
		return
	case len(q["resource"]) > 1:
		fail("invalid_target", "give one resource")
		return
	}
	req.Challenge = q.Get("code_challenge")
	req.Resource = s.issuer + "/"
	if v := q.Get("resource"); v != "" {
		if req.Resource = s.resource(v); req.Resource == "" {
			fail("invalid_target", fmt.Sprintf("%q is not a resource of this server (%s)", v, s.issuer))
			return
		}
	}
	person, ok := s.page.SignedIn(r)
	if !ok {
		s.page.AskSignIn(w, r)
		return
	}
	req.Person = person
	req.Expires = s.now().Add(s.consentTTL)
	id := secret("")
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		if err := sweep(tx, consentsBucket, s.now()); err != nil {
			return err
		}
		return put(bucket(tx, consentsBucket), []byte(id), req)
	})
	if err != nil {
		serverError(w, "keeping the authorization request", err)
		return
	}
	v, err := s.view(ctx, req, id)
	if err != nil {
		serverError(w, "listing the person's spaces", err)
		return
	}
	s.render(w, http.StatusOK, v)
}

// lookupClient finds the client a request names: registered, or by its metadata document.
func (s *Server) lookupClient(r *http.Request, id string) (client, error) {
	ctx := r.Context()
	if isClientIDURL(id) {
		return s.fetchClientDoc(r.Context(), id)
	}
	var c client
	var found bool
	err := s.db.View(ctx, func(tx kv.Tx) error {
		c = client{} // the View may run again
		var err error
		found, err = get(bucket(tx, clientsBucket), []byte(id), &c)
		return err
	})
	if err != nil {
		return client{}, err
	}
	if !found {
		return client{}, fmt.Errorf("no client %q is registered here (one no person allowed is forgotten after a day): let the app register again", id)
	}
	return c, nil
}

// validS256 reports whether c can be an S256 code challenge: a SHA-256 in base64url
// without padding, 43 of [A-Za-z0-9_-] (RFC 7636 section 4.2).
func validS256(c string) bool {
	if len(c) != 43 {
		return false
	}
	for _, r := range c {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// validVerifier reports whether v can be a PKCE code verifier: 43 to 128 unreserved
// characters, [A-Za-z0-9-._~] (RFC 7636 section 4.1).
func validVerifier(c string) bool {
	if len(c) < 43 || len(c) > 128 {
		return false
	}
	for _, r := range c {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' || r == '~') {
			return false
		}
	}
	return true
}

// view is the consent page for req, kept under id.
func (s *Server) view(ctx context.Context, req request, id string) (consentView, error) {
	mine, err := s.access.SpacesOf(ctx, req.Person)
	if err != nil {
		return consentView{}, err
	}
	want := resourceSpace(req.Resource)
	v := consentView{
		ClientName:   req.ClientName,
		RedirectHost: redirectHost(req.RedirectURI),
		Person:       req.Person,
		Name:         s.displayName(ctx, req.Person),
		Consent:      id,
		Agent:        agentName(req.ClientName),
	}
	if v.ClientName == "" {
		v.ClientName = "An unnamed app"
	}
	if isClientIDURL(req.ClientID) {
		if u, err := url.Parse(req.ClientID); err == nil {
			v.ClientHost = u.Host
		}
	}
	for _, sp := range mine {
		v.Spaces = append(v.Spaces, spaceChoice{Name: sp, Checked: sp == want || len(mine) == 1})
	}
	return v, nil
}

// displayName is how person is shown: the display name recorded for them, or the id when
// none is (or the file can't be read: the page still says who is signed in).
func (s *Server) displayName(ctx context.Context, person string) string {
	name := person
	err := s.db.View(ctx, func(tx kv.Tx) error {
		name = spaces.NamesIn(tx).Show(spaces.Person(person))
		return nil
	})
	if err != nil {
		slog.Warn("oauth: reading people's names", "err", err)
	}
	return name
}

// resourceSpace is the space a resource's endpoint is, or "" for the whole server or /mcp.
func resourceSpace(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	sp, ok := strings.CutPrefix(u.Path, "/spaces/")
	if !ok {
		return ""
	}
	return strings.TrimSuffix(sp, "/mcp")
}

// redirectHost is what the person is shown of where they'll be sent: the host, or an app's
// own scheme.
func redirectHost(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	if u.Host != "" {
		return u.Host
	}
	return u.Scheme + ":"
}

// agentName suggests an agent's name from the client's: "Claude" is "claude", "MCP
// Inspector" is "mcp-inspector".
func agentName(client string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(client) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 {
		return "agent"
	}
	return b.String()
}

// fromPage refuses an answer to the consent page that doesn't say a browser sent it from
// the page (access.SentFromPage): allow grants an agent the person's account, and a
// program holding the person's cookie is not the person.
func (s *Server) fromPage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !access.SentFromPage(r) {
			s.problem(w, http.StatusForbidden, "Refused: this answer doesn't say it came from the consent page (no Sec-Fetch-Site: same-origin, no matching Origin), as every browser's form does. Start again from the app, in a browser.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// consent takes the person's answer from the consent page. Cross-site posts, and posts
// that don't say a page sent them, are refused before it runs (http.CrossOriginProtection,
// fromPage); and the page's consent id, the form's token, is known only to the browser it
// was shown to, and kept for the person signed in there.
func (s *Server) consent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.problem(w, http.StatusBadRequest, "The answer could not be read.")
		return
	}
	person, ok := s.page.SignedIn(r)
	if !ok {
		s.problem(w, http.StatusForbidden, "You are no longer signed in on this browser. Sign in, then start again from the app.")
		return
	}
	id := r.PostForm.Get("consent")
	var req request
	var found bool
	err := s.db.View(ctx, func(tx kv.Tx) error {
		req = request{} // the View may run again
		var err error
		found, err = get(bucket(tx, consentsBucket), []byte(id), &req)
		return err
	})
	if err != nil {
		serverError(w, "reading the authorization request", err)
		return
	}
	if !found || id == "" || req.Person != person || req.Expires.Before(s.now()) {
		s.problem(w, http.StatusBadRequest, "This page has expired or was already answered. Start again from the app.")
		return
	}
	if r.PostForm.Has("deny") || !r.PostForm.Has("allow") {
		if s.take(ctx, w, id) {
			s.redirectError(w, r, req, "access_denied", "the person denied access")
		}
		return
	}
	c := code{request: req, Agent: strings.TrimSpace(r.PostForm.Get("agent")), Spaces: r.PostForm["space"], ReadOnly: r.PostForm.Get("read_only") != "", Review: r.PostForm.Get("review") != ""}
	if msg, err := s.checkAnswer(ctx, &c); err != nil {
		serverError(w, "listing the person's spaces", err)
		return
	} else if msg != "" {
		v, err := s.view(ctx, req, id)
		if err != nil {
			serverError(w, "listing the person's spaces", err)
			return
		}
		v.Error, v.Agent, v.ReadOnly, v.Review = msg, c.Agent, c.ReadOnly, c.Review
		for i := range v.Spaces {
			v.Spaces[i].Checked = slices.Contains(c.Spaces, v.Spaces[i].Name)
		}
		s.render(w, http.StatusBadRequest, v)
		return
	}
	token := secret("cmo_")
	c.Expires = s.now().Add(s.codeTTL)
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		if bucket(tx, consentsBucket).Get([]byte(id)) == nil {
			return errAnswered
		}
		if err := bucket(tx, consentsBucket).Delete([]byte(id)); err != nil {
			return err
		}
		if err := markUsed(tx, req.ClientID); err != nil {
			return err
		}
		if err := sweep(tx, codesBucket, s.now()); err != nil {
			return err
		}
		return put(bucket(tx, codesBucket), hash(token), c)
	})
	if err == errAnswered {
		s.problem(w, http.StatusBadRequest, "This page was already answered. Start again from the app.")
		return
	}
	if err != nil {
		serverError(w, "keeping the authorization code", err)
		return
	}
	slog.Info("oauth: access allowed", "person", person, "client", req.ClientName, "redirect", redirectHost(req.RedirectURI), "agent", c.Agent, "spaces", c.Spaces, "read_only", c.ReadOnly, "review", c.Review)
	s.redirect(w, r, req, url.Values{"code": {token}})
}

var errAnswered = fmt.Errorf("consent already answered")

// checkAnswer returns what is wrong with the person's choices ("" when nothing is).
func (s *Server) checkAnswer(ctx context.Context, c *code) (string, error) {
	mine, err := s.access.SpacesOf(ctx, c.Person)
	if err != nil {
		return "", err
	}
	if len(c.Spaces) == 0 {
		return "Pick at least one space, or deny.", nil
	}
	for _, sp := range c.Spaces {
		if !slices.Contains(mine, sp) {
			return fmt.Sprintf("You are not a member of %q.", sp), nil
		}
	}
	if want := resourceSpace(c.Resource); want != "" && !slices.Contains(c.Spaces, want) {
		return fmt.Sprintf("The app asks for the space %q (it connects to its address): allow that space, or deny.", want), nil
	}
	if _, err := spaces.ParseActor("agent:" + c.Agent); err != nil || strings.ContainsFunc(c.Agent, func(r rune) bool { return r == ':' || unicode.IsSpace(r) }) {
		return "The agent's name is one word of at most 100 characters, without ':', like claude.", nil
	}
	slices.Sort(c.Spaces)
	c.Spaces = slices.Compact(c.Spaces)
	return "", nil
}

// take deletes the consent request id, reporting false (and answering) when it was already gone.
func (s *Server) take(ctx context.Context, w http.ResponseWriter, id string) bool {
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		if bucket(tx, consentsBucket).Get([]byte(id)) == nil {
			return errAnswered
		}
		return bucket(tx, consentsBucket).Delete([]byte(id))
	})
	if err == errAnswered {
		s.problem(w, http.StatusBadRequest, "This page was already answered. Start again from the app.")
		return false
	}
	if err != nil {
		serverError(w, "forgetting the authorization request", err)
		return false
	}
	return true
}

func markUsed(tx kv.Tx, clientID string) error {
	b := bucket(tx, clientsBucket)
	var c client
	if found, err := get(b, []byte(clientID), &c); err != nil || !found || c.Used {
		return err
	}
	c.Used = true
	return put(b, []byte(clientID), c)
}

// redirectError sends the person back to the client with an error (RFC 6749 section 4.1.2.1).
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, req request, code, desc string) {
	s.redirect(w, r, req, url.Values{"error": {code}, "error_description": {desc}})
}

// redirect sends the person back to the client's redirect URI with v, the state and the
// issuer (RFC 9207) added to its query.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, req request, v url.Values) {
	u, err := url.Parse(req.RedirectURI)
	if err != nil {
		s.problem(w, http.StatusBadRequest, "The redirect URI cannot be parsed.")
		return
	}
	q := u.Query()
	for k, vs := range v {
		q[k] = vs
	}
	if req.State != "" {
		q.Set("state", req.State)
	}
	q.Set("iss", s.issuer)
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// problem answers with the page that says why the sign-in can't go on.
func (s *Server) problem(w http.ResponseWriter, status int, msg string) {
	s.render(w, status, consentView{Problem: msg})
}

func (s *Server) render(w http.ResponseWriter, status int, v consentView) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	// The person's page's stylesheet and icon, served beside (/static/style.css, /icon.svg);
	// no form-action: Chrome applies it to the redirect after the form, which leaves for the client.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := consentPage.Execute(w, v); err != nil {
		slog.Warn("oauth: rendering the consent page", "err", err)
	}
}
