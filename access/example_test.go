package access_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
)

// A route of a front door other than MCP (here, one that adds a message) sits behind the
// gate, then asks the principal what it may do.
func ExampleGate_RequireSpace() {
	dir, err := os.MkdirTemp("", "compass-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := bolt.OpenFile(filepath.Join(dir, "compass.db"), bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()
	store := access.New(db).WithOwner("personal", "ana")
	store.AddMember(ctx, "launch", "ben")
	writer, _, _ := store.AddToken(ctx, access.NewToken{Person: "ben", Agent: "scribe"})
	reader, _, _ := store.AddToken(ctx, access.NewToken{Person: "ben", ReadOnly: true})

	gate := &access.Gate{Store: store}
	mux := http.NewServeMux()
	mux.Handle("POST /spaces/{space}/messages", gate.Require(gate.RequireSpace(access.PathSpace,
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, _ := access.FromContext(r.Context())
			space, _ := access.SpaceOf(r.Context())
			if !p.MayWrite(space) {
				http.Error(w, "Forbidden: a read-only token", http.StatusForbidden)
				return
			}
			fmt.Fprintf(w, "added to %s by %s for %s", space, p.Agent, p.Person)
		}))))

	for _, try := range []struct{ token, path string }{
		{writer, "/spaces/launch/messages"},
		{reader, "/spaces/launch/messages"},
		{writer, "/spaces/personal/messages"},
		{"", "/spaces/launch/messages"},
	} {
		req := httptest.NewRequest("POST", try.path, nil)
		if try.token != "" {
			req.Header.Set("Authorization", "Bearer "+try.token)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
	}
	// Output:
	// 200 added to launch by scribe for ben
	// 403 Forbidden: a read-only token
	// 403 Forbidden: this token does not allow the space personal (its person is not a member, or the token is for other spaces)
	// 401 Unauthorized: send Authorization: Bearer <token> (compass-mcp tokens add makes one)
}
