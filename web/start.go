package web

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/mdscan"
)

// Listen takes the page's address, addr, for the data at path (open as db). With busyOK
// (beside stdio, where the MCP server must serve whatever happens) a busy address is not a
// failure: when this data's page is already served there by another process, ln is nil
// and elsewhere is that page's URL, for links to go to; when something else holds it, the
// page moves to a free port of the same host (logged); when none can be had, ln is nil.
func Listen(ctx context.Context, db kv.DB, path, addr string, busyOK bool, log *slog.Logger) (ln net.Listener, elsewhere string, err error) {
	ln, err = net.Listen("tcp", addr)
	if err == nil {
		return ln, "", nil
	}
	if !busyOK {
		return nil, "", fmt.Errorf("listening for the page on %s: %w", addr, err)
	}
	if url, ok := Served(ctx, db, path); ok {
		log.Info("the person's page of this data file is already served by another compass-mcp; links go there", "url", url)
		return nil, url, nil
	}
	host, _, _ := net.SplitHostPort(addr)
	if ln, err = net.Listen("tcp", net.JoinHostPort(host, "0")); err != nil {
		log.Warn("the person's page is not served: its address is taken", "addr", addr, "err", err)
		return nil, "", nil
	}
	log.Warn("the page's address is taken by something else; serving the page on another port", "wanted", addr, "got", ln.Addr().String())
	return ln, "", nil
}

// Page is the person's page as a process serves it on an address of its own (Start).
type Page struct {
	URL    string
	Done   <-chan error // gets Serve's error once the page has stopped and withdrawn its record
	Server *http.Server // the server it serves with: the one given to Start
}

// Start serves the page of db's spaces (New with cfg; cfg.Path names the data, as Listen
// takes it) on addr, with hs, in the background until ctx ends (Run). With busyOK, a busy
// address is no failure (Listen): then it may return no page, and no error.
func Start(ctx context.Context, db kv.DB, addr string, busyOK bool, cfg Config, hs *http.Server) (*Page, error) {
	ln, _, err := Listen(ctx, db, cfg.Path, addr, busyOK, cmpLogger(cfg.Logger))
	if err != nil || ln == nil {
		return nil, err
	}
	site, err := New(ctx, db, cfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	url, done := site.Run(ctx, ln, hs, db)
	return &Page{URL: url, Done: done, Server: hs}, nil
}

// cmpLogger is log, or slog's default when nil (as New has it).
func cmpLogger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.Default()
	}
	return log
}

// Mount serves the site on mux's paths that are not another's (beside /mcp), closes it when
// hs shuts down, and announces url, where it is reached, in db (AnnounceLogged); the func
// it returns withdraws that record, once the server has stopped.
func (s *Site) Mount(ctx context.Context, mux access.Mux, hs *http.Server, db kv.DB, url string) (withdraw func()) {
	mux.Handle("/", s)
	hs.RegisterOnShutdown(s.Close)
	return AnnounceLogged(ctx, db, url, s.log)
}

// AgentSignIn is a one-time sign-in link to the page at base (the link base, Links.Base)
// for person in space, leading to next, that the agent may hand the person (list_documents
// sign_in): the person may have no terminal command to get one with (the one-click
// bundle). ok is false, and there is no link, unless this is a one-person server (no token
// rows in db: a team's server has them) whose page is on this machine (base a loopback
// http address without a path; not a page reached from elsewhere, --link-base).
// docs/PAGE.md says why that is safe.
func AgentSignIn(ctx context.Context, db kv.DB, base, person, space, next string, log *slog.Logger) (link string, ok bool, err error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || !loopback(u.Hostname()) || u.Path != "" {
		return "", false, nil
	}
	if access.New(db).Guarded(ctx, "") {
		return "", false, nil
	}
	code, err := access.New(db).NewSignInCode(ctx, person, space, next)
	if err != nil {
		return "", false, err
	}
	cmpLogger(log).Info("the agent was given a sign-in link to the page", "person", person, "space", space, "next", next)
	return base + "/signin?code=" + code, true, nil
}

// Run serves the site on ln with hs (Serve) in the background until ctx ends, announced in
// db meanwhile (AnnounceLogged); done gets Serve's error once the page has stopped and its
// record is withdrawn.
func (s *Site) Run(ctx context.Context, ln net.Listener, hs *http.Server, db kv.DB) (url string, done <-chan error) {
	url = URLOf(ln.Addr())
	withdraw := AnnounceLogged(ctx, db, url, s.log)
	end := make(chan error, 1)
	go func() {
		err := s.Serve(ctx, ln, hs)
		if err != nil {
			s.log.Error("serving the person's page", "err", err)
		}
		withdraw()
		end <- err
	}()
	return url, end
}

// AnnounceLogged is Announce, saying on log where the page is, and that a record could not
// be written or removed (other processes then don't link to it, or find it gone): the page
// serves all the same.
func AnnounceLogged(ctx context.Context, db kv.DB, url string, log *slog.Logger) (withdraw func()) {
	log.Info("serving the person's page", "url", url, "sign_in", "compass-mcp open")
	w, err := Announce(ctx, db, url)
	if err != nil {
		log.Warn("could not record the page's address in the data file; other processes won't link to it", "err", err)
		return func() {}
	}
	return func() {
		if err := w(); err != nil {
			log.Warn("could not remove the page's address from the data file; other processes find it gone", "err", err)
		}
	}
}

// OpenBrowser opens link in the person's browser where there is one to open; it never
// waits for it, and says nothing if it can't.
func OpenBrowser(link string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", link)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", link)
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return
		}
		cmd = exec.Command("xdg-open", link)
	}
	if err := cmd.Start(); err == nil {
		go cmd.Wait()
	}
}

// SignInLink is a one-time link that signs person in to the page at url (for space) and
// leads to next, a path of the page.
func SignInLink(ctx context.Context, db kv.DB, url, person, space, next string) (string, error) {
	code, err := access.New(db).NewSignInCode(ctx, person, space, next)
	if err != nil {
		return "", err
	}
	return url + "/signin?code=" + code, nil
}

// PathOf is the page's path of doc in space ("/" for none): doc is a title or id, found in
// space, or a link, taken as it is (its document may be of another of the person's
// spaces: the page finds it there, or says there is no such document).
func PathOf(ctx context.Context, db kv.DB, space, doc string) (string, error) {
	if doc == "" {
		return "/", nil
	}
	if id, ok := mdscan.DocumentID(doc); ok {
		return "/document/" + id, nil
	}
	d, err := docstore.ReadIn(ctx, docstore.New(db, space), func(r *docstore.Reader) (docstore.Document, error) { return r.Find(doc) })
	if err != nil {
		return "", fmt.Errorf("%s: %w", doc, err)
	}
	return "/document/" + d.ID, nil
}
