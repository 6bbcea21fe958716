package transport

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/compass-mcp/compass-mcp/web"
)

// The gate's matrix (issue 45): every route the real handler of serve --http has (read
// from its mux and the page's, so that a route added without a row here fails), tried with
// every kind of credential, on a loopback listener with a loopback Host and with a foreign
// one, on a server with and without --review, on a team's store (token rows and --token)
// and on a one-person store (none: open to loopback). Each cell's expected status comes
// from the row's door and the rules below; for requests that may change something, the
// store is read back before and after, and must have changed exactly when expected.
//
// The credentials:
//
//	none          no Authorization, no cookie
//	junk          Authorization: Bearer x
//	good          ana's token (agent north)
//	expired       ana's token, expired
//	revoked       ana's token, revoked
//	read-only     ana's token made --read-only
//	reviewed      ana's token made --review (agent scout)
//	static        the server's --token
//	other member  ben's token: ben is a member of launch, not of personal
//	cookie        ana's page session cookie, without the browser's proof
//	cookie+proof  the cookie, Sec-Fetch-Site: same-origin and the session's form token
//
// The one-person store has no token rows and no --token: there only none, junk and the
// cookie apply. With a foreign Host every request is refused before its credentials are
// read, so there the matrix tries those that would get in with a loopback Host, and junk
// (foreignCredentials): the run stays a few seconds under -race on two cores.
var credentials = []string{"none", "junk", "good", "expired", "revoked", "read-only", "reviewed", "static", "other member", "cookie", "cookie+proof"}

var foreignCredentials = []string{"none", "junk", "good", "static", "cookie+proof"}

// door is what kind of route a row is, which decides who gets in.
type door int

const (
	public      door = iota // anyone who reaches the server: icons, metadata, OAuth's own endpoints
	pageRead                // the person's page, GET: a signed-in browser (the cookie)
	pageWrite               // the person's page, POST: the cookie and the browser's proof
	bearerRead              // a bearer door that reads (the sync's listing and versions)
	syncWrite               // the sync's writes: a principal that may save as its person
	messages                // the messages endpoint: a principal that may write
	mcpWrite                // MCP, a tools/call of write_document
	pageSignout             // POST /signout: ends the session it is sent with
)

// target is what a row's request acts on: a document (id, its latest version n), made
// afresh by the row's setup when the last request changed it.
type target struct {
	id string
	n  int
}

type row struct {
	pattern string // the route, as registered
	door    door
	method  string
	path    string // {id} and {n} are the target's
	body    string // a form (the form token is added with the proof), or JSON when json
	json    bool
	ok      int  // the status when allowed in (public: always, but for a foreign Host)
	changes bool // an allowed request changes the store
	setup   func(t *testing.T, w *world) target
	// header adds request headers of the row's own (beside the credential's).
	header map[string]string
}

// world is one store served twice (with and without --review), with its credentials.
type world struct {
	name    string
	db      kv.DB
	team    bool
	secrets map[string]string // token secrets by credential name; "static" the --token
	cookie  string            // "compass_xxx=..." of ana's page session
	form    string            // that session's form token
	plan    target            // the document the reading rows show
	n       atomic.Int64      // a counter for unique titles and texts
}

func (w *world) next() int { return int(w.n.Add(1)) }

const matrixStatic = "matrix-static-token-for-ana"

