package filesync_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
)

// One pass makes a folder and a space the same: a note written in the folder becomes a
// document, and a document of the space becomes a file.
func ExampleSync_Once() {
	tmp, _ := os.MkdirTemp("", "compass-example-")
	defer os.RemoveAll(tmp)
	db, err := bolt.OpenFile(filepath.Join(tmp, "compass.db"), time.Second, time.Hour)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()
	store := docstore.New(db, "personal")
	store.Create(ctx, "Launch plan", "# Launch\n", docstore.KindWrite, docstore.Author{By: "agent:north", For: "person:ana"})
	dir := filepath.Join(tmp, "notes")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "Pricing.md"), []byte("12 a month\n"), 0o644)

	y := &filesync.Sync{Store: store, Dir: dir, By: docstore.Author{By: "agent:sync", For: "person:ana"}}
	rep, err := y.Once(ctx)
	fmt.Printf("created %d, written %d, %v\n", rep.Created, rep.Written, err)
	text, _ := os.ReadFile(filepath.Join(dir, "Launch plan.md"))
	fmt.Printf("Launch plan.md: %q\n", text)
	// Output:
	// created 1, written 1, <nil>
	// Launch plan.md: "# Launch\n"
}
