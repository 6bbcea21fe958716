package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"sync"
)

// A large answer costs mcp-go two passes over its JSON on the way out: CallToolResult's
// MarshalJSON encodes it, then encoding/json validates and compacts that output again, a
// byte at a time, as it does whatever a MarshalJSON returns. Over stdio, where this process
// writes the lines, a Presender spares the second pass: a large answer is JSON-encoded here,
// once, and the result carries a token in its place; when mcp-go's line reaches stdout, the
// token's JSON string is swapped for the encoded answer. The line is byte for byte the one
// mcp-go would have written (TestPresenderLinesAreMcpGos).

// presendMin is the smallest answer worth presending: below it, the passes cost little.
const presendMin = 16 << 10

// mostHeld bounds the answers held at once. An answer is let go when its line is written; one
// whose line never comes (a call cancelled on the way) is dropped once mostHeld newer ones
// have been held, far more than can be in flight.
const mostHeld = 64

// Presender writes mcp-go's stdio lines to w, putting back the answers held for them.
type Presender struct {
	w      io.Writer
	prefix string // the tokens' start: random, so that no text can name a held answer

	mu   sync.Mutex
	n    uint64            // the last token's number
	held map[uint64][]byte // token number -> the answer as a JSON string, quotes included
}

// NewPresender returns a Presender that writes to w. Give it to mcp-go's stdio server as its
// output, with a context marked by Context (the tools' calls run in contexts made from it).
func NewPresender(w io.Writer) *Presender {
	var seed [12]byte
	rand.Read(seed[:])
	return &Presender{w: w, prefix: "compass-presend-" + hex.EncodeToString(seed[:]) + "-", held: map[uint64][]byte{}}
}

type presenderKey struct{}

// Context marks ctx: the tools answer large texts through p.
func (p *Presender) Context(ctx context.Context) context.Context {
	return context.WithValue(ctx, presenderKey{}, p)
}

func presenderOf(ctx context.Context) *Presender {
	p, _ := ctx.Value(presenderKey{}).(*Presender)
	return p
}

// hold encodes answer as a JSON string and returns the token that stands for it.
func (p *Presender) hold(answer string) (string, error) {
	encoded, err := json.Marshal(answer) // as encoding/json writes a string inside mcp-go's line
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.held[p.n] = encoded
	if len(p.held) > mostHeld {
		for n := range p.held {
			if n+mostHeld <= p.n {
				delete(p.held, n)
			}
		}
	}
	return p.prefix + strconv.FormatUint(p.n, 10), nil
}

// Write writes one line of mcp-go's, with the answers its tokens stand for put back. mcp-go
// writes each message with one call, under its own lock, so a line is never split.
func (p *Presender) Write(line []byte) (int, error) {
	p.mu.Lock()
	if len(p.held) == 0 {
		p.mu.Unlock()
		return p.w.Write(line)
	}
	var parts [][]byte
	rest := line
	for {
		i := bytes.Index(rest, []byte(p.prefix))
		if i < 1 || rest[i-1] != '"' {
			break
		}
		end := bytes.IndexByte(rest[i:], '"')
		if end < 0 {
			break
		}
		n, err := strconv.ParseUint(string(rest[i+len(p.prefix):i+end]), 10, 64)
		encoded, ok := p.held[n]
		if err != nil || !ok {
			break
		}
		delete(p.held, n)
		parts = append(parts, rest[:i-1], encoded)
		rest = rest[i+end+1:]
	}
	p.mu.Unlock()
	if len(parts) == 0 {
		return p.w.Write(line)
	}
	for _, part := range append(parts, rest) {
		if _, err := p.w.Write(part); err != nil {
			return 0, err
		}
	}
	return len(line), nil
}
