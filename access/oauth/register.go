package oauth

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/kv"
)

// Registration limits: enough for any real client, small enough that an unauthenticated
// endpoint cannot be used to fill the file.
const (
	maxRegistration = 64 << 10
	maxRedirectURIs = 10
	// unusedClientTTL is how long a registered client that no person ever allowed is kept.
	unusedClientTTL = 24 * time.Hour
	// maxUnusedClients bounds the clients that no person allowed yet: registering one more
	// forgets the oldest. Registration is open to anyone who can reach the server, so
	// without it a loop of registrations would fill the data file within the day the sweep
	// waits (each is at most a few KiB: see maxURILength). An app whose registration is
	// forgotten before its person answers is told to register again.
	maxUnusedClients = 500
	// maxURILength bounds each redirect URI and the client_uri.
	maxURILength = 1024
)

// register is RFC 7591 dynamic client registration, for public clients only: every client
// is registered with token_endpoint_auth_method "none" and gets no secret (a client asking
// for a secret is told so by the answer, as section 3.2.1 allows, rather than refused). Its
// redirect URIs must fit its application_type, when it gives one (checkApplicationType).
//
// The MCP authorization specification of 2026-07-28 deprecates it in favour of client ID
// metadata documents, which the metadata offers first; it is kept for the clients that
// register (docs/HTTP.md).
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if preflight(w, r, "POST", "Content-Type") {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		http.Error(w, "Method not allowed: POST the client's metadata as JSON", http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		RedirectURIs    []string `json:"redirect_uris"`
		ClientName      string   `json:"client_name"`
		ClientURI       string   `json:"client_uri"`
		ApplicationType string   `json:"application_type"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRegistration+1))
	if err != nil || len(body) > maxRegistration {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("the registration must be JSON of at most %d KiB", maxRegistration>>10))
		return
	}
	if err := json.Unmarshal(body, &m); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the registration is not a JSON object of client metadata: "+err.Error())
		return
	}
	if len(m.RedirectURIs) == 0 || len(m.RedirectURIs) > maxRedirectURIs {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", fmt.Sprintf("redirect_uris must list 1 to %d redirect URIs", maxRedirectURIs))
		return
	}
	for _, u := range m.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", err.Error())
			return
		}
	}
	if err := checkApplicationType(m.ApplicationType, m.RedirectURIs); err == errApplicationType {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", err.Error())
		return
	} else if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", err.Error())
		return
	}
	if len(m.ClientURI) > maxURILength {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("client_uri is longer than %d bytes", maxURILength))
		return
	}
	now := s.now()
	c := client{
		ID:           secret("cmc_"),
		Name:         cleanName(m.ClientName),
		URI:          m.ClientURI,
		RedirectURIs: m.RedirectURIs,
		Created:      now,
	}
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		if err := sweepClients(tx, now); err != nil {
			return err
		}
		return put(bucket(tx, clientsBucket), []byte(c.ID), c)
	})
	if err != nil {
		serverError(w, "registering a client", err)
		return
	}
	answer := map[string]any{
		"client_id":                  c.ID,
		"client_id_issued_at":        now.Unix(),
		"client_name":                c.Name,
		"redirect_uris":              c.RedirectURIs,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	}
	if m.ApplicationType != "" {
		answer["application_type"] = m.ApplicationType
	}
	writeJSON(w, http.StatusCreated, answer)
}

// sweepClients forgets the registered clients that no person allowed within a day, and
// the oldest of those still waiting beyond maxUnusedClients-1, making room for one more.
func sweepClients(tx kv.Tx, now time.Time) error {
	b := bucket(tx, clientsBucket)
	type waiting struct {
		key     []byte
		created time.Time
	}
	var dead [][]byte
	var unused []waiting
	err := b.ForEach(func(k, v []byte) error {
		var c client
		switch {
		case json.Unmarshal(v, &c) != nil || c.Used:
		case c.Created.Add(unusedClientTTL).Before(now):
			dead = append(dead, k)
		default:
			unused = append(unused, waiting{k, c.Created})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if extra := len(unused) - (maxUnusedClients - 1); extra > 0 {
		slices.SortFunc(unused, func(a, b waiting) int { return a.created.Compare(b.created) })
		for _, u := range unused[:extra] {
			dead = append(dead, u.key)
		}
	}
	for _, k := range dead {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// cleanName is a client's self-chosen name made fit to show: one line, at most 100
// characters. It is shown with the host the person would be sent back to, which is what
// really says who asks.
func cleanName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(name, ""))
	name = strings.Join(strings.Fields(name), " ")
	if utf8.RuneCountInString(name) > 100 {
		name = string([]rune(name)[:100]) + "…"
	}
	return name
}
