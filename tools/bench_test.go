package tools

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"go.etcd.io/bbolt"
)

// The benchmarks call the tools as a model does, through mcp-go's in-process client, on a
// real data file. Each compares a tiny store with a big one (built only without -short):
// a call's cost should not grow with the store.
//
//	go test -run '^$' -bench . -benchmem ./tools           # big stores: about a minute to build
//	go test -run '^$' -bench . -benchtime=1x -short ./tools # once each, tiny stores (CI)

// benchStores are built once per process, in a folder TestMain removes.
var benchStores struct {
	sync.Mutex
	dir   string
	built map[string]*benchStore
}

type benchStore struct {
	raw *bbolt.DB
	db  kv.DB  // raw, as the stores take it
	id  string // the document or conversation the benchmark reads
}

func TestMain(m *testing.M) {
	code := m.Run()
	benchStores.Lock()
	for _, s := range benchStores.built {
		s.raw.Close()
	}
	if benchStores.dir != "" {
		os.RemoveAll(benchStores.dir)
	}
	benchStores.Unlock()
	os.Exit(code)
}

// storeFor returns the store named key, building it with build on first use.
func storeFor(b *testing.B, key string, build func(ctx context.Context, db kv.DB) (string, error)) *benchStore {
	b.Helper()
	benchStores.Lock()
	defer benchStores.Unlock()
	if s := benchStores.built[key]; s != nil {
		return s
	}
	if benchStores.dir == "" {
		dir, err := os.MkdirTemp("", "tools-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchStores.dir, benchStores.built = dir, map[string]*benchStore{}
	}
	db := openBenchDB(b, filepath.Join(benchStores.dir, key+".db"))
	db.NoSync = true // built once and thrown away; Sync below makes it whole before use
	start := time.Now()
	id, err := build(b.Context(), bolt.Wrap(db))
	if err != nil {
		b.Fatalf("building %s: %v", key, err)
	}
	if err := db.Sync(); err != nil {
		b.Fatal(err)
	}
	db.NoSync = false
	if d := time.Since(start); d > time.Second {
		b.Logf("built %s in %s", key, d.Round(time.Millisecond))
	}
	s := &benchStore{raw: db, db: bolt.Wrap(db), id: id}
	benchStores.built[key] = s
	return s
}

// openBenchDB opens a data file as the stores' tests do. bbolt's own Batch waits up to 10 ms
// for other writers before committing (bolt.File, the server's, doesn't): a batch of
// one commits at once here too.
func openBenchDB(b *testing.B, path string) *bbolt.DB {
	b.Helper()
	db, err := bolt.Open(path, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	db.MaxBatchSize = 1
	return db
}

// benchClient is an initialized in-process MCP client of the tools on db.
func benchClient(b *testing.B, db kv.DB, thread string) *client.Client {
	b.Helper()
	srv, err := New(db, Config{Space: "personal", Agent: "north", For: "ana", Thread: thread, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	return c
}

// benchCall calls a tool and returns its answer, failing on an error result.
func benchCall(b *testing.B, c *client.Client, tool string, args map[string]any) string {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		b.Fatalf("%s: %v", tool, err)
	}
	var text string
	for _, content := range res.Content {
		if t, ok := content.(mcp.TextContent); ok {
			text += t.Text
		}
	}
	if res.IsError {
		b.Fatalf("%s refused: %s", tool, text)
	}
	return text
}

// sizes is the tiny store, and the big one unless -short.
func sizes(tiny, big int) []int {
	if testing.Short() {
		return []int{tiny}
	}
	return []int{tiny, big}
}

// noteText is a document of n numbered lines of about 50 bytes (2,000 make 100 KB).
func noteText(n int, seed int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("%d. note %d of the benchmark, line %d, with words to fill it.", i+1, seed, i+1)
	}
	return lines
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") + "\n" }

var benchAuthor = docstore.Author{By: "agent:north", For: "person:ana"}

// BenchmarkListDocuments is list_documents (limit 50) in a space of 10 documents, of 100
// (the first that fills the page of 50, to compare 10,000 with) and of 10,000.
func BenchmarkListDocuments(b *testing.B) {
	ns := []int{10, 100}
	if !testing.Short() {
		ns = append(ns, 10_000)
	}
	for _, n := range ns {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			s := storeFor(b, fmt.Sprintf("docs-%d", n), func(ctx context.Context, db kv.DB) (string, error) {
				docs := docstore.New(db, "personal")
				for i := range n {
					if _, err := docs.Create(ctx, fmt.Sprintf("Note %05d", i), joinLines(noteText(20, i)), docstore.KindWrite, benchAuthor); err != nil {
						return "", err
					}
				}
				return "", nil
			})
			c := benchClient(b, s.db, "")
			for b.Loop() {
				if got := benchCall(b, c, "list_documents", nil); !strings.Contains(got, "Note ") {
					b.Fatalf("list_documents: %.200s", got)
				}
			}
		})
	}
}

// BenchmarkReadDocument is read_document of a 100 KB document of 1 version and of 1,000
// (999 one-line edits): the latest, and version 1.
func BenchmarkReadDocument(b *testing.B) {
	for _, n := range sizes(1, 1000) {
		s := storeFor(b, fmt.Sprintf("versions-%d", n), func(ctx context.Context, db kv.DB) (string, error) {
			docs := docstore.New(db, "personal")
			lines := noteText(2000, 0)
			saved, err := docs.Create(ctx, "Big plan", joinLines(lines), docstore.KindWrite, benchAuthor)
			if err != nil {
				return "", err
			}
			for i := 1; i < n; i++ {
				k := (i * 7919) % len(lines)
				next := fmt.Sprintf("%d. edited in version %d.", k+1, i+1)
				if _, err := docs.Edit(ctx, saved.Document.ID, lines[k], next, benchAuthor); err != nil {
					return "", err
				}
				lines[k] = next
			}
			return saved.Document.ID, nil
		})
		for _, v := range []struct {
			name    string
			version int
		}{{"latest", 0}, {"first", 1}} {
			if n == 1 && v.version == 1 {
				continue // the same as latest
			}
			b.Run(fmt.Sprintf("versions=%d/%s", n, v.name), func(b *testing.B) {
				c := benchClient(b, s.db, "")
				args := map[string]any{"document": s.id}
				if v.version > 0 {
					args["version"] = v.version
				}
				b.SetBytes(100_000)
				for b.Loop() {
					if got := benchCall(b, c, "read_document", args); len(got) < 90_000 {
						b.Fatalf("read_document gave %d bytes", len(got))
					}
				}
			})
		}
	}
}

// BenchmarkEditDocument100KB is one edit_document of one line of a 100 KB document,
// committed with fsync, as the server commits it: on a bolt.File opened as serve opens
// it, whose group commit (File.Batch) the store's writes go through.
func BenchmarkEditDocument100KB(b *testing.B) {
	db, err := bolt.OpenFile(filepath.Join(b.TempDir(), "edit.db"), bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	lines := noteText(2000, 0)
	saved, err := docstore.New(db, "personal").Create(b.Context(), "Big plan", joinLines(lines), docstore.KindWrite, benchAuthor)
	if err != nil {
		b.Fatal(err)
	}
	c := benchClient(b, db, "")
	i := 0
	for b.Loop() {
		k := (i * 7919) % len(lines)
		next := fmt.Sprintf("%d. edited in edit %d.", k+1, i)
		benchCall(b, c, "edit_document", map[string]any{"document": saved.Document.ID, "old": lines[k], "new": next})
		lines[k] = next
		i++
	}
}

// messagesStore is a space of n messages: half in the conversation "big" (every fourth a
// private step), the rest in conversations of 100 (of 2 in a tiny space, so that there are
// more than list_conversations shows). It is imported as JSON Lines, as a person
// imports them, 100,000 lines a transaction.
func messagesStore(b *testing.B, n int) *benchStore {
	return storeFor(b, fmt.Sprintf("messages-%d", n), func(ctx context.Context, db kv.DB) (string, error) {
		st := threads.New(db, "personal")
		at := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		const chunk = 100_000
		per := 100 // messages in each other conversation
		if n < 10_000 {
			per = 2 // enough conversations to fill list_conversations' page of 20
		}
		for done := 0; done < n; done += chunk {
			pr, pw := io.Pipe()
			go func() {
				w := bufio.NewWriter(pw)
				for i := done; i < min(done+chunk, n); i++ {
					conv, private := "big", i%8 == 6
					if i%2 == 1 {
						conv = fmt.Sprintf("c%06d", i/2/per)
					}
					fmt.Fprintf(w, `{"conversation":%q,"title":"Conversation %s","at":%q,"from":"person:ana","to":"agent:north","text":"Message %d of the benchmark, long enough to look like something said.","private":%v}`+"\n",
						conv, conv, at.Add(time.Duration(i)*time.Second).Format(time.RFC3339), i, private)
				}
				pw.CloseWithError(w.Flush())
			}()
			if _, err := st.Import(ctx, pr, "ana", nil); err != nil {
				pr.CloseWithError(err)
				return "", err
			}
		}
		return "big", nil
	})
}

// BenchmarkListConversations is list_conversations (limit 20) in a space of 100 messages
// (26 conversations) and of 1,000,000 (5,001 conversations, one of 500,000 messages).
func BenchmarkListConversations(b *testing.B) {
	for _, n := range sizes(100, 1_000_000) {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			c := benchClient(b, messagesStore(b, n).db, "")
			for b.Loop() {
				if got := benchCall(b, c, "list_conversations", nil); !strings.Contains(got, "opened: ") {
					b.Fatalf("list_conversations: %.200s", got)
				}
			}
		})
	}
}

// BenchmarkReadConversation is a read_conversation page (30 messages) of the conversation
// that holds half of a space's messages: the latest page, and the one before it.
func BenchmarkReadConversation(b *testing.B) {
	for _, n := range sizes(100, 1_000_000) {
		s := messagesStore(b, n)
		var before string
		for _, page := range []string{"latest", "before"} {
			b.Run(fmt.Sprintf("messages=%d/%s", n, page), func(b *testing.B) {
				c := benchClient(b, s.db, "")
				args := map[string]any{"conversation": s.id}
				if page == "before" {
					if before == "" {
						b.Skip("the latest page says no older messages remain")
					}
					args["before"] = before
				}
				for b.Loop() {
					got := benchCall(b, c, "read_conversation", args)
					if page == "latest" && before == "" {
						if _, id, ok := strings.Cut(got, "before: \""); ok {
							before, _, _ = strings.Cut(id, "\"")
						}
					}
				}
			})
		}
	}
}
