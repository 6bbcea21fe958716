package oauth

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// isClientIDURL reports whether a client_id is meant as a client ID metadata document's URL.
func isClientIDURL(id string) bool {
	return strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://")
}

// fetchClient makes the HTTP client that fetches client ID metadata documents: it follows no
// redirect, uses no proxy, and dials only public addresses (checked on the address actually
// dialed, so a name that resolves to a private address, at once or on a second lookup, is
// refused too). Loopback only when o.AllowLoopback.
func fetchClient(o FetchOptions) *http.Client {
	d := &net.Dialer{
		Timeout: o.Timeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("client metadata: dialing %s: %w", address, err)
			}
			if !publicAddr(ap.Addr(), o.AllowLoopback) {
				return fmt.Errorf("client metadata: %s is not a public address", ap.Addr())
			}
			return nil
		},
	}
	t := &http.Transport{
		DialContext:           d.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   o.Timeout,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
	}
	return &http.Client{
		Transport: t,
		Timeout:   o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errRedirect
		},
	}
}

var errRedirect = errors.New("the client ID metadata document's URL redirects; it must answer 200 itself")

// notPublic are the ranges that IsGlobalUnicast and IsPrivate let through but that are no
// public host's (RFC 6890's special-purpose registries), or that lead to an IPv4 address
// through a translator or tunnel, so could lead to a private one: "this network", shared
// (CGNAT; Alibaba's metadata service is 100.100.100.200), IETF protocol assignments,
// benchmarking, reserved; IPv4-compatible (::a.b.c.d), NAT64, discard-only, Teredo, 6to4,
// documentation and site-local IPv6.
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001::/32"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("fec0::/10"),
}

// publicAddr reports whether a may be dialed for a client ID metadata document: a public
// unicast address (an IPv4-mapped IPv6 one judged as its IPv4 address), or loopback when
// loopback is set (tests).
func publicAddr(a netip.Addr, loopback bool) bool {
	a = a.Unmap().WithZone("")
	if a.IsLoopback() {
		return loopback
	}
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// checkClientIDURL says why id cannot be a client ID metadata document's URL: it must be
// https with a host and a path, and nothing that makes two spellings of one URL.
func checkClientIDURL(id string) error {
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("client_id %q: a client ID metadata document's URL must be https", id)
	}
	if u.User != nil || u.Fragment != "" || strings.Contains(id, "#") {
		return fmt.Errorf("client_id %q: no user or fragment allowed in a client ID URL", id)
	}
	if u.Path == "" || u.Path == "/" {
		return fmt.Errorf("client_id %q: a client ID URL has a path, like https://example.com/client.json", id)
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("client_id %q: no . or .. segments in a client ID URL", id)
		}
	}
	return nil
}

// fetchClientDoc fetches and checks the client ID metadata document at id. Its errors say
// what was wrong, to be shown to the person (the client cannot be told: its redirect URI is
// what the document was to prove).
func (s *Server) fetchClientDoc(ctx context.Context, id string) (client, error) {
	if err := checkClientIDURL(id); err != nil {
		return client{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.fetch.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return client{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, errRedirect) {
			return client{}, errRedirect
		}
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return client{}, fmt.Errorf("the client ID metadata document at %s took longer than %s", id, s.fetch.Timeout)
		}
		return client{}, fmt.Errorf("fetching the client ID metadata document at %s: %w", id, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return client{}, fmt.Errorf("the client ID metadata document at %s answered %s, not 200", id, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.fetch.MaxBytes+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return client{}, fmt.Errorf("the client ID metadata document at %s took longer than %s", id, s.fetch.Timeout)
		}
		return client{}, fmt.Errorf("reading the client ID metadata document at %s: %w", id, err)
	}
	if int64(len(body)) > s.fetch.MaxBytes {
		return client{}, fmt.Errorf("the client ID metadata document at %s is larger than %d KiB", id, s.fetch.MaxBytes>>10)
	}
	var m struct {
		ClientID     string   `json:"client_id"`
		ClientName   string   `json:"client_name"`
		ClientURI    string   `json:"client_uri"`
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		AppType      string   `json:"application_type"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return client{}, fmt.Errorf("the client ID metadata document at %s is not JSON client metadata: %v", id, err)
	}
	if m.ClientID != id {
		return client{}, fmt.Errorf("the client ID metadata document at %s names another client_id (%q)", id, m.ClientID)
	}
	if m.AuthMethod != "" && m.AuthMethod != "none" {
		return client{}, fmt.Errorf("the client at %s wants token_endpoint_auth_method %q; this server has public clients only (none)", id, m.AuthMethod)
	}
	if len(m.RedirectURIs) == 0 || len(m.RedirectURIs) > maxRedirectURIs {
		return client{}, fmt.Errorf("the client ID metadata document at %s must list 1 to %d redirect_uris", id, maxRedirectURIs)
	}
	for _, u := range m.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return client{}, fmt.Errorf("the client ID metadata document at %s: %w", id, err)
		}
	}
	if err := checkApplicationType(m.AppType, m.RedirectURIs); err != nil {
		return client{}, fmt.Errorf("the client ID metadata document at %s: %w", id, err)
	}
	return client{ID: id, Name: cleanName(m.ClientName), URI: m.ClientURI, RedirectURIs: m.RedirectURIs}, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
