package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
)

// Layout, in the data file:
//
//	oauth/clients/<client_id>        a registered client (RFC 7591)
//	oauth/consents/<id>              a consent page being shown: the authorization request
//	oauth/codes/<sha256(code)>       an authorization code, kept (burned) until it expires
//	oauth/chains/<id>                what a person allowed a client: the current token row
//	oauth/refresh/<sha256(token)>    a refresh token and its chain; used ones stay to catch reuse
//
// Codes and refresh tokens are kept by hash: the file alone does not let anyone use them.
var (
	rootBucket     = []byte("oauth")
	clientsBucket  = []byte("clients")
	consentsBucket = []byte("consents")
	codesBucket    = []byte("codes")
	chainsBucket   = []byte("chains")
	refreshBucket  = []byte("refresh")
)

func createBuckets(tx kv.Tx) error {
	root, err := tx.CreateBucketIfNotExists(rootBucket)
	if err != nil {
		return fmt.Errorf("creating the oauth bucket: %w", err)
	}
	for _, name := range [][]byte{clientsBucket, consentsBucket, codesBucket, chainsBucket, refreshBucket} {
		if _, err := root.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("creating the oauth/%s bucket: %w", name, err)
		}
	}
	return nil
}

func bucket(tx kv.Tx, name []byte) kv.Bucket {
	return tx.Bucket(rootBucket).Bucket(name)
}

// client is a client registered with /register. A client ID metadata document's client is
// not kept: it is fetched again on every authorization.
type client struct {
	ID           string    `json:"client_id"`
	Name         string    `json:"client_name,omitempty"`
	URI          string    `json:"client_uri,omitempty"`
	RedirectURIs []string  `json:"redirect_uris"`
	Created      time.Time `json:"created"`
	Used         bool      `json:"used,omitempty"` // a person allowed it at least once
}

// request is an authorization request, from /authorize to the person's answer and then as
// the code's: who asked, where to send the answer, and what the answer binds.
type request struct {
	ClientID    string `json:"client_id"`
	ClientName  string `json:"client_name"`
	RedirectURI string `json:"redirect_uri"`
	// RedirectGiven: the request named its redirect URI (rather than the client's only
	// one being taken), so the token request must name it too.
	RedirectGiven bool      `json:"redirect_given,omitempty"`
	State         string    `json:"state,omitempty"`
	Challenge     string    `json:"code_challenge"`
	Resource      string    `json:"resource"`
	Scope         string    `json:"scope,omitempty"`
	Person        string    `json:"person"`
	Expires       time.Time `json:"expires"`
}

// code is an authorization code: the request and what the person allowed.
type code struct {
	request
	Agent    string   `json:"agent"`
	Spaces   []string `json:"spaces"`
	ReadOnly bool     `json:"read_only,omitempty"`
	Review   bool     `json:"review,omitempty"`
	// Burned is set by the first attempt to redeem it, and Chain by a successful one: a
	// second attempt revokes what the first obtained (OAuth 2.1 section 4.1.3).
	Burned bool   `json:"burned,omitempty"`
	Chain  string `json:"chain,omitempty"`
	Reused bool   `json:"reused,omitempty"`
}

// grant is what a person allowed a client, and so what an access token minted for it may
// do. Its fields have no tags: their names are the keys of the chains already stored.
type grant struct {
	Person   string
	Agent    string    // the agent's name, as versions and messages record it
	Spaces   []string  // the spaces the token reaches
	ReadOnly bool      // no writing tools
	Review   bool      // the agent's changes are proposals
	Expires  time.Time // when the access token stops working
	Client   string    // the client's name and where it sends the person back, for the person's lists
	Resource string    // the RFC 8707 resource the token is bound to (see Server.Allows)
}

// token is the token row that g's access token is.
func (g grant) token() access.NewToken {
	return access.NewToken{Person: g.Person, Agent: g.Agent, Spaces: g.Spaces, ReadOnly: g.ReadOnly, Review: g.Review,
		Expires: g.Expires, Client: g.Client, Resource: g.Resource}
}

// chain is what one consent gave a client, across its refreshes.
type chain struct {
	ClientID string    `json:"client_id"`
	Grant    grant     `json:"grant"` // Expires is the current access token's
	Row      string    `json:"row"`   // the current token row
	Expires  time.Time `json:"expires"`
}

// refresh is a refresh token. A used one stays until its chain would have expired, so that
// presenting it again is seen as the theft it is and ends the chain.
type refresh struct {
	Chain   string    `json:"chain"`
	Used    bool      `json:"used,omitempty"`
	Expires time.Time `json:"expires"`
}

func get(b kv.Bucket, key []byte, v any) (bool, error) {
	data := b.Get(key)
	if data == nil {
		return false, nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("reading oauth record %x: %w", key, err)
	}
	return true, nil
}

func put(b kv.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, data)
}

// secret returns a random string with 256 bits, prefixed.
func secret(prefix string) string {
	return prefix + rand.Text() + rand.Text()
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// sweep deletes, from bucket name, the records whose expiry is before now. It runs in the
// transactions that add records, so the buckets hold what is alive (and a few minutes more).
func sweep(tx kv.Tx, name []byte, now time.Time) error {
	b := bucket(tx, name)
	var dead [][]byte
	err := b.ForEach(func(k, v []byte) error {
		var r struct {
			Expires time.Time `json:"expires"`
		}
		if json.Unmarshal(v, &r) == nil && r.Expires.Before(now) {
			dead = append(dead, k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range dead {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
