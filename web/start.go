package web

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/doclink"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
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

// Run serves the site on ln with hs (Serve) in the background until ctx ends, announced in
// db meanwhile (AnnounceLogged); done gets Serve's error once the page has stopped and its
// record is withdrawn.
func (s *Site) Run(ctx context.Context, ln net.Listener, hs *http.Server, db kv.DB) (url string, done <-chan error) {
	url = URLOf(ln.Addr())
	withdraw := AnnounceLogged(db, url, s.log)
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
func AnnounceLogged(db kv.DB, url string, log *slog.Logger) (withdraw func()) {
	log.Info("serving the person's page", "url", url, "sign_in", "compass-mcp open")
	w, err := Announce(db, url)
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
func SignInLink(db kv.DB, url, person, space, next string) (string, error) {
	code, err := access.New(db).NewSignInCode(person, space, next)
	if err != nil {
		return "", err
	}
	return url + "/signin?code=" + code, nil
}

// PathOf is the page's path of doc in space ("/" for none): doc is a title or id, found in
// space, or a link, taken as it is (its document may be of another of the person's
// spaces: the page finds it there, or says there is no such document).
func PathOf(db kv.DB, space, doc string) (string, error) {
	if doc == "" {
		return "/", nil
	}
	if id, ok := doclink.ID(doc); ok {
		return "/document/" + id, nil
	}
	d, err := docstore.New(db, space).Find(doc)
	if err != nil {
		return "", fmt.Errorf("%s: %w", doc, err)
	}
	return "/document/" + d.ID, nil
}
