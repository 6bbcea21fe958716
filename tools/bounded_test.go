package tools_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testbin"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// cpu is this process's CPU time so far, user and system.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Every call that used to take seconds to minutes on a large document, at the 8 MiB limit
// (1 MiB with -short or -race): each takes at most 1 s of CPU, and a refusal is at most
// 16 KB of text. "aa" in 2 MiB of "a" took 41 s and answered 6.3 MB; at 8 MiB it was about
// ten minutes a call.
//
//	go test -run TestNoCallIsUnbounded -v ./tools
func TestNoCallIsUnbounded(t *testing.T) {
	size := docstore.MaxText
	if testing.Short() || testbin.Race {
		size = 1 << 20
	}
	db := kvtest.Open(t)
	as := docstore.Author{By: "person:ana"}
	docs := docstore.New(db, "personal")
	line := "some notes about the launch, and the studio on tuesday\n"
	for title, text := range map[string]string{
		"As":     strings.Repeat("a", size),
		"Notes":  strings.Repeat(line, size/len(line)),
		"Tasks":  strings.Repeat("- [ ] task\n", size/11),
		"One":    strings.Repeat("word  ", size/6),
		"Ticks":  strings.Repeat("`", size/2) + strings.Repeat("a`", size/4),
		"Spaces": strings.Repeat(" ", size),
		"Half":   strings.Repeat(line, size/2/len(line)) + "the one marker\n",
	} {
		if _, err := docs.Create(title, text, docstore.KindWrite, as); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1000 {
		if _, err := docs.Create(fmt.Sprintf("Meeting notes %d e", i), "x\n", docstore.KindWrite, as); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := tools.New(db, tools.Config{Space: "personal", Agent: "north", For: "ana", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bounded", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	names := strings.Repeat("e ", size/2)
	for _, tc := range []struct {
		what string
		tool string
		args map[string]any
	}{
		{"edit aa in a's", "edit_document", map[string]any{"document": "As", "old": "aa", "new": "b"}},
		{"edit a space in notes", "edit_document", map[string]any{"document": "Notes", "old": " ", "new": "_"}},
		{"edit a repeated line", "edit_document", map[string]any{"document": "Tasks", "old": "- [ ] task", "new": "x"}},
		{"edit near matches of a huge line", "edit_document", map[string]any{"document": "One", "old": strings.Repeat("word ", 1000), "new": "x"}},
		{"edit an old as long as the text", "edit_document", map[string]any{"document": "As", "old": strings.Repeat("a", size-1) + "b", "new": "x"}},
		{"edit near a text of backticks", "edit_document", map[string]any{"document": "Ticks", "old": "a ` a", "new": "x"}},
		{"edit only spaces", "edit_document", map[string]any{"document": "Spaces", "old": "  ", "new": "x"}},
		{"read by a name of e's", "read_document", map[string]any{"document": names}},
		{"append by a name of e's", "append_document", map[string]any{"document": names, "text": "x"}},
		{"read since 1", "read_document", map[string]any{"document": "Notes", "since": 1}},
		{"write the whole text again, changed", "write_document", map[string]any{"document": "Notes", "text": strings.Repeat(strings.ToUpper(line), size/len(line))}},
		{"append", "append_document", map[string]any{"document": "Half", "text": "one more line"}},
		{"edit once", "edit_document", map[string]any{"document": "Half", "old": "the one marker", "new": "the marker"}},
		{"read since 1 after those", "read_document", map[string]any{"document": "Half", "since": 1}},
	} {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tc.tool, tc.args
		before, start := cpu(), time.Now()
		res, err := c.CallTool(ctx, req)
		used, took := cpu()-before, time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		n := 0
		for _, c := range res.Content {
			if tc, ok := c.(mcp.TextContent); ok {
				n += len(tc.Text)
			}
		}
		t.Logf("%-36s %5.0f ms CPU, %5.0f ms, answer %6d bytes, error %v", tc.what, used.Seconds()*1000, took.Seconds()*1000, n, res.IsError)
		if used > time.Second {
			t.Errorf("%s on %d MiB: %s of CPU, want at most 1 s", tc.what, size>>20, used)
		}
		if res.IsError && n > 16<<10 && tc.tool != "read_document" {
			t.Errorf("%s: a refusal of %d bytes, want at most 16 KB", tc.what, n)
		}
	}
}
