package transport

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestServerTimeouts(t *testing.T) {
	var hs http.Server
	Harden(&hs)
	if hs.ReadTimeout <= 0 || hs.IdleTimeout <= 0 || hs.ReadHeaderTimeout <= 0 || hs.WriteTimeout != 0 {
		t.Errorf("timeouts: read %s, idle %s, header %s, write %s", hs.ReadTimeout, hs.IdleTimeout, hs.ReadHeaderTimeout, hs.WriteTimeout)
	}
}

// echoBody answers the body it was handed, as it was handed it.
var echoBody = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, _ := r.Context().Value(bodyKey{}).([]byte)
	_, _ = w.Write(b)
})

// Guard refuses a body over MaxBody, with a length or without one (chunked), before
// anything below it runs; one at the limit goes through whole.
func TestGuardBoundsBodies(t *testing.T) {
	h := Guard(echoBody)
	for _, tc := range []struct {
		name   string
		n      int
		length bool
		want   int
	}{
		{"at the limit", MaxBody, true, http.StatusOK},
		{"over the limit", MaxBody + 1, true, http.StatusRequestEntityTooLarge},
		{"at the limit, chunked", MaxBody, false, http.StatusOK},
		{"over the limit, chunked", MaxBody + 1, false, http.StatusRequestEntityTooLarge},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", io.NopCloser(&xs{tc.n}))
		r.ContentLength = -1
		if tc.length {
			r.ContentLength = int64(tc.n)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want || (tc.want == http.StatusOK && w.Body.Len() != tc.n) {
			t.Errorf("%s: %d with %d bytes handed on, want %d", tc.name, w.Code, w.Body.Len(), tc.want)
		}
	}
	if !bodyBudget.TryAcquire(bodiesInFlight) {
		t.Fatal("the bodies' room in the budget was not given back")
	}
	bodyBudget.Release(bodiesInFlight)
}

// While the budget for large bodies is taken, a large body waits for room and is refused
// (503) when its request gives up; a small one doesn't wait. Once there is room again, the
// large one goes through.
func TestLargeBodiesWaitForRoom(t *testing.T) {
	if err := bodyBudget.Acquire(context.Background(), bodiesInFlight); err != nil {
		t.Fatal(err)
	}
	held := true
	defer func() {
		if held {
			bodyBudget.Release(bodiesInFlight)
		}
	}()
	h := Guard(echoBody)
	send := func(n int, wait time.Duration) int {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(strings.Repeat("x", n)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if code := send(smallBody+1, 200*time.Millisecond); code != http.StatusServiceUnavailable {
		t.Errorf("a large body with the budget taken: %d, want 503", code)
	}
	if code := send(smallBody, 200*time.Millisecond); code != http.StatusOK {
		t.Errorf("a small body with the budget taken: %d, want 200", code)
	}
	bodyBudget.Release(bodiesInFlight)
	held = false
	if code := send(smallBody+1, 10*time.Second); code != http.StatusOK {
		t.Errorf("a large body with room: %d, want 200", code)
	}
}

// A tools/call whose body holds a text longer than any may be is answered with the tools'
// refusal, as a result the model reads, without the handler below seeing it.
func TestGuardAnswersAnOversizedCall(t *testing.T) {
	h := Guard(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("the oversized call was handed on") }))
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"edit_document","arguments":{"document":"x","old":"` + strings.Repeat("x", 9<<20) + `","new":"y"}}}`
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body)))
	var answer struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil {
		t.Fatalf("%d %q: %v", w.Code, w.Body.String(), err)
	}
	if answer.ID != 7 || !answer.Result.IsError || len(answer.Result.Content) != 1 || !strings.Contains(answer.Result.Content[0].Text, "The text to replace (old) is 9.0 MiB") {
		t.Errorf("answered %d %s", w.Code, w.Body.String())
	}
}
