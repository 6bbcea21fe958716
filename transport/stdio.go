package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// maxLine is the longest stdio message read: as large as an HTTP body may be.
const maxLine = MaxBody

// stdioWorkers is how many stdio requests are served at once; the next line is read when
// one of them is done.
const stdioWorkers = 8

// ServeStdio serves MCP on in and out, one JSON-RPC message a line, with mcp-go's
// HandleMessage: our loop rather than mcp-go's StdioServer, whose Listen cancels its
// workers at the end of input (so requests queued behind a slow one were dropped without a
// word: 2 to 12 of 50 piped requests were answered) and ignores a last line without its
// line break, and whose lines have no length limit (a 300 MB line took 1.87 GB).
//
// Here every request read before the end of input is answered before ServeStdio returns;
// a line over MaxBody is answered with a JSON-RPC error (id null), skipped, and the next
// one read; a tools/call holding a string longer than any text may be is answered with the
// tool's refusal at once (see oversized). When ctx ends (SIGINT/SIGTERM), no more lines
// are read, the requests in flight get stopAfter to finish, and those that didn't are
// named on stderr.
func ServeStdio(ctx context.Context, srv *server.MCPServer, in io.Reader, out io.Writer, stopAfter time.Duration) error {
	sess := &stdioSession{notes: make(chan mcp.JSONRPCNotification, 100)}
	if err := srv.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("registering the stdio session: %w", err)
	}
	defer srv.UnregisterSession(context.Background(), sess.SessionID())
	// Large answers are JSON-encoded once, by the tools, and put back into their line on the
	// way out (tools/presend.go).
	pre := tools.NewPresender(out)
	l := &stdioLoop{srv: srv, w: &lineWriter{w: pre}, slots: make(chan struct{}, stdioWorkers)}
	// Requests are served on their own context, not ctx: a signal stops the reading, and
	// the calls in flight still finish.
	var cancelLong context.CancelFunc
	l.reqCtx, cancelLong = context.WithCancel(pre.Context(srv.WithContext(context.Background(), sess)))
	defer cancelLong()
	go l.notify(sess.notes)

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() { readErr <- readLines(in, lines, l.w) }()
	err := l.read(ctx, lines, readErr)
	l.finish(ctx, stopAfter)
	cancelLong()
	l.long.Wait()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err
}

// stdioLoop is one ServeStdio's requests on their way through.
type stdioLoop struct {
	srv    *server.MCPServer
	reqCtx context.Context // what requests are served on
	w      *lineWriter

	calls, long sync.WaitGroup // requests; requests that last until the input ends
	slots       chan struct{}  // a worker's, taken while a request runs
	flight      sync.Map       // id (JSON) → method, of requests not answered yet
}

// notify sends the server's notifications until the requests' context ends.
func (l *stdioLoop) notify(notes <-chan mcp.JSONRPCNotification) {
	for {
		select {
		case n := <-notes:
			l.w.send(n)
		case <-l.reqCtx.Done():
			return
		}
	}
}

// read takes lines until the input ends (returning how it ended) or ctx does.
func (l *stdioLoop) read(ctx context.Context, lines <-chan []byte, readErr <-chan error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				return <-readErr
			}
			if !l.take(ctx, line) {
				return nil
			}
		}
	}
}

// take runs one line: a request on a worker of its own, once one is free; anything else
// at once, in order. It returns false when ctx ended while the request waited for a
// worker: it was not run, and no more are read.
func (l *stdioLoop) take(ctx context.Context, line []byte) bool {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if !json.Valid(line) {
		l.w.send(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(nil), Error: mcp.NewJSONRPCErrorDetails(mcp.PARSE_ERROR, "Parse error", nil)})
		return true
	}
	isObject := json.Unmarshal(line, &head) == nil
	if isObject && head.Method == "" && (head.Result != nil || head.Error != nil) {
		return true // a response to a request of ours: this server sends none
	}
	if !isObject || len(head.ID) == 0 || bytes.Equal(head.ID, []byte("null")) {
		// A notification (or something mcp-go will refuse): in order, on this goroutine.
		if resp := handle(l.reqCtx, l.srv, line); resp != nil {
			l.w.send(resp)
		}
		return true
	}
	if len(line) > maxText() {
		// As over HTTP: a text longer than any may be is refused before mcp-go and the
		// tools decode it, several copies of it.
		if id, arg, n, found := oversized(line); found {
			l.w.send(json.RawMessage(oversizedAnswer(id, arg, n)))
			return true
		}
	}
	id := string(head.ID)
	l.flight.Store(id, head.Method)
	wg := &l.calls
	if head.Method == string(mcp.MethodSubscriptionsListen) {
		wg = &l.long // it lasts until the input ends
	}
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		l.flight.Delete(id)
		slog.Warn("stopped: this request was read but not run", "id", id, "method", head.Method)
		return false
	}
	wg.Go(func() {
		defer func() { <-l.slots }()
		if resp := handle(l.reqCtx, l.srv, line); resp != nil {
			l.w.send(resp)
		}
		l.flight.Delete(id)
	})
	return true
}

