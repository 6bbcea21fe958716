package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/mark3labs/mcp-go/server"
	"golang.org/x/sync/semaphore"
)

// MaxBody is the largest HTTP request accepted, and the longest stdio line: room for a
// text at the tools' limit (Limits.Text, 8 MiB) even when JSON escaping makes it several
// times larger, so that the tool (not the transport) says what the limit is.
const MaxBody = 64 << 20

// Limits are the tools' limits that the transport enforces before mcp-go and the tools
// decode a request: a tools/call holding a string longer than any text may be is answered
// with the tools' refusal at once (see oversized). The command hands them over (SetLimits),
// as it tunes the collector (TuneGC): the transport knows no document.
type Limits struct {
	// Text is the longest text a tool takes, in bytes (the domain's docstore.MaxText).
	Text int
}

var limits atomic.Pointer[Limits]

// SetLimits sets the limits every server of the process enforces. Until it is called
// nothing is refused early: the tools still refuse, once the request is decoded.
func SetLimits(l Limits) { limits.Store(&l) }

// maxText is the longest text Limits allow (no limit when none were set).
func maxText() int {
	if l := limits.Load(); l != nil && l.Text > 0 {
		return l.Text
	}
	return math.MaxInt
}

// HTTP limits beyond the body size (MaxBody), so that no client can hold the server's
// memory or connections for long: see docs/RELIABILITY.md for what each answers.
const (
	// readTimeout bounds reading a request, its body included: a slow body can't hold its
	// memory longer. It is lifted once the body is read, and for GET streams, which last.
	readTimeout = 2 * time.Minute
	// idleTimeout closes a kept-alive connection no request has used for that long.
	idleTimeout = 2 * time.Minute
	// bodiesInFlight is how many bytes of large bodies (over smallBody) are held at once;
	// a large request waits (at most readTimeout) for room. Two bodies at the limit fit.
	bodiesInFlight = 2 * MaxBody
	// smallBody is the size under which a body doesn't wait for room: a one-line append
	// is never held up behind large writes.
	smallBody = 1 << 20
)

// Harden sets the server's timeouts (WriteTimeout stays unset: GET streams last).
func Harden(hs *http.Server) {
	hs.ReadHeaderTimeout = 10 * time.Second
	hs.ReadTimeout = readTimeout
	hs.IdleTimeout = idleTimeout
}

// refuse answers an HTTP error and closes the connection after it, so that a client
// refused (a 401 above all) doesn't keep a connection open for nothing.
func refuse(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
}

// bodyBudget bounds the bytes of large bodies held at once, first come first served: a
// large body waiting for room holds up the ones behind it, so that a stream of smaller
// ones cannot starve it.
var bodyBudget = semaphore.NewWeighted(bodiesInFlight)

// readBody reads a POST body of at most MaxBody bytes into one buffer of its size (no
// doubling growth when the length is given), holding room for it in bodyBudget until
// release is called. It answers the client itself (413, 408, 400) and returns ok false
// when the body can't be had.
func readBody(w http.ResponseWriter, r *http.Request) (body []byte, release func(), ok bool) {
	if r.ContentLength > MaxBody {
		refuse(w, fmt.Sprintf("Request body too large: at most %d MiB", MaxBody>>20), http.StatusRequestEntityTooLarge)
		return nil, nil, false
	}
	need := r.ContentLength
	if need < 0 {
		need = MaxBody // no length: room for the largest
	}
	release = func() {}
	if need > smallBody {
		ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
		defer cancel()
		if err := bodyBudget.Acquire(ctx, need); err != nil {
			refuse(w, "The server is busy with other large requests; try again", http.StatusServiceUnavailable)
			return nil, nil, false
		}
		release = func() { bodyBudget.Release(need) }
	}
	var err error
	if r.ContentLength >= 0 {
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	}
	switch {
	case err != nil:
		release()
		refuse(w, "Could not read the request body (too slow, or cut short)", http.StatusBadRequest)
		return nil, nil, false
	case len(body) > MaxBody:
		release()
		refuse(w, fmt.Sprintf("Request body too large: at most %d MiB", MaxBody>>20), http.StatusRequestEntityTooLarge)
		return nil, nil, false
	}
	// The body is in: lift the read deadline, so that the background read mcp-go's
	// streamed answer relies on doesn't cancel a call that runs long.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return body, release, true
}

