package semantic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Limits on what the endpoint is sent and what of its answers is read.
const (
	// MaxBatch is the most passages one request carries; MaxBatchBytes about the most bytes
	// of their texts.
	MaxBatch      = 32
	MaxBatchBytes = 64 << 10
	// MaxDims is the most dimensions a vector may have (the largest models give 4,096).
	MaxDims = 8192
	// MaxAnswer is the most bytes of an answer read: MaxBatch vectors of MaxDims numbers,
	// each written in at most about 24 bytes, with room to spare.
	MaxAnswer = MaxBatch*MaxDims*26 + 1<<16
)

// Client asks an OpenAI-compatible embeddings endpoint (POST URL/embeddings) for vectors.
type Client struct {
	URL   string // the endpoint's base, such as http://127.0.0.1:11434/v1
	Model string
	// Key, if set, is sent as a bearer token; it is never logged nor put in an error.
	Key  string
	HTTP *http.Client // nil: one with Timeout
	// Timeout bounds one request (0: 60 s), the answer's reading included.
	Timeout time.Duration
}

// EndpointError is an answer the endpoint gave that isn't vectors: a status, a body that
// isn't what was asked, a vector with the wrong dimensions or a NaN. Retry says whether
// trying again later may help (a 5xx, a 429, a network failure).
type EndpointError struct {
	Msg   string
	Retry bool
}

func (e *EndpointError) Error() string { return e.Msg }

// Embed gives the vectors of texts (at most MaxBatch), in their order, each scaled to
// length 1, all of one length (dims, if not 0, is the length they must have).
func (c *Client) Embed(ctx context.Context, texts []string, dims int) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{c.Model, texts})
	if err != nil {
		return nil, err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.URL, "/")+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, &EndpointError{Msg: fmt.Sprintf("the embeddings URL won't do: %v", redact(err, c.Key))}
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, &EndpointError{Msg: fmt.Sprintf("the embeddings endpoint didn't answer: %v", redact(err, c.Key)), Retry: true}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err != nil {
		return nil, &EndpointError{Msg: fmt.Sprintf("the embeddings endpoint's answer broke off: %v", redact(err, c.Key)), Retry: true}
	}
	if resp.StatusCode != http.StatusOK {
		retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout
		return nil, &EndpointError{Msg: fmt.Sprintf("the embeddings endpoint answered %s: %s", resp.Status, snippet(raw, c.Key)), Retry: retry}
	}
	if len(raw) > MaxAnswer {
		return nil, &EndpointError{Msg: fmt.Sprintf("the embeddings endpoint's answer is over %d bytes", MaxAnswer)}
	}
	var ans struct {
		Data []struct {
			Index     *int      `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, &EndpointError{Msg: fmt.Sprintf("the embeddings endpoint's answer isn't OpenAI's shape (%v): %s", err, snippet(raw, c.Key))}
	}
	if len(ans.Data) != len(texts) {
		return nil, &EndpointError{Msg: fmt.Sprintf("the embeddings endpoint gave %d vectors for %d texts", len(ans.Data), len(texts))}
	}
	out := make([][]float32, len(texts))
	for i, d := range ans.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= len(out) || out[at] != nil {
			return nil, &EndpointError{Msg: fmt.Sprintf("the embeddings endpoint's vector %d has index %d", i, at)}
		}
		v, err := unit(d.Embedding, dims)
		if err != nil {
			return nil, &EndpointError{Msg: "the embeddings endpoint's vector " + err.Error()}
		}
		if dims == 0 {
			dims = len(v)
		}
		out[at] = v
	}
	return out, nil
}

// unit is v scaled to length 1, as float32s; it refuses a vector of other than dims numbers
// (unless dims is 0), of none or more than MaxDims, with a NaN or an infinity, or of length 0.
func unit(v []float64, dims int) ([]float32, error) {
	if len(v) == 0 || len(v) > MaxDims {
		return nil, fmt.Errorf("has %d dimensions (1 to %d wanted)", len(v), MaxDims)
	}
	if dims != 0 && len(v) != dims {
		return nil, &DimsError{Got: len(v), Want: dims}
	}
	var sum float64
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e15 {
			return nil, errors.New("has a number that isn't one (NaN, infinite or huge)")
		}
		sum += x * x
	}
	if sum == 0 {
		return nil, errors.New("is all zeros")
	}
	n := math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out, nil
}

// DimsError is a vector of other dimensions than the index's.
type DimsError struct{ Got, Want int }

func (e *DimsError) Error() string {
	return fmt.Sprintf("has %d dimensions, the others %d", e.Got, e.Want)
}

// snippet is the beginning of an answer's body, for an error: at most 200 bytes, one line.
// The key, were the endpoint to echo it, is left out.
func snippet(raw []byte, key string) string {
	s := string(raw[:min(len(raw), 200+len(key))])
	if key != "" {
		s = strings.ReplaceAll(s, key, "***")
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:cutAt(s, 200)]
	}
	return strings.ToValidUTF8(s, "?")
}

// Endpoint is the endpoint's URL as a page or a log may show it: any user info, query
// values and the key (Key, if the URL holds it) replaced by ***, no fragment.
func (c *Client) Endpoint() string {
	u, err := url.Parse(c.URL)
	if err != nil {
		return "(a URL that does not parse)"
	}
	if u.User != nil {
		u.User = url.User("***")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"***"}
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment, u.RawFragment = "", ""
	return c.Redact(strings.ReplaceAll(u.String(), "%2A%2A%2A", "***"))
}

// Redact is s (an error's message, say) without the key or the URL's user info.
func (c *Client) Redact(s string) string {
	if c.Key != "" {
		s = strings.ReplaceAll(s, c.Key, "***")
	}
	if u, err := url.Parse(c.URL); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			s = strings.ReplaceAll(s, pw, "***")
		}
		if info := u.User.String(); info != "" {
			s = strings.ReplaceAll(s, info+"@", "***@")
		}
		if name := u.User.Username(); name != "" { // as net/http and url.URL.Redacted show it
			s = strings.ReplaceAll(strings.ReplaceAll(s, name+":***@", "***@"), name+":xxxxx@", "***@")
		}
	}
	return s
}

// redact is err's message without key.
func redact(err error, key string) string {
	if key == "" {
		return err.Error()
	}
	return strings.ReplaceAll(err.Error(), key, "***")
}
