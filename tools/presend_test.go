package tools

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/mark3labs/mcp-go/server"
)

// stdioLines serves srv over mcp-go's stdio transport, writing through p (nil: mcp-go
// alone), says the given lines, and returns each answer's line.
func stdioLines(t *testing.T, srv *server.MCPServer, p *Presender, lines ...string) []string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	var w io.Writer = outW
	if p != nil {
		p.w = outW
		ctx, w = p.Context(ctx), p
	}
	done := make(chan error, 1)
	go func() { done <- server.NewStdioServer(srv).Listen(ctx, inR, w) }()
	defer func() {
		cancel()
		inW.Close()
		<-done
	}()
	rd := bufio.NewReaderSize(outR, 1<<20)
	var got []string
	for _, l := range lines {
		if _, err := io.WriteString(inW, l+"\n"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(l, `"id"`) {
			continue // a notification: no answer
		}
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line)
	}
	return got
}

// Over stdio, what the Presender writes is byte for byte what mcp-go writes alone, for large
// answers (present) and small ones (not), and nothing of a token is left in it.
func TestPresenderLinesAreMcpGos(t *testing.T) {
	db := kvtest.Open(t)
	var big strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&big, "%d. a line with \"quotes\", <angle brackets> & a tab\there, é and 😀\n", i)
	}
	store := docstore.New(db, "personal")
	for title, text := range map[string]string{"Big plan": big.String(), "Small note": "one line\n"} {
		if _, err := store.Create(t.Context(), title, text, docstore.KindWrite, docstore.Author{By: "person:ana"}); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := New(db, Config{Space: "personal", Agent: "north", For: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_document","arguments":{"document":"Big plan"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_document","arguments":{"document":"Small note"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_document","arguments":{"document":"Big plan"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_documents","arguments":{}}}`,
	}
	alone := stdioLines(t, srv, nil, lines...)
	p := NewPresender(nil)
	present := stdioLines(t, srv, p, lines...)
	if p.n != 2 {
		t.Errorf("the Presender held %d answers, want the 2 big ones", p.n)
	}
	if len(alone[1]) < presendMin {
		t.Fatalf("the big answer is %d bytes, under presendMin", len(alone[1]))
	}
	for i := range alone {
		if present[i] != alone[i] {
			t.Errorf("answer %d differs:\nmcp-go alone: %.300s\npresent:      %.300s", i+1, alone[i], present[i])
		}
		if strings.Contains(present[i], "compass-presend-") {
			t.Errorf("answer %d still has a token: %.300s", i+1, present[i])
		}
	}
}

// Tokens the Presender didn't hold, or holds for another line, pass through untouched.
func TestPresenderLeavesOthersTokens(t *testing.T) {
	var out bytes.Buffer
	p := NewPresender(&out)
	token, err := p.hold(strings.Repeat("x", presendMin))
	if err != nil {
		t.Fatal(err)
	}
	forged := `{"text":"` + p.prefix + `999"}` + "\n"
	if _, err := p.Write([]byte(forged)); err != nil || out.String() != forged {
		t.Errorf("a token it doesn't hold: wrote %q, %v", out.String(), err)
	}
	out.Reset()
	if _, err := p.Write([]byte(`{"text":"` + token + `"}` + "\n")); err != nil || out.String() != `{"text":"`+strings.Repeat("x", presendMin)+`"}`+"\n" {
		t.Errorf("its token: wrote %.100q, %v", out.String(), err)
	}
	if len(p.held) != 0 {
		t.Errorf("%d answers still held after their line", len(p.held))
	}
	// Answers whose lines never come are let go once mostHeld newer ones are held.
	for range 3 * mostHeld {
		if _, err := p.hold(strings.Repeat("y", presendMin)); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.held) > mostHeld {
		t.Errorf("%d answers held, want at most %d", len(p.held), mostHeld)
	}
}