// oversized reports, for a tools/call whose body holds a string that no argument
// may be (longer than a text may be, Limits.Text, once its escapes are decoded), the
// request's raw id, the argument the string is the value of ("" when it is none's), and
// the string's decoded length: such a request is answered at once, without mcp-go and the tools
// decoding it (which copied the body five times: a 60 MiB body took 387 MB). found is
// false when the body has no such string, or isn't a JSON object.
func oversized(body []byte) (id json.RawMessage, arg string, decoded int, found bool) {
	limit := maxText()
	depth := 0
	key := false // the string just read is a key of the top-level object
	var lastKey, valueOf, method []byte
	var prev, anyKey []byte // the last short string read; the key of the value being read, at any depth
	colon := false          // the last thing read was a colon: a string now is a value
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		isValue := colon
		colon = c == ':'
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ':':
			if depth == 1 && bytes.Equal(lastKey, []byte("id")) {
				end := i + 1
				for end < len(body) && body[end] != ',' && body[end] != '}' {
					if body[end] == '"' { // a string id: to its closing quote
						for end++; end < len(body) && body[end] != '"'; end++ {
							if body[end] == '\\' {
								end++
							}
						}
					}
					end++
				}
				id = bytes.TrimSpace(body[i+1 : min(end, len(body))])
			}
			valueOf, lastKey, anyKey = lastKey, nil, prev
		case ',':
			key = depth == 1
		case '"':
			start, n := i+1, 0
			for i++; i < len(body) && body[i] != '"'; i++ {
				n++
				if body[i] == '\\' {
					i++
					if i+4 < len(body) && body[i] == 'u' {
						n += escapedLen(body[i+1:i+5]) - 1
						i += 4
					}
				}
			}
			if n > limit && n > decoded {
				decoded, arg = n, ""
				if isValue {
					arg = string(anyKey)
				}
			}
			prev = nil
			if i-start <= 64 {
				prev = body[start:min(i, len(body))]
			}
			if depth == 1 && bytes.Equal(valueOf, []byte("method")) {
				method = body[start:min(i, len(body))]
			} else if depth == 1 && (key || lastKey == nil) && i-start <= 16 {
				lastKey = body[start:min(i, len(body))]
			}
			key, valueOf = false, nil
		}
	}
	if decoded == 0 || len(id) == 0 || !json.Valid(id) || string(method) != "tools/call" {
		return nil, "", 0, false
	}
	return id, arg, decoded, true
}

// escapedLen is how many bytes of UTF-8 the escape \uXXXX decodes to (a surrogate pair
// counts 4 for its first half, 0 for its second).
func escapedLen(hex []byte) int {
	var cp int
	for _, h := range hex {
		switch {
		case h >= '0' && h <= '9':
			cp = cp<<4 | int(h-'0')
		case h >= 'a' && h <= 'f':
			cp = cp<<4 | int(h-'a'+10)
		case h >= 'A' && h <= 'F':
			cp = cp<<4 | int(h-'A'+10)
		}
	}
	switch {
	case cp < 0x80:
		return 1
	case cp < 0x800:
		return 2
	case cp >= 0xD800 && cp < 0xDC00:
		return 4
	case cp >= 0xDC00 && cp < 0xE000:
		return 0
	}
	return 3
}

// refuseOversized answers a request oversized found with the tools' own words, as an
// error result.
func refuseOversized(w http.ResponseWriter, id json.RawMessage, arg string, decoded int) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(oversizedAnswer(id, arg, decoded))
}

// oversizedAnswer is the JSON-RPC answer to a tools/call that oversized found.
func oversizedAnswer(id json.RawMessage, arg string, decoded int) []byte {
	size, most := float64(decoded)/(1<<20), maxText()>>20
	text := fmt.Sprintf("That text won't do: a text is at most %d MiB, this one is %.1f MiB. Nothing was saved.", most, size)
	switch arg {
	case "text", "new", "":
	case "old":
		text = fmt.Sprintf("The text to replace (old) is %.1f MiB, longer than a text may be (%d MiB): it isn't in the document. Nothing was saved.", size, most)
	default:
		text = fmt.Sprintf("%.40s is %.1f MiB: nothing here is that long (a text is at most %d MiB, a title 200 characters). Nothing was saved.", arg, size, most)
	}
	answer, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"result":  map[string]any{"content": []map[string]string{{"type": "text", "text": text}}, "isError": true},
	})
	return answer
}

// bodyKey carries a POST body Guard has read to Direct.
type bodyKey struct{}

// withBody hands body on to Direct, and to any other handler as r.Body.
func withBody(r *http.Request, body []byte) *http.Request {
	r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, body))
	r.Body = io.NopCloser(bytes.NewReader(body))
	return r
}

// Direct gives mcp-go a POST body Guard has already read through its Handle, so that it
// is not copied once more (mcp-go's ServeHTTP reads the body again with io.ReadAll, which
// grows a second buffer to its size). It first refuses what ServeHTTP would have (DNS
// rebinding, see rebound). Other requests go to ServeHTTP as they are.
func Direct(mcpHTTP *server.StreamableHTTPServer, allowedHosts ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := r.Context().Value(bodyKey{}).([]byte)
		if !ok || r.Method != http.MethodPost {
			mcpHTTP.ServeHTTP(w, r)
			return
		}
		if rebound(r, allowedHosts) {
			refuse(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		mcpHTTP.Handle(streamWriter{w}, &server.HTTPRequest{Method: r.Method, URL: r.URL, Header: r.Header, Body: body, Context: r.Context()})
	})
}

// rebound reports whether r names a Host this server doesn't answer to: access's one rule
// (access.ForeignHost), which is mcp-go's (v1.6.0, WithAllowedHosts).
func rebound(r *http.Request, allowedHosts []string) bool {
	return access.ForeignHost(r, allowedHosts)
}

// streamWriter is an http.ResponseWriter as mcp-go's Handle takes it.
type streamWriter struct{ http.ResponseWriter }

func (s streamWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s streamWriter) CanStream() bool {
	_, ok := s.ResponseWriter.(http.Flusher)
	return ok
}

func (s streamWriter) SetWriteDeadline(t time.Time) error {
	return http.NewResponseController(s.ResponseWriter).SetWriteDeadline(t)
}
