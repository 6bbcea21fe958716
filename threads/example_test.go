package threads_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/threads"
)

func ExampleReader_Page() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "threads-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := bolt.OpenFile(filepath.Join(dir, "compass.db"), bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	s := threads.New(db, "launch")
	in := `{"conversation":"pricing","title":"Pricing","at":"2026-11-08T10:42:00Z","from":"person:ana","to":"agent:north","text":"Pricing: we settled on 12 a month."}
{"conversation":"pricing","at":"2026-11-08T10:42:01Z","from":"agent:north","text":"list_documents → ...","private":true}
{"conversation":"pricing","at":"2026-11-08T10:42:02Z","from":"agent:north","text":"You said: Ana: Pricing: we settled on 12 a month."}
`
	sum, err := s.Import(ctx, strings.NewReader(in), "ana", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("imported %d messages into %d conversation\n", sum.Messages, sum.Conversations)

	var msgs []threads.Message
	var more bool
	err = s.View(ctx, func(r *threads.Reader) (err error) {
		msgs, more, err = r.Page("pricing", 30, "")
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Printf("[%s] %s: %s\n", m.At.UTC().Format("2006-01-02 15:04"), m.From, m.Text)
	}
	fmt.Println("more:", more)
	// Output:
	// imported 3 messages into 1 conversation
	// [2026-11-08 10:42] person:ana: Pricing: we settled on 12 a month.
	// [2026-11-08 10:42] agent:north: You said: Ana: Pricing: we settled on 12 a month.
	// more: false
}
