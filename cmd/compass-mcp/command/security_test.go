package command

import (
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/transport"
	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func post(t *testing.T, url string, body io.Reader, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// With --token, every request needs it; a client that sends it works.
func TestTokenIsRequired(t *testing.T) {
	t.Parallel()
	data := newData(t)
	url, _ := httpServer(t, data, "--token", "s3cret")
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret2", "Basic s3cret", "s3cret"} {
		res, body := post(t, url, strings.NewReader(initBody), map[string]string{"Authorization": auth})
		if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("Authorization %q: %d %q, want 401 with WWW-Authenticate", auth, res.StatusCode, body)
		}
	}
	// The scheme is case-insensitive (RFC 7235), the token not.
	for _, auth := range []string{"Bearer s3cret", "bearer s3cret"} {
		if res, body := post(t, url, strings.NewReader(initBody), map[string]string{"Authorization": auth}); res.StatusCode != http.StatusOK {
			t.Errorf("the right token as %q: %d %s", auth, res.StatusCode, body)
		}
	}
	c, err := client.NewStreamableHttpClient(url, mcptransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	initialize(t, c, "with-token")
	if a := callTool(t, c, "list_documents", nil); a.isError {
		t.Errorf("list_documents with the token: %s", a.text)
	}
}

// Binding beyond loopback without a token is refused at start, saying why.
func TestOpenBindNeedsToken(t *testing.T) {
	t.Parallel()
	data := newData(t)
	cmd := exec.Command(testbin.Path, "serve", "--http", "0.0.0.0:0")
	cmd.Env = testEnv(data)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serving 0.0.0.0 without a token did not stop")
	}
	if err == nil || !strings.Contains(string(out), "refusing to serve on 0.0.0.0:0 without --token") {
		t.Errorf("0.0.0.0 without a token: %v %s", err, out)
	}
}

// Origin and Host of another site are refused; the server's own are not; bodies over the
// limit get 413.
func TestOriginHostAndBodyLimits(t *testing.T) {
	t.Parallel()
	data := newData(t)
	url, _ := httpServer(t, data)
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	for _, tc := range []struct {
		header map[string]string
		want   int
	}{
		{map[string]string{"Origin": "http://evil.example.com"}, http.StatusForbidden},
		{map[string]string{"Host": "evil.example.com"}, http.StatusForbidden},
		{map[string]string{"Origin": "http://" + host}, http.StatusOK},
		{map[string]string{"Origin": "https://" + host}, http.StatusOK},
		// Another page on this machine is another origin (the README promised 403; any
		// loopback origin passed).
		{map[string]string{"Origin": "http://localhost:3000"}, http.StatusForbidden},
		{map[string]string{"Origin": "http://localhost:9999"}, http.StatusForbidden},
		{map[string]string{"Origin": "https://127.0.0.1:7419"}, http.StatusForbidden},
		{map[string]string{"Origin": "http://127.0.0.2"}, http.StatusForbidden},
		{map[string]string{}, http.StatusOK},
	} {
		if res, body := post(t, url, strings.NewReader(initBody), tc.header); res.StatusCode != tc.want {
			t.Errorf("%v: %d %q, want %d", tc.header, res.StatusCode, body, tc.want)
		}
	}
	big := bytes.Repeat([]byte("x"), transport.MaxBody+1)
	if res, _ := post(t, url, bytes.NewReader(big), nil); res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over %d bytes: %d, want 413", transport.MaxBody, res.StatusCode)
	}
	// Without a length (chunked), the same.
	if res, _ := post(t, url, io.MultiReader(bytes.NewReader(big)), nil); res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a chunked body over %d bytes: %d, want 413", transport.MaxBody, res.StatusCode)
	}
	if res, body := post(t, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":`), nil); res.StatusCode >= 500 {
		t.Errorf("malformed JSON: %d %s", res.StatusCode, body)
	}
	if res, body := post(t, url, strings.NewReader(initBody), nil); res.StatusCode != http.StatusOK {
		t.Errorf("after all that, the server answers %d %s", res.StatusCode, body)
	}
}