func newWorld(t *testing.T, name string, team bool) *world {
	ctx := context.Background()
	w := &world{name: name, db: kvtest.Open(t), team: team, secrets: map[string]string{}}
	a := access.New(w.db).WithOwner("personal", "ana")
	if team {
		if _, err := a.AddMember(ctx, "launch", "ben"); err != nil {
			t.Fatal(err)
		}
		add := func(cred string, s *access.Store, n access.NewToken) access.Token {
			secret, tok, err := s.AddToken(ctx, n)
			if err != nil {
				t.Fatal(cred, err)
			}
			w.secrets[cred] = secret
			return tok
		}
		add("good", a, access.NewToken{Person: "ana", Agent: "north"})
		add("read-only", a, access.NewToken{Person: "ana", ReadOnly: true})
		add("reviewed", a, access.NewToken{Person: "ana", Agent: "scout", Review: true})
		add("other member", a, access.NewToken{Person: "ben"})
		past := time.Now().Add(-48 * time.Hour)
		add("expired", a.WithClock(func() time.Time { return past }), access.NewToken{Person: "ana", Expires: past.Add(time.Hour)})
		revoked := add("revoked", a, access.NewToken{Person: "ana"})
		if _, err := a.Revoke(ctx, revoked.ID); err != nil {
			t.Fatal(err)
		}
		w.secrets["static"] = matrixStatic
	}
	code, err := a.NewSignInCode(ctx, "ana", "personal", "/")
	if err != nil {
		t.Fatal(err)
	}
	cookie, _, err := a.RedeemCode(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	id, err := web.StoreID(ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	w.cookie = "compass_" + id[:12] + "=" + cookie
	w.plan = w.document(t, "Plan")
	if _, _, err := threads.New(w.db, "personal").Add(ctx, "matrix", threads.Post{From: "person:ana", Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	return w
}

var ana = docstore.Author{By: spaces.Person("ana").String()}

// document makes a document of two versions by ana, titled title and a number.
func (w *world) document(t *testing.T, title string) target {
	ctx := context.Background()
	s := docstore.New(w.db, "personal")
	made, err := s.Create(ctx, fmt.Sprintf("%s %d", title, w.next()), "one\ntwo\n", docstore.KindSave, ana)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := s.Save(ctx, made.Document.ID, 1, "one\ntwo\nthree\n", ana, 0)
	if err != nil {
		t.Fatal(err)
	}
	return target{id: saved.Document.ID, n: saved.Document.Version}
}

func fresh(t *testing.T, w *world) target { return w.document(t, "Doc") }

func deleted(t *testing.T, w *world) target {
	d := w.document(t, "Deleted")
	if _, err := docstore.New(w.db, "personal").Delete(context.Background(), d.id, ana); err != nil {
		t.Fatal(err)
	}
	return d
}

// proposed is a document with an open proposal (n) by ana's agent north.
func withProposal(t *testing.T, w *world) target {
	d := w.document(t, "Proposed")
	north := docstore.Author{By: spaces.Agent("north").String(), For: spaces.Person("ana").String()}
	saved, err := docstore.New(w.db, "personal").Proposing().Write(context.Background(), d.id, "", "one\ntwo\nthree\nfour\n", 0, north)
	if err != nil || saved.Proposal == nil {
		t.Fatal(err, saved.Proposal)
	}
	return target{id: d.id, n: saved.Proposal.Number}
}

// commented is a document with an open comment (n) by ana.
func commented(t *testing.T, w *world) target {
	d := w.document(t, "Commented")
	c, err := docstore.New(w.db, "personal").Comment(context.Background(), d.id, docstore.NewComment{Lines: docstore.LineRange{From: 1, To: 1}, Text: "why?", Author: ana})
	if err != nil {
		t.Fatal(err)
	}
	return target{id: d.id, n: c.Comment.Number}
}

// mcpCall is a 2026-07-28 tools/call (no session) of write_document on {id}.
const mcpCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_document","arguments":{"document":"{id}","text":"matrix {u}\n"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"matrix","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`

var mcpHeader = map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "write_document", "Accept": "application/json, text/event-stream"}

func rows() []row {
	return []row{
		{pattern: "/mcp", door: mcpWrite, method: "POST", path: "/mcp", body: mcpCall, json: true, ok: 200, changes: true, setup: fresh, header: mcpHeader},
		{pattern: "/spaces/{space}/mcp", door: mcpWrite, method: "POST", path: "/spaces/personal/mcp", body: mcpCall, json: true, ok: 200, changes: true, setup: fresh, header: mcpHeader},
		{pattern: "/.well-known/oauth-protected-resource", door: public, method: "GET", path: "/.well-known/oauth-protected-resource", ok: 200},
		{pattern: "/.well-known/oauth-protected-resource/", door: public, method: "GET", path: "/.well-known/oauth-protected-resource/spaces/personal/mcp", ok: 200},
		{pattern: "/.well-known/oauth-authorization-server", door: public, method: "GET", path: "/.well-known/oauth-authorization-server", ok: 200},
		{pattern: "GET /authorize", door: public, method: "GET", path: "/authorize", ok: 400},
		// The consent is the page's: refused without the browser's proof; with it, a
		// consent page nobody was shown is a bad request, and nothing is allowed.
		{pattern: "POST /consent", door: pageWrite, method: "POST", path: "/consent", body: "allow=1", ok: 400},
		// No client: invalid_client, whatever the request carries (OAuth's, not the gate's).
		{pattern: "/token", door: public, method: "POST", path: "/token", body: "grant_type=authorization_code&code=made-up", ok: 401},
		{pattern: "/register", door: public, method: "POST", path: "/register", body: `{}`, json: true, ok: 400},
		{pattern: "GET /healthz", door: public, method: "GET", path: "/healthz", ok: 200}, // counts of the budget for work in flight, nothing named
		{pattern: "POST /spaces/{space}/conversations/{id}/messages", door: messages, method: "POST", path: "/spaces/personal/conversations/matrix/messages", body: `{"from":"person:ana","text":"matrix {u}"}`, json: true, ok: 201, changes: true},
		{pattern: "GET /spaces/{space}/sync/documents", door: bearerRead, method: "GET", path: "/spaces/personal/sync/documents", ok: 200},
		{pattern: "GET /spaces/{space}/sync/version", door: bearerRead, method: "GET", path: "/spaces/personal/sync/version?id={id}&n=0", ok: 200},
		{pattern: "POST /spaces/{space}/sync/{op}", door: syncWrite, method: "POST", path: "/spaces/personal/sync/create", body: `{"title":"Synced {u}","text":"x\n"}`, json: true, ok: 200, changes: true},
		{pattern: "POST /spaces/{space}/sync/{op}", door: syncWrite, method: "POST", path: "/spaces/personal/sync/save", body: `{"id":"{id}","base":{n},"text":"saved {u}\n","prefer":1}`, json: true, ok: 200, changes: true, setup: fresh},
		{pattern: "POST /spaces/{space}/sync/{op}", door: syncWrite, method: "POST", path: "/spaces/personal/sync/rename", body: `{"id":"{id}","title":"Renamed {u}"}`, json: true, ok: 200, changes: true, setup: fresh},
		{pattern: "POST /spaces/{space}/sync/{op}", door: syncWrite, method: "POST", path: "/spaces/personal/sync/delete", body: `{"id":"{id}"}`, json: true, ok: 200, changes: true, setup: fresh},
		{pattern: "POST /spaces/{space}/sync/{op}", door: syncWrite, method: "POST", path: "/spaces/personal/sync/undelete", body: `{"id":"{id}"}`, json: true, ok: 200, changes: true, setup: deleted},
		// A save that keeps the other side of a clash as a proposal, in the same commit (the
		// only way the sync makes one: the propose op went with issue 46).
		{pattern: "POST /spaces/{space}/sync/{op}", door: syncWrite, method: "POST", path: "/spaces/personal/sync/save", body: `{"id":"{id}","base":1,"text":"one\nmine {u}\n","keep":true}`, json: true, ok: 200, changes: true, setup: fresh},

		// The page.
		{pattern: "GET /static/", door: public, method: "GET", path: "/static/style.css", ok: 200},
		{pattern: "GET /.well-known/compass-store", door: public, method: "GET", path: "/.well-known/compass-store", ok: 200},
		{pattern: "GET /icon.svg", door: public, method: "GET", path: "/icon.svg", ok: 200},
		{pattern: "GET /icon.png", door: public, method: "GET", path: "/icon.png", ok: 200},
		{pattern: "GET /favicon.ico", door: public, method: "GET", path: "/favicon.ico", ok: 200},
		{pattern: "GET /signin", door: public, method: "GET", path: "/signin?code=made-up", ok: 403},
		{pattern: "POST /signin", door: public, method: "POST", path: "/signin", body: "code=made-up", ok: 403},
		{pattern: "POST /signout", door: pageSignout, method: "POST", path: "/signout", ok: 200},
		{pattern: "/", door: public, method: "GET", path: "/no/such/page", ok: 404},
		{pattern: "GET /{$}", door: pageRead, method: "GET", path: "/", ok: 200},
		{pattern: "GET /deleted", door: pageRead, method: "GET", path: "/deleted", ok: 200},
		{pattern: "GET /new", door: pageRead, method: "GET", path: "/new", ok: 200},
		{pattern: "POST /new", door: pageWrite, method: "POST", path: "/new", body: "title=New+{u}&text=x", ok: 303, changes: true},
		{pattern: "GET /document/{id}", door: pageRead, method: "GET", path: "/document/{id}", ok: 200},
		{pattern: "GET /document/{id}/v/{n}", door: pageRead, method: "GET", path: "/document/{id}/v/1", ok: 200},
		{pattern: "GET /document/{id}/history", door: pageRead, method: "GET", path: "/document/{id}/history", ok: 200},
		{pattern: "GET /document/{id}/links", door: pageRead, method: "GET", path: "/document/{id}/links", ok: 200},
		{pattern: "GET /document/{id}/diff", door: pageRead, method: "GET", path: "/document/{id}/diff?from=1&to=2", ok: 200},
		{pattern: "GET /document/{id}/edit", door: pageRead, method: "GET", path: "/document/{id}/edit", ok: 200},
		{pattern: "POST /document/{id}/edit", door: pageWrite, method: "POST", path: "/document/{id}/edit", body: "base={n}&text=edited+{u}", ok: 303, changes: true, setup: fresh},
		{pattern: "POST /document/{id}/rename", door: pageWrite, method: "POST", path: "/document/{id}/rename", body: "title=Renamed+{u}", ok: 303, changes: true, setup: fresh},
		{pattern: "POST /document/{id}/restore", door: pageWrite, method: "POST", path: "/document/{id}/restore", body: "n=1", ok: 303, changes: true, setup: fresh},
		{pattern: "POST /document/{id}/delete", door: pageWrite, method: "POST", path: "/document/{id}/delete", ok: 303, changes: true, setup: fresh},
		{pattern: "POST /document/{id}/undelete", door: pageWrite, method: "POST", path: "/document/{id}/undelete", ok: 303, changes: true, setup: deleted},
		{pattern: "GET /document/{id}/events", door: pageRead, method: "GET", path: "/document/{id}/events", ok: 200},
		{pattern: "GET /document/{id}/blame", door: pageRead, method: "GET", path: "/document/{id}/blame", ok: 200},
		{pattern: "GET /document/{id}/comments", door: pageRead, method: "GET", path: "/document/{id}/comments", ok: 200},
		{pattern: "POST /document/{id}/comments", door: pageWrite, method: "POST", path: "/document/{id}/comments", body: "from=1&to=1&text=a+comment+{u}", ok: 303, changes: true},
		{pattern: "POST /document/{id}/comment/{n}/reply", door: pageWrite, method: "POST", path: "/document/{id}/comment/{n}/reply", body: "text=a+reply+{u}", ok: 303, changes: true, setup: commented},
		{pattern: "POST /document/{id}/comment/{n}/resolve", door: pageWrite, method: "POST", path: "/document/{id}/comment/{n}/resolve", ok: 303, changes: true, setup: commented},
		{pattern: "GET /inbox", door: pageRead, method: "GET", path: "/inbox", ok: 200},
		{pattern: "GET /inbox/events", door: pageRead, method: "GET", path: "/inbox/events", ok: 200},
		{pattern: "GET /activity", door: pageRead, method: "GET", path: "/activity", ok: 200},
		{pattern: "GET /activity/events", door: pageRead, method: "GET", path: "/activity/events", ok: 200},
		{pattern: "POST /activity/session/{id}/undo", door: pageWrite, method: "POST", path: "/activity/session/m0000000000000000/undo", ok: 404},
		{pattern: "GET /proposals", door: pageRead, method: "GET", path: "/proposals", ok: 303}, // to /inbox
		{pattern: "POST /document/{id}/accept", door: pageWrite, method: "POST", path: "/document/{id}/accept", body: "n={n}", ok: 303, changes: true, setup: withProposal},
		{pattern: "GET /document/{id}/proposals", door: pageRead, method: "GET", path: "/document/{id}/proposals", ok: 200, setup: withProposal},
		{pattern: "GET /document/{id}/proposal/{n}", door: pageRead, method: "GET", path: "/document/{id}/proposal/{n}", ok: 200, setup: withProposal},
		{pattern: "GET /document/{id}/proposal/{n}/edit", door: pageRead, method: "GET", path: "/document/{id}/proposal/{n}/edit", ok: 200, setup: withProposal},
		{pattern: "POST /document/{id}/proposal/{n}/accept", door: pageWrite, method: "POST", path: "/document/{id}/proposal/{n}/accept", ok: 303, changes: true, setup: withProposal},
		{pattern: "POST /document/{id}/proposal/{n}/decline", door: pageWrite, method: "POST", path: "/document/{id}/proposal/{n}/decline", body: "why=no", ok: 303, changes: true, setup: withProposal},
		{pattern: "GET /conversations", door: pageRead, method: "GET", path: "/conversations", ok: 200},
		{pattern: "GET /conversation/{id}", door: pageRead, method: "GET", path: "/conversation/matrix", ok: 200},
	}
}

// who a bearer door takes a credential for.
type who int

const (
	unauthorized who = iota // 401
	otherSpaces             // 403: a principal that doesn't reach the space
	person                  // ana, who may write
	readOnly                // ana, read-only
	reviewed                // ana, reviewed
)

func bearerWho(cred string, team, review bool) who {
	var w who
	switch cred {
	case "junk", "expired", "revoked":
		return unauthorized
	case "none", "cookie", "cookie+proof": // a cookie is no bearer: the open server's owner, else nobody
		if team {
			return unauthorized
		}
		w = person
	case "good", "static":
		w = person
	case "read-only":
		return readOnly
	case "reviewed":
		w = reviewed
	case "other member":
		return otherSpaces
	}
	if review && w == person {
		return reviewed // --review is part of every principal the server makes
	}
	return w
}

// effect is what a request did to the store.
type effect string

const (
	nothing  effect = "nothing"
	saved    effect = "saved"    // a version, a document, a message, a comment, a decision
	proposed effect = "proposed" // only a proposal
)

// expect is a cell's expected status and effect.
func expect(r row, cred string, team, review, foreign bool) (int, effect) {
	if foreign {
		return http.StatusForbidden, nothing
	}
	done := nothing
	if r.changes {
		done = saved
	}
	switch r.door {
	case public:
		return r.ok, nothing
	case pageRead:
		if strings.HasPrefix(cred, "cookie") {
			return r.ok, nothing
		}
		return http.StatusUnauthorized, nothing // the sign-in page
	case pageWrite, pageSignout:
		if cred == "cookie+proof" {
			return r.ok, done
		}
		return http.StatusForbidden, nothing // not sent from the page (no Sec-Fetch-Site, no Origin)
	}
	switch w := bearerWho(cred, team, review); {
	case w == unauthorized:
		return http.StatusUnauthorized, nothing
	case w == otherSpaces:
		return http.StatusForbidden, nothing
	case r.door == bearerRead:
		return r.ok, nothing
	case r.door == syncWrite && w != person, r.door == messages && w == readOnly:
		return http.StatusForbidden, nothing
	case r.door == mcpWrite && w == readOnly:
		// The tool is not offered: JSON-RPC -32602, which a 2026-07-28 request gets as 400.
		return http.StatusBadRequest, nothing
	case r.door == mcpWrite && w == reviewed:
		return http.StatusOK, proposed
	default:
		return r.ok, done
	}
}

// state reads back what a request on tg may have changed, in one read each of documents
// and conversations: tg's record (version, title, deletion, proposals, decisions, comments),
// the latest saved document and how many there are (a create, or a save of any other),
// and the messages of the conversation the messages rows post to.
func (w *world) state(t *testing.T, tg target) string {
	t.Helper()
	ctx := context.Background()
	docs, err := docstore.ReadIn(ctx, docstore.New(w.db, "personal"), func(r *docstore.Reader) (string, error) {
		var b strings.Builder
		if tg.id != "" {
			d, err := r.ByID(tg.id)
			if err != nil {
				return "", err
			}
			var rv docstore.Review
			if d.Review != nil {
				rv = *d.Review
			}
			fmt.Fprintf(&b, "%s v%d deleted=%v p%d open%d decided%d c%d u%d; ", d.Title, d.Version, d.Deleted != nil, rv.Proposals, rv.Open, rv.Decided, rv.Comments, rv.Unresolved)
		}
		latest, count, err := r.List(1)
		for _, d := range latest {
			fmt.Fprintf(&b, "latest %s v%d; ", d.ID, d.Version)
		}
		fmt.Fprintf(&b, "%d documents; ", count)
		return b.String(), err
	})
	if err != nil {
		t.Fatal(err)
	}
	var messages int
	err = threads.New(w.db, "personal").View(ctx, func(r *threads.Reader) error {
		c, err := r.Get("matrix")
		messages = c.Count
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs + fmt.Sprintf("%d messages", messages)
}

func effectOf(before, after string) effect {
	if before == after {
		return nothing
	}
	// Only proposal counts moved: a proposal.
	strip := regexp.MustCompile(` p\d+ open\d+`)
	if strip.ReplaceAllString(before, "") == strip.ReplaceAllString(after, "") {
		return proposed
	}
	return saved
}

func TestEveryDoorEveryCredential(t *testing.T) {
	all := rows()
	for _, team := range []bool{true, false} {
		for _, review := range []bool{false, true} {
			name := map[bool]string{true: "team", false: "one person"}[team] + map[bool]string{true: ", --review", false: ""}[review]
			t.Run(name, func(t *testing.T) {
				t.Parallel() // each its own store: the cells of one read back only their own
				w := newWorld(t, name, team)
				token := ""
				if team {
					token = matrixStatic
				}
				base, patterns := servedWithRoutes(t, w.db, token, review)
				w.form = formTokenOf(t, base, w.cookie)
				checkCoverage(t, patterns, all)
				for _, r := range all {
					w.row(t, base, r, review)
				}
			})
		}
	}
}

// row tries r with every credential, with a loopback Host and a foreign one.
func (w *world) row(t *testing.T, base string, r row, review bool) {
	port := base[strings.LastIndex(base, ":")+1:]
	var tg target
	for _, foreign := range []bool{false, true} {
		for _, cred := range credentials {
			if !w.team && !slices.Contains([]string{"none", "junk", "cookie", "cookie+proof"}, cred) {
				continue
			}
			if foreign && !slices.Contains(foreignCredentials, cred) {
				continue
			}
			if tg.id == "" {
				tg = w.plan
				if r.setup != nil {
					tg = r.setup(t, w)
				}
			}
			wantStatus, wantEffect := expect(r, cred, w.team, review, foreign)
			host := ""
			if foreign {
				host = "rebound.example:" + port
			}
			before := ""
			if r.method != "GET" {
				before = w.state(t, tg)
			}
			status, body := w.try(t, base, r, tg, cred, host)
			got := nothing
			if r.method != "GET" {
				got = effectOf(before, w.state(t, tg))
			}
			if status != wantStatus || got != wantEffect {
				t.Errorf("%s %s as %s (foreign Host %v): %d, %s; want %d, %s\n%s", r.method, r.path, cred, foreign, status, got, wantStatus, wantEffect, clip(body))
			}
			if got != nothing {
				tg = target{} // used up: the next cell gets its own
			}
			if r.door == pageSignout && status == http.StatusOK {
				w.signIn(t, base)
			}
		}
	}
}

// try sends r's request for target tg with the credential cred (and Host host, if set).
func (w *world) try(t *testing.T, base string, r row, tg target, cred, host string) (int, string) {
	t.Helper()
	u := strconv.Itoa(w.next())
	fill := strings.NewReplacer("{id}", tg.id, "{n}", strconv.Itoa(tg.n), "{u}", u)
	body := fill.Replace(r.body)
	ctype := "application/json"
	if !r.json {
		ctype = "application/x-www-form-urlencoded"
		if cred == "cookie+proof" && r.method == "POST" {
			if body != "" {
				body += "&"
			}
			body += "form_token=" + url.QueryEscape(w.form)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, base+fill.Replace(r.path), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if r.method != "GET" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	// Each request its own address for OAuth's limiter (the peer is loopback: the last
	// X-Forwarded-For hop counts), so that the matrix's many requests aren't throttled.
	req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", w.next()%250+1))
	switch cred {
	case "none":
	case "junk":
		req.Header.Set("Authorization", "Bearer x")
	case "cookie":
		req.Header.Set("Cookie", w.cookie)
	case "cookie+proof":
		req.Header.Set("Cookie", w.cookie)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	default:
		req.Header.Set("Authorization", "Bearer "+w.secrets[cred])
	}
	if host != "" {
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		if cred == "cookie+proof" {
			req.Header.Set("Sec-Fetch-Site", "same-origin") // the rebound page is its own origin
		}
	}
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return res.StatusCode, "(an event stream)" // it lasts: its status is the answer
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
	return res.StatusCode, string(b)
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// signIn gives ana's browser a new session (after a cell signed it out).
func (w *world) signIn(t *testing.T, base string) {
	ctx := context.Background()
	a := access.New(w.db).WithOwner("personal", "ana")
	code, err := a.NewSignInCode(ctx, "ana", "personal", "/")
	if err != nil {
		t.Fatal(err)
	}
	cookie, _, err := a.RedeemCode(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(w.cookie, "=")
	w.cookie = name + "=" + cookie
	w.form = formTokenOf(t, base, w.cookie)
}

var formTokenField = regexp.MustCompile(`name="form_token" value="([^"]+)"`)

// formTokenOf is the form token the page shows the session of cookie.
func formTokenOf(t *testing.T, base, cookie string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/new", nil)
	req.Header.Set("Cookie", cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := formTokenField.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no form token on /new (%d): %.300s", res.StatusCode, b)
	}
	return string(m[1])
}

// checkCoverage fails for a route the server has and no row tries, and for a row whose
// route the server doesn't have.
func checkCoverage(t *testing.T, patterns []string, all []row) {
	t.Helper()
	has := map[string]bool{}
	for _, r := range all {
		has[r.pattern] = true
	}
	for _, p := range patterns {
		if !has[p] {
			t.Errorf("the route %q has no row in the gate's matrix: add one (matrix_test.go), saying who may use it", p)
		}
	}
	for p := range has {
		if !slices.Contains(patterns, p) {
			t.Errorf("the matrix has a row for %q, which the server doesn't serve", p)
		}
	}
}

// servedWithRoutes serves, as serve --http does, db (the space personal, for ana) with
// token (--token) and review (--review) on 127.0.0.1, and returns its base URL and the
// patterns of every route it has: its mux's, and the page's in place of "/".
func servedWithRoutes(t *testing.T, db kv.DB, token string, review bool) (string, []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := tools.New(db, tools.Config{Space: "personal", For: "ana", Review: review})
	if err != nil {
		t.Fatal(err)
	}
	site, err := web.New(ctx, db, web.Config{Space: "personal", Me: "ana", Review: review, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := Server{MCP: srv, DB: db, Space: "personal", For: "ana", Token: token, Review: review,
		Idle: time.Hour, Page: site, PageAt: "/", Links: web.NewLinks("", db, "")}
	h, patterns, withdraw, err := s.handler(ctx, ln)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("Serve did not return 15 s after its context ended")
		}
		withdraw()
	})
	var all []string
	for _, p := range patterns {
		if p == "/" {
			all = append(all, site.Routes()...)
			continue
		}
		all = append(all, p)
	}
	return "http://" + ln.Addr().String(), all
}
