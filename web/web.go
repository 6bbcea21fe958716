// Package web serves the person's page: the documents of their spaces rendered, their
// history and diffs, an editor whose saves merge, and the spaces' conversations, to a
// signed-in browser; and beside it the messages endpoint, through which chat integrations
// add to those conversations (MountMessages).
//
// It is a second front door beside package tools: it calls the same docstore and threads
// methods and renders HTML where the tools render Markdown. One handler a route, each
// thin: read the request, call one store method, fill a template. The messages endpoint is
// here, not in a package of its own, because it is the same kind of door: HTTP onto the
// same conversations, under the same loopback rule against DNS rebinding, and one route.
//
// # Caveats
//
// Everything an agent writes is shown, so it is rendered as untrusted: goldmark without raw
// HTML, then bluemonday's UGC policy, then a Content-Security-Policy that runs no inline
// script. Forms are refused from other origins (http.CrossOriginProtection); a request that
// changes something must say it came from the page and carry its session's form token
// (proof.go: a program holding the person's cookie is not the person); and a page served
// on loopback answers only to a loopback Host (against DNS rebinding).
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/icon"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/semantic"
	"github.com/compass-mcp/compass-mcp/spaces"
)

//go:embed templates/*.html static/*
var files embed.FS

// Config is what the page serves and to whom.
type Config struct {
	Space string // the configured space: shown first to those who may see it
	Me    string // the person (id) who may sign in: --for
	// Access is who may do what: the spaces each person may see (the page shows each of
	// them), the sign-in codes and the signed-in browsers. Nil: access.New(db) with Me the
	// owner of Space (see access.Store.WithOwner), so Me sees Space and the members of a
	// space see it.
	Access *access.Store
	// Path is the data file's path: the page watches it for saves made by other
	// processes. Empty: it reads the store on every tick instead. A store that tells of
	// its commits (Changes, as PostgreSQL does) needs neither.
	Path string
	// Poll is how often open pages check for new versions (default 50 ms), unless the
	// store tells of its commits.
	Poll   time.Duration
	Logger *slog.Logger
	// Secure marks the session cookie Secure though the request came over plain HTTP: the
	// page is reached over https through a reverse proxy (--public-url https://...). A
	// request that came over TLS gets a Secure cookie anyway.
	Secure bool
	// Hosts are the Host names the page answers to beside loopback ones (the host of
	// --public-url): see access.ForeignHost.
	Hosts []string
	// Review says the agents of this server are reviewed (serve --review): its tools hand
	// no sign-in link, so the sign-in page doesn't tell the person to ask the agent for one.
	Review bool
	// Semantic is the semantic tier of this server's agents (--embeddings), whose state the
	// documents list shows (meaning.go); nil: off in this process (a page served alone, by
	// compass-mcp web, shows it off whatever another process serving agents does).
	Semantic *semantic.Tier
}

// Site is the person's page on the spaces of one data file.
type Site struct {
	cfg      Config
	db       kv.DB
	pages    *pages
	live     *hub
	log      *slog.Logger
	handler  http.Handler
	store    string // the data file's id (see StoreID)
	html     *renderCache
	blames   *blameCache // the page's blames, a version's worked out once (blamecache.go)
	patterns []string    // the routes' patterns (Routes)
}

// New makes the page of db's spaces (cfg.Space first). Close stops its watcher.
func New(ctx context.Context, db kv.DB, cfg Config) (*Site, error) {
	if err := spaces.Valid(cfg.Space); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 50 * time.Millisecond
	}
	if cfg.Access == nil {
		cfg.Access = access.New(db).WithOwner(cfg.Space, cfg.Me)
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	store, err := StoreID(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("reading the data file's id: %w", err)
	}
	s := &Site{cfg: cfg, db: db, pages: p, log: cfg.Logger, store: store, html: newRenderCache(64 << 20), blames: newBlameCache(64 << 20)}
	s.live = newHub(s)
	s.handler = s.routes()
	return s, nil
}

// Close stops watching the store for open pages; their event streams end.
func (s *Site) Close() { s.live.close() }

