package docstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/linediff"
)

// openExample opens a fresh bbolt file in a temporary folder, removed by done.
func openExample() (db *bolt.File, done func()) {
	dir, err := os.MkdirTemp("", "compass-example-")
	if err != nil {
		panic(err)
	}
	db, err = bolt.OpenFile(filepath.Join(dir, "compass.db"), time.Second, time.Hour)
	if err != nil {
		panic(err)
	}
	return db, func() { db.Close(); os.RemoveAll(dir) }
}

// A call reads what it shows in one View: the function may run more than once (kv.DB), so
// it sets its results afresh each time rather than appending to them.
func ExampleStore_View() {
	ctx := context.Background()
	db, done := openExample()
	defer done()
	s := docstore.New(db, "personal")
	north := docstore.Author{By: "agent:north", For: "person:ana"}
	s.Create(ctx, "Launch plan", "# Launch\n\n- date\n", docstore.KindWrite, north)
	s.Create(ctx, "Pricing", "12 a month\n", docstore.KindWrite, north)

	var titles []string
	var total int
	err := s.View(ctx, func(r *docstore.Reader) error {
		docs, n, err := r.List(10)
		if err != nil {
			return err
		}
		titles, total = nil, n // afresh: this may be the second run
		for _, d := range docs {
			titles = append(titles, d.Title)
		}
		return nil
	})
	fmt.Println(total, titles, err)
	// Output: 2 [Pricing Launch plan] <nil>
}

// A person's save made from an older version is merged with the versions since; where both
// changed the same lines it is refused with a *ClashError saying where, and saved again
// with the person's lines preferred.
func ExampleStore_Save() {
	ctx := context.Background()
	db, done := openExample()
	defer done()
	s := docstore.New(db, "personal")
	north := docstore.Author{By: "agent:north", For: "person:ana"}
	ana := docstore.Author{By: "person:ana"}
	s.Create(ctx, "Launch plan", "# Launch\n\n- date: TBD\n", docstore.KindWrite, north)
	s.Edit(ctx, "Launch plan", "TBD", "June", north) // version 2, while Ana edits version 1

	_, err := s.Save(ctx, "Launch plan", 1, "# Launch\n\n- date: May\n", ana, linediff.Clash)
	var clash *docstore.ClashError
	if errors.As(err, &clash) {
		c := clash.Conflicts[0]
		fmt.Printf("clash at line %d: %q against %q\n", c.MineStart, c.Mine, c.Theirs)
	}
	saved, err := s.Save(ctx, "Launch plan", 1, "# Launch\n\n- date: May\n", ana, linediff.PreferMine)
	fmt.Println(saved.Document.Version, saved.Kind, err)
	// Output:
	// clash at line 3: ["- date: May"] against ["- date: June"]
	// 3 merge <nil>
}
