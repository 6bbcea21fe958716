package pg_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// listen serves each connection to a loopback port with answer, at once.
func listen(t *testing.T, answer []byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Write(answer)
				buf := make([]byte, 1024)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// A URL whose port answers something other than PostgreSQL (a web server's, here) fails at
// once, saying what answered; before, Open waited its full 30 s. One that answers nothing
// fails within the connect timeout (10 s unless the URL's connect_timeout says).
func TestOpenNotPostgres(t *testing.T) {
	addr := listen(t, []byte("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n400 Bad Request"))
	start := time.Now()
	_, err := pg.Open(context.Background(), "postgres://compass:s3cret@"+addr+"/compass")
	took := time.Since(start)
	t.Logf("Open on an HTTP port: %v, after %v", err, took.Round(time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "HTTP") || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Open on an HTTP port = %v, want an error naming %s and HTTP", err, addr)
	}
	if took > 3*time.Second {
		t.Errorf("Open on an HTTP port took %v", took)
	}

	// A web server (Go's) waits for a request line that never comes, and answers nothing.
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	start = time.Now()
	_, err = pg.Open(context.Background(), "postgres://compass@"+strings.TrimPrefix(web.URL, "http://")+"/compass?connect_timeout=1")
	took = time.Since(start)
	t.Logf("Open on a web server's port: %v, after %v", err, took.Round(time.Millisecond))
	if !errors.Is(err, kv.ErrUnavailable) || !strings.Contains(err.Error(), "connect timeout") || took > 5*time.Second {
		t.Errorf("Open on a web server's port = %v after %v, want ErrUnavailable within the 1 s connect timeout", err, took)
	}
}

// An @ left unencoded in a password (or a user name) makes the rest of it look like the host:
// it is refused before anything is dialled (no DNS query), saying to write it %40.
func TestOpenUnencodedAt(t *testing.T) {
	for _, u := range []string{
		"postgres://ana:p@ss@127.0.0.1:1/compass",
		"postgresql://ana:p@ss/w@127.0.0.1:1/compass",
		"postgres://ana@team@10.0.0.1:1/compass",
	} {
		start := time.Now()
		_, err := pg.Open(context.Background(), u)
		if err == nil || !strings.Contains(err.Error(), "%40") || strings.Contains(err.Error(), "p@ss") || time.Since(start) > time.Second {
			t.Errorf("Open(%q) = %v after %v; want a refusal saying to write @ as %%40, without the password", u, err, time.Since(start))
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://ana:s3cret@db.example:5432/compass":                "postgres://ana@db.example:5432/compass",
		"postgresql://ana:s3cret@db:5432/c?search_path=team&sslmode=x": "postgresql://ana@db:5432/c?search_path=team&sslmode=x",
		"postgres://db:5432/c?password=s3cret&search_path=team":        "postgres://db:5432/c?search_path=team",
		"postgres://ana@db/c":         "postgres://ana@db/c",
		"postgres://ana:s3%cret@db/c": "postgres://…@db/c", // not a URL Go parses
		// The client key's passphrase, which pgx reads from the URL too.
		"postgres://ana@db/c?sslpassword=s3cret&sslmode=verify-full": "postgres://ana@db/c?sslmode=verify-full",
		// Not parsed, and a password in the query.
		"postgres://db/c%zz?password=s3cret":          "postgres://db/c%zz",
		"postgres://ana:x@db/c%zz?sslpassword=s3cret": "postgres://…@db/c%zz",
		// An @ in the password: none of it is shown.
		"postgres://ana:s3@cret@db/c": "postgres://…@db/c",
	} {
		got := pg.Redact(in)
		if got != want || strings.Contains(got, "s3") {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsURL(t *testing.T) {
	for data, want := range map[string]bool{
		"postgres://h/db": true, "postgresql://h/db": true, "POSTGRES://h/db": true,
		"/var/lib/compass.db": false, "compass.db": false, "postgres.db": false, "postgress://h/db": false,
	} {
		if pg.IsURL(data) != want {
			t.Errorf("IsURL(%q) = %v", data, !want)
		}
	}
}

func TestSameDatabase(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"postgres://ana:x@DB.example/c", "postgresql://bo@db.example:5432/c", true},
		{"postgres://db/c?search_path=team", "postgres://db/c?search_path=team&sslmode=disable", true},
		{"postgres://db/c?search_path=team", "postgres://db/c", false},
		{"postgres://db:5433/c", "postgres://db/c", false},
		{"postgres://db/c", "postgres://db/d", false},
	} {
		if got := pg.SameDatabase(c.a, c.b); got != c.same {
			t.Errorf("SameDatabase(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
