package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// The search index after crashes: writers over HTTP make, write, append to, edit, rename
// and delete documents of a few words, the server is SIGKILLed at a random moment, and
// then the file's index must be what a rebuild from its texts makes, and every query must
// find exactly the documents a scan of the texts finds. Then the server starts on the file
// again and the next round writes on.
//
//	go test -run TestCrashKeepsTheSearchIndexRight -v ./e2e/reliability

var crashWords = []string{"trailer", "Tuesday", "café", "cafe", "pricing", "東京", "course page", "e-mail", "**plan**", "review"}

func TestCrashKeepsTheSearchIndexRight(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	data := newData(t)
	queries := []string{"trailer", "cafe", "東京", `"course page"`, "email", "e-mail", "plan review", "pricing tuesday"}
	writes := 0
	for round := range 3 {
		srv := startHTTP(t, data, "--agent", "crash")
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var mu sync.Mutex
		for w := range 4 {
			c := httpClient(t, srv.url, fmt.Sprintf("searcher-%d", w))
			r := rand.New(rand.NewPCG(seed, uint64(round*10+w+1)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				for step := 0; ; step++ {
					title := fmt.Sprintf("Doc %d-%d", w, r.IntN(6))
					words := func() string {
						var b strings.Builder
						for range 1 + r.IntN(8) {
							b.WriteString(crashWords[r.IntN(len(crashWords))])
							b.WriteString([]string{" ", "\n", ", "}[r.IntN(3)])
						}
						return b.String()
					}
					var tool string
					var args map[string]any
					switch r.IntN(6) {
					case 0:
						tool, args = "write_document", map[string]any{"title": title, "text": words()}
					case 1:
						tool, args = "write_document", map[string]any{"document": title, "text": words()}
					case 2:
						tool, args = "append_document", map[string]any{"document": title, "text": words()}
					case 3:
						tool, args = "edit_document", map[string]any{"document": title, "old": crashWords[r.IntN(len(crashWords))], "new": crashWords[r.IntN(len(crashWords))]}
					case 4:
						tool, args = "write_document", map[string]any{"document": title, "title": title + " " + crashWords[r.IntN(len(crashWords))], "text": words()}
					default:
						tool, args = "list_documents", map[string]any{"query": queries[r.IntN(len(queries))]}
					}
					if _, err := call(ctx, c, tool, args); err != nil {
						return // the server died
					}
					mu.Lock()
					writes++
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond)
		srv.kill()
		wg.Wait()
		cancel()
		// The person deletes one document between rounds, so deletions cross crashes too.
		db := openChecked(t, data)
		s := docstore.New(db, "personal")
		if err := s.CheckIndex(t.Context()); err != nil {
			t.Fatalf("round %d, after SIGKILL: %v", round+1, err)
		}
		for _, q := range queries {
			if got, want := searchIDs(t, s, q), scanIDs(t, s, q); !slices.Equal(got, want) {
				t.Errorf("round %d, after SIGKILL, %q found %v; a scan finds %v", round+1, q, got, want)
			}
		}
		docs, _ := view(t, s, func(r *docstore.Reader) ([]docstore.Document, error) {
			docs, _, err := r.List(1)
			return docs, err
		})
		if len(docs) > 0 {
			if _, err := s.Delete(t.Context(), docs[0].ID, docstore.Author{By: "person:ana"}); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
	}
	t.Logf("3 rounds, %d calls: after every SIGKILL the index was what a rebuild makes, and every query found what a scan finds", writes)
}

func searchIDs(t *testing.T, s *docstore.Store, query string) []string {
	t.Helper()
	res, err := view(t, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(query, 0) })
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range res.Found {
		ids = append(ids, f.Document.ID)
	}
	slices.Sort(ids)
	return ids
}

// scanIDs looks at every live document's latest title and text for every term of query.
func scanIDs(t *testing.T, s *docstore.Store, query string) []string {
	t.Helper()
	ids, err := view(t, s, func(r *docstore.Reader) ([]string, error) { return r.Scan(query) })
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