// finish waits for the requests in flight: for all of them at the end of input; once ctx
// has ended, for stopAfter at most, then names those not answered.
func (l *stdioLoop) finish(ctx context.Context, stopAfter time.Duration) {
	done := make(chan struct{})
	go func() { l.calls.Wait(); close(done) }()
	if ctx.Err() == nil {
		<-done // the end of input: answer everything read
		return
	}
	select {
	case <-done:
	case <-time.After(stopAfter):
		l.flight.Range(func(id, method any) bool {
			slog.Warn("stopped before this request was answered", "id", id, "method", method)
			return true
		})
	}
}

// handle runs one message through mcp-go, answering a panic as an internal error.
func handle(ctx context.Context, srv *server.MCPServer, line []byte) (resp mcp.JSONRPCMessage) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("a stdio request panicked", "panic", p, "stack", string(debug.Stack()))
			var head struct {
				ID any `json:"id"`
			}
			_ = json.Unmarshal(line, &head)
			resp = mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(head.ID), Error: mcp.NewJSONRPCErrorDetails(mcp.INTERNAL_ERROR, "internal error (logged on the server)", nil)}
		}
	}()
	return srv.HandleMessage(ctx, line)
}

// readLines sends each line of in (without its line end; the last one too when it has
// none) on lines, and closes lines at the end of input. A line longer than maxLine is
// answered on w with an error and skipped, reading no more of it into memory than maxLine.
func readLines(in io.Reader, lines chan<- []byte, w *lineWriter) error {
	defer close(lines)
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		var line lineBuf
		tooLong := false
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			if !tooLong && line.n+len(frag) > maxLine+2 { // +2: the "\r\n" that ends it
				tooLong, line = true, lineBuf{}
			}
			if !tooLong {
				line.add(frag)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if tooLong {
			slog.Warn("refused a stdio message over the limit", "limit MiB", maxLine>>20)
			w.send(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(nil), Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_REQUEST, fmt.Sprintf("message too large: a line is at most %d MiB; it was skipped", maxLine>>20), nil)})
		} else if l := bytes.TrimRight(line.bytes(), "\r\n"); len(bytes.TrimSpace(l)) > 0 {
			lines <- l
		}
		if err != nil {
			return err
		}
	}
}

// lineBuf gathers a line in chunks of at most 1 MiB and joins them once, at its size: a
// slice grown by append would leave about twice the line's size behind it as garbage, and
// a line refused at the limit would cost several times the limit before it is dropped.
type lineBuf struct {
	chunks [][]byte
	n      int
}

func (lb *lineBuf) add(p []byte) {
	lb.n += len(p)
	for len(p) > 0 {
		k := len(lb.chunks) - 1
		if k < 0 || len(lb.chunks[k]) == cap(lb.chunks[k]) {
			lb.chunks = append(lb.chunks, make([]byte, 0, min(1<<20, max(4<<10, lb.n))))
			k++
		}
		c := lb.chunks[k]
		m := min(len(p), cap(c)-len(c))
		lb.chunks[k] = append(c, p[:m]...)
		p = p[m:]
	}
}

func (lb *lineBuf) bytes() []byte {
	if len(lb.chunks) == 1 {
		return lb.chunks[0]
	}
	out := make([]byte, 0, lb.n)
	for _, c := range lb.chunks {
		out = append(out, c...)
	}
	return out
}

// lineWriter writes one JSON message a line, whole, whoever sends it.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (lw *lineWriter) send(msg any) {
	raw, err := json.Marshal(msg)
	if err != nil {
		slog.Error("encoding a stdio answer", "err", err)
		return
	}
	raw = append(raw, '\n')
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if _, err := lw.w.Write(raw); err != nil {
		slog.Debug("writing a stdio answer", "err", err)
	}
}

// stdioSession is the one client of stdio: what it said at initialize (its name names the
// versions it makes), and its log level.
type stdioSession struct {
	notes       chan mcp.JSONRPCNotification
	initialized atomic.Bool
	mu          sync.Mutex
	info        mcp.Implementation
	caps        mcp.ClientCapabilities
	level       mcp.LoggingLevel
}

func (s *stdioSession) SessionID() string                                   { return "stdio" }
func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }
func (s *stdioSession) Initialize()                                         { s.initialized.Store(true) }
func (s *stdioSession) Initialized() bool                                   { return s.initialized.Load() }

func (s *stdioSession) GetClientInfo() mcp.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

func (s *stdioSession) SetClientInfo(info mcp.Implementation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info = info
}

func (s *stdioSession) GetClientCapabilities() mcp.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

func (s *stdioSession) SetClientCapabilities(caps mcp.ClientCapabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = caps
}

func (s *stdioSession) SetLogLevel(level mcp.LoggingLevel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.level = level
}

func (s *stdioSession) GetLogLevel() mcp.LoggingLevel {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.level == "" {
		return mcp.LoggingLevelError
	}
	return s.level
}

var (
	_ server.SessionWithClientInfo = (*stdioSession)(nil)
	_ server.SessionWithLogging    = (*stdioSession)(nil)
)
