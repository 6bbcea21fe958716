package web

import (
	"context"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// NoPage is the link base that makes links the documents' resource URIs
// (compass://document/<id>) when no page serves them.
const NoPage = "compass:/"

// Links is the link base the tools use (tools.Config.LinkBaseFunc): the one given, when
// there is one (--link-base); else the page this process serves, once Serving says where;
// else the page another process serves on the same data (checked to be alive and of this
// data, see Served); else NoPage.
//
// # Caveats
//
// The check reads the data, and the tools ask for the link base inside their read
// transactions, where another transaction on the same goroutine could deadlock with a
// writer (bbolt's caveat). So it runs once in NewLinks, outside any, and then, at most
// every few seconds, in the background; Base itself only reads what the last check found.
type Links struct {
	given string // trimmed; used when set is true
	set   bool
	db    kv.DB
	path  string // the data's, as Served takes it

	mu         sync.Mutex
	own        string
	found      string
	checked    time.Time
	refreshing bool
}

// NewLinks is the link base of the data db at path, given ("" for none) winning.
func NewLinks(given string, db kv.DB, path string) *Links {
	l := &Links{given: strings.TrimRight(given, "/"), set: given != "", db: db, path: path, found: NoPage}
	if !l.set {
		l.refresh()
	}
	return l
}

// Serving says that this process serves the page at url: links go there.
func (l *Links) Serving(url string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.own = url
}

// refresh looks for another process's page of this data.
func (l *Links) refresh() {
	found := NoPage
	if url, ok := Served(context.Background(), l.db, l.path); ok {
		found = url
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.found, l.checked, l.refreshing = found, time.Now(), false
}

// Base is the link base now.
func (l *Links) Base() string {
	if l.set {
		return l.given
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.own != "" {
		return l.own
	}
	if time.Since(l.checked) > 5*time.Second && !l.refreshing {
		l.refreshing = true
		go l.refresh()
	}
	return l.found
}

// URLOf is the page's address, listening on addr, as links give it: an address bound on
// every interface (0.0.0.0, ::) is linked as 127.0.0.1, which this machine reaches; for
// links that other machines follow, --link-base names the host they know.
func URLOf(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
