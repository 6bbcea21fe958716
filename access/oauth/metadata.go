package oauth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/compass-mcp/compass-mcp/spaces"
)

// The resources this server protects, by path: the whole server ("/"), its configured
// space's endpoint ("/mcp") and each space's ("/spaces/{space}/mcp"). A token is bound to one
// of them (RFC 8707); the whole server's covers every endpoint.
func isResourcePath(p string) bool {
	if p == "/" || p == "/mcp" {
		return true
	}
	space, ok := strings.CutPrefix(p, "/spaces/")
	if !ok {
		return false
	}
	space, ok = strings.CutSuffix(space, "/mcp")
	// "." and ".." are valid space names, but no request reaches them: the mux cleans the path.
	return ok && spaces.Valid(space) == nil && space != "." && space != ".."
}

// resource returns the canonical form of the resource indicator v, or "" when v does not
// name a resource of this server. The canonical form is what tokens are bound to: the
// issuer followed by the path, "/" for the whole server (so "https://h" and "https://h/"
// are one resource, as a URL parser in a client makes them).
func (s *Server) resource(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.Opaque != "" {
		return ""
	}
	if !strings.EqualFold(u.Scheme, s.base.Scheme) || !strings.EqualFold(hostPort(u), hostPort(s.base)) {
		return ""
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if !isResourcePath(p) {
		return ""
	}
	return s.issuer + p
}

// hostPort is u's host with the scheme's default port left out, lower case.
func hostPort(u *url.URL) string {
	h := strings.ToLower(u.Host)
	switch {
	case u.Scheme == "https" && strings.HasSuffix(h, ":443"):
		return strings.TrimSuffix(h, ":443")
	case u.Scheme == "http" && strings.HasSuffix(h, ":80"):
		return strings.TrimSuffix(h, ":80")
	}
	return h
}

// Allows reports whether a token bound to resource may be used at the endpoint path (the
// request's URL path, like "/spaces/launch/mcp"): when it is bound to the whole server, or
// to that endpoint. A token bound to another endpoint, or to another server, may not.
func (s *Server) Allows(resource, path string) bool {
	r := s.resource(resource)
	return r != "" && (r == s.issuer+"/" || r == s.issuer+path)
}

// ResourceMetadataURL is where the protected resource metadata of the endpoint path is
// served: path-qualified for an endpoint, the root document for the whole server.
func (s *Server) ResourceMetadataURL(path string) string {
	if path == "/" || !isResourcePath(path) {
		return s.issuer + "/.well-known/oauth-protected-resource"
	}
	return s.issuer + "/.well-known/oauth-protected-resource" + path
}

// Challenge sets the WWW-Authenticate header a 401 or 403 at the endpoint path carries, so
// that a client finds where to sign in (RFC 9728 section 5.1). code is the RFC 6750 error
// ("invalid_token", "insufficient_scope") or "" when the request had no token at all.
func (s *Server) Challenge(w http.ResponseWriter, path, code string) {
	v := fmt.Sprintf(`Bearer resource_metadata="%s"`, s.ResourceMetadataURL(path))
	if code != "" {
		v += fmt.Sprintf(`, error="%s"`, code)
	}
	w.Header().Set("WWW-Authenticate", v)
}

// resourceMetadata serves RFC 9728 protected resource metadata: at the root for the whole
// server, and path-qualified (/.well-known/oauth-protected-resource/spaces/launch/mcp) for
// an endpoint, which is how MCP clients look for it first.
func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	if !metadataMethod(w, r) {
		return
	}
	p := strings.TrimPrefix(r.URL.EscapedPath(), "/.well-known/oauth-protected-resource")
	if p == "" {
		p = "/"
	}
	if !isResourcePath(p) {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 s.issuer + p,
		"authorization_servers":    []string{s.issuer},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "compass-mcp",
	})
}

// serverMetadata serves RFC 8414 authorization server metadata. A client learns from it how
// to be known here, in the order the MCP authorization specification (2026-07-28) prefers:
// client ID metadata documents first; dynamic registration after them, deprecated by that
// revision and kept for the clients that use it. The fields are written in this order (a
// JSON object's order means nothing to a parser, but it is what a person reading it meets).
func (s *Server) serverMetadata(w http.ResponseWriter, r *http.Request) {
	if !metadataMethod(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, asMetadata{
		Issuer:                   s.issuer,
		AuthorizationEndpoint:    s.issuer + "/authorize",
		TokenEndpoint:            s.issuer + "/token",
		ClientIDMetadataDocument: true,
		RegistrationEndpoint:     s.issuer + "/register",
		ResponseTypes:            []string{"code"},
		ResponseModes:            []string{"query"},
		GrantTypes:               []string{"authorization_code", "refresh_token"},
		TokenAuthMethods:         []string{"none"},
		CodeChallengeMethods:     []string{"S256"},
		IssParameter:             true,
	})
}

// asMetadata is the authorization server's metadata, in the order it is written.
type asMetadata struct {
	Issuer                   string   `json:"issuer"`
	AuthorizationEndpoint    string   `json:"authorization_endpoint"`
	TokenEndpoint            string   `json:"token_endpoint"`
	ClientIDMetadataDocument bool     `json:"client_id_metadata_document_supported"`
	RegistrationEndpoint     string   `json:"registration_endpoint"`
	ResponseTypes            []string `json:"response_types_supported"`
	ResponseModes            []string `json:"response_modes_supported"`
	GrantTypes               []string `json:"grant_types_supported"`
	TokenAuthMethods         []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethods     []string `json:"code_challenge_methods_supported"`
	// IssParameter: every authorization response, code or error, carries iss (RFC 9207).
	IssParameter bool `json:"authorization_response_iss_parameter_supported"`
}

// preflight lets any origin call an endpoint of method (browser-based clients register,
// discover and get tokens from other origins; nothing here rests on cookies) and answers a
// CORS preflight (OPTIONS) itself, reporting whether it did.
func preflight(w http.ResponseWriter, r *http.Request, method, headers string) bool {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if r.Method != http.MethodOptions {
		return false
	}
	w.Header().Set("Access-Control-Allow-Methods", method+", OPTIONS")
	w.Header().Set("Access-Control-Allow-Headers", headers)
	w.WriteHeader(http.StatusNoContent)
	return true
}

// metadataMethod answers what is not a GET of a metadata document; the documents are public,
// so any origin may read them (browser-based clients discover the server this way).
func metadataMethod(w http.ResponseWriter, r *http.Request) bool {
	if preflight(w, r, "GET", "Content-Type, MCP-Protocol-Version") {
		return false
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return true
	default:
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
