package oauth

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// checkRedirectURI says why uri cannot be a client's redirect URI, or nil when it can: an
// absolute URI without a fragment that is https, http on a loopback address (a native app's
// local listener, RFC 8252 section 7.3), or a private-use scheme with a dot in it
// (com.example.app:/cb, RFC 8252 section 7.1). Anything else could hand the code to a page
// that is not the client's.
func checkRedirectURI(uri string) error {
	if len(uri) > maxURILength {
		return fmt.Errorf("redirect URI %.40q... is longer than %d bytes", uri, maxURILength)
	}
	u, err := url.Parse(uri)
	if err != nil || !u.IsAbs() {
		return fmt.Errorf("redirect URI %q is not an absolute URI", uri)
	}
	if u.Fragment != "" || strings.Contains(uri, "#") {
		return fmt.Errorf("redirect URI %q has a fragment", uri)
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
		if u.Host == "" {
			return fmt.Errorf("redirect URI %q has no host", uri)
		}
	case scheme == "http":
		if !loopbackHost(u.Hostname()) {
			return fmt.Errorf("redirect URI %q is http but not loopback: use https, or http://127.0.0.1 for an app on this machine", uri)
		}
	case strings.Contains(scheme, "."):
		// A private-use scheme named after a domain the app's maker holds.
	default:
		return fmt.Errorf("redirect URI %q: the scheme must be https, http on loopback, or an app's own (like com.example.app)", uri)
	}
	return nil
}

// checkApplicationType says why the redirect URIs don't fit a client's application_type
// (OpenID Connect Dynamic Client Registration, section 2, which the MCP authorization
// specification of 2026-07-28 asks registering clients to send), or nil when they do: a
// native app's are loopback http or its own scheme, which only this machine's app can
// receive; a web app's are https. A client that sends none is taken as before, on
// checkRedirectURI's rules alone: the clients of older revisions don't send it.
func checkApplicationType(appType string, uris []string) error {
	switch appType {
	case "":
		return nil
	case "native", "web":
	default:
		return errApplicationType
	}
	for _, uri := range uris {
		u, err := url.Parse(uri)
		if err != nil {
			return fmt.Errorf("redirect URI %q is not an absolute URI", uri)
		}
		scheme := strings.ToLower(u.Scheme)
		if appType == "native" && (scheme == "https" || scheme == "http" && !loopbackHost(u.Hostname())) {
			return fmt.Errorf("redirect URI %q is not a native app's: application_type native takes http on a loopback address (http://127.0.0.1:PORT/...) or the app's own scheme (com.example.app:/cb); register an https one as web", uri)
		}
		if appType == "web" && scheme != "https" {
			return fmt.Errorf("redirect URI %q is not a web app's: application_type web takes https only; register loopback and app schemes as native", uri)
		}
	}
	return nil
}

var errApplicationType = errors.New(`application_type is "native" (an app on the person's device: loopback or its own scheme) or "web" (https)`)

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// redirectMatches reports whether the redirect URI an authorization request gives is one the
// client registered: the same string exactly, except that a loopback http URI may have any
// port (RFC 8252 section 7.3: the app listens on whatever port is free). Only the port: the
// scheme, host, path and query are compared as they are, and a fragment is never taken.
func redirectMatches(registered []string, given string) bool {
	for _, r := range registered {
		if r == given {
			return true
		}
	}
	g, err := url.Parse(given)
	if err != nil || g.Scheme != "http" || !loopbackHost(g.Hostname()) || strings.Contains(given, "#") {
		return false
	}
	for _, r := range registered {
		ru, err := url.Parse(r)
		if err != nil || ru.Scheme != "http" || !loopbackHost(ru.Hostname()) {
			continue
		}
		if ru.Hostname() == g.Hostname() && ru.EscapedPath() == g.EscapedPath() &&
			ru.RawQuery == g.RawQuery && ru.ForceQuery == g.ForceQuery && ru.User == nil && g.User == nil {
			return true
		}
	}
	return false
}
