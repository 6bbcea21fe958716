package pg

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/jackc/pgx/v5/pgconn"
)

// IsURL reports whether data names a PostgreSQL database (postgres:// or postgresql://)
// rather than a file.
func IsURL(data string) bool {
	scheme, _, ok := strings.Cut(data, "://")
	return ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"))
}

// Redact is a database URL with its passwords (in the user part, or the password and
// sslpassword parameters, the client key's passphrase) removed, for logs and messages.
func Redact(data string) string {
	u, err := url.Parse(data)
	if err != nil || strings.Count(authority(data), "@") > 1 {
		// Not parsed, or not as pgx would: show no more than the scheme and what follows
		// the last @, without the parameters.
		data, _, _ = strings.Cut(data, "?")
		if i := strings.LastIndex(data, "@"); i >= 0 {
			scheme, _, _ := strings.Cut(data, "://")
			return scheme + "://…@" + data[i+1:]
		}
		return data
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") || q.Has("sslpassword") {
		q.Del("password")
		q.Del("sslpassword")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// authority is what follows a URL's scheme up to its parameters: user, password, host,
// port and database.
func authority(data string) string {
	_, rest, _ := strings.Cut(data, "://")
	rest, _, _ = strings.Cut(rest, "?")
	return rest
}

// DefaultConnectTimeout is how long connecting to the database (its TCP connection and
// PostgreSQL's greeting) may take unless the URL's connect_timeout says.
const DefaultConnectTimeout = 10 * time.Second

// checkURL refuses a URL that pgx would read otherwise than its writer meant: an @ left
// unencoded in the password or the user name, which pgx takes as the end of the user part,
// making the rest of the password the host (a "no such host", or worse, a query for it).
func checkURL(data string) error {
	if strings.Count(authority(data), "@") > 1 {
		return fmt.Errorf("%s: the URL has more than one @ before its host: an @ in the user name or the password must be written %%40 (and : / ? # %% as %%3A %%2F %%3F %%23 %%25), as in postgres://USER:PA%%40SSWORD@HOST/DB", Redact(data))
	}
	return nil
}

// notPostgresError is what Open returns when the server at the URL's address answers, but
// not as PostgreSQL does.
type notPostgresError struct {
	addr   string
	answer []byte
}

func (e *notPostgresError) Error() string {
	what := "something that is not PostgreSQL"
	switch a := string(e.answer); {
	case strings.HasPrefix(a, "HTTP/"):
		what = "a web server (HTTP)"
	case strings.HasPrefix(a, "SSH-"):
		what = "an SSH server"
	case strings.HasPrefix(a, "220 ") || strings.HasPrefix(a, "220-"):
		what = "a mail or FTP server"
	case strings.HasPrefix(a, "-ERR") || strings.HasPrefix(a, "+OK"):
		what = "a Redis or POP server"
	}
	return fmt.Sprintf("%s answers as %s, not as PostgreSQL (it began %q): is the URL's port right? PostgreSQL's is 5432 unless set otherwise", e.addr, what, clip(e.answer, 40))
}

func (e *notPostgresError) Unwrap() error { return kv.ErrUnavailable }

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// sniffed is a connection to the server that checks the first byte it sends is one
// PostgreSQL sends first: 'S' or 'N' answering a TLS request, 'R' (authentication), 'E'
// (an error) or 'v' (protocol negotiation) answering a startup message. Anything else fails
// the read at once with a notPostgresError holding what came (and a little more, if it
// comes within a moment), rather than leaving pgx to read it as a message (an HTTP
// answer's "TTP/" is a 1.4 GB length).
type sniffed struct {
	net.Conn
	addr    string
	checked bool
}

func (c *sniffed) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.checked || n == 0 {
		return n, err
	}
	c.checked = true
	if strings.IndexByte("SNREv", p[0]) >= 0 {
		return n, err
	}
	answer := append([]byte(nil), p[:n]...)
	more := make([]byte, 64)
	c.Conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if m, _ := io.ReadAtLeast(c.Conn, more, len(more)); m > 0 {
		answer = append(answer, more[:m]...)
	}
	return 0, &notPostgresError{c.addr, answer}
}

// sniffingDialer dials as pgx does by default, wrapping each connection in a sniffed.
func sniffingDialer() pgconn.DialFunc {
	d := &net.Dialer{KeepAlive: 5 * time.Minute}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &sniffed{Conn: c, addr: addr}, nil
	}
}

// SameDatabase reports whether the URLs a and b name the same data: the same database and
// schema (search_path) on the same host and port.
func SameDatabase(a, b string) bool { return identity(a) == identity(b) }

func identity(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port) + u.Path + "?" + u.Query().Get("search_path")
}