// ServeHTTP serves the page's routes.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Site) routes() http.Handler {
	mux := &access.Routes{Mux: http.NewServeMux()}
	static, _ := fs.Sub(files, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", cacheFor(time.Hour, http.FileServerFS(static))))
	mux.HandleFunc("GET "+storePath, s.storeID)
	// The icon is no space's: anyone may fetch it (MCP clients show it beside the server and
	// its tools, tools/list names it here; browsers take it as the favicon).
	mux.Handle("GET "+icon.SVGPath, cacheFor(24*time.Hour, serveBytes("image/svg+xml", icon.SVG)))
	mux.Handle("GET "+icon.PNGPath, cacheFor(24*time.Hour, serveBytes("image/png", icon.PNG48)))
	mux.Handle("GET /favicon.ico", cacheFor(24*time.Hour, serveBytes("image/png", icon.PNG48)))
	mux.HandleFunc("GET /signin", s.signin)
	mux.HandleFunc("POST /signin", s.signinPost)
	mux.HandleFunc("POST /signout", s.signout)

	in := func(pattern string, h func(http.ResponseWriter, *http.Request, who)) {
		mux.Handle(pattern, s.signedIn(s.weighed(pattern, h)))
	}
	in("GET /{$}", s.list)
	in("GET /deleted", s.deleted)
	in("GET /new", s.newForm)
	in("POST /new", s.create)
	in("GET /document/{id}", s.document)
	in("GET /document/{id}/v/{n}", s.version)
	in("GET /document/{id}/history", s.history)
	in("GET /document/{id}/links", s.links)
	in("GET /document/{id}/diff", s.diff)
	in("GET /document/{id}/edit", s.editForm)
	in("POST /document/{id}/edit", s.save)
	in("POST /document/{id}/rename", s.rename)
	in("POST /document/{id}/restore", s.restore)
	in("POST /document/{id}/delete", s.remove)
	in("POST /document/{id}/undelete", s.undelete)
	in("GET /document/{id}/events", s.events)
	s.reviewRoutes(in)
	s.inboxRoutes(in)
	s.activityRoutes(in)
	in("GET /conversations", s.conversations)
	in("GET /conversation/{id}", s.conversation)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.problem(w, r, http.StatusNotFound, "Nothing here", "There's no page at this address. The documents are on the first page.")
	})
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(s.crossOrigin))
	s.patterns = mux.Patterns
	return s.guard(cop.Handler(s.browserOnly(mux.Mux)))
}

// Routes are the patterns the page serves, as registered: for a test that tries them all.
func (s *Site) Routes() []string { return slices.Clone(s.patterns) }

// guard refuses a Host that isn't loopback on a loopback listener (DNS rebinding), sets
// the headers every page has, and turns a panic into a logged 500.
func (s *Site) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("page handler panicked", "panic", p, "path", r.URL.Path)
				http.Error(w, "Internal error (logged on the server)", http.StatusInternalServerError)
			}
		}()
		if access.ForeignHost(r, s.cfg.Hosts) { // the rule of every door (access.Gate.Decide)
			http.Error(w, fmt.Sprintf("Forbidden: this page answers to a loopback address (127.0.0.1, localhost), not %q", r.Host), http.StatusForbidden)
			return
		}
		pageHeaders(w.Header())
		next.ServeHTTP(w, r)
	})
}

func cacheFor(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", fmt.Sprintf("max-age=%d", int(d.Seconds())))
		next.ServeHTTP(w, r)
	})
}

// serveBytes answers with b, of the media type mime.
func serveBytes(mime string, b []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", mime)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if r.Method != http.MethodHead {
			w.Write(b)
		}
	})
}

func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// names are people's display names as they are now, read on their own: for what a page
// shows beside a write or a refusal of its own. A page that reads shows the names its
// View read with the rest. A store that can't be read gives ids for names (logged).
func (s *Site) names(ctx context.Context) spaces.Names {
	var n spaces.Names
	err := docstore.New(s.db, s.cfg.Space).View(ctx, func(r *docstore.Reader) error { n = r.Names(); return nil })
	if err != nil {
		s.log.Error("reading people's names", "err", err)
	}
	return n
}

// Serve serves the page on ln with hs until ctx ends, then shuts down within a few
// seconds. hs's limits are the caller's (compass-mcp gives the page's own listener those
// of --http: transport.Harden); its Handler becomes the page.
func (s *Site) Serve(ctx context.Context, ln net.Listener, hs *http.Server) error {
	hs.Handler = s
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	return nil
}
