package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgEnv names the variable whose PostgreSQL database the side-by-side figures use unless
// -pg says another: the same one the tests use.
const pgEnv = "COMPASS_TEST_DATA"

// pgSchemas makes schemas of the benchmark's own in the database of -pg, and drops them all
// when done: the database is shared with others, whose schemas it never touches.
type pgSchemas struct {
	base string
	made []string
}

// fresh makes a new, empty schema and returns a URL whose search_path names it.
func (p *pgSchemas) fresh(ctx context.Context, what string) (string, error) {
	u, err := url.Parse(p.base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("-pg must be a postgres:// URL, not %q", p.base)
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	schema := fmt.Sprintf("bench_%s_%s", what, hex.EncodeToString(rnd[:]))
	if err := p.exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", fmt.Errorf("creating schema %s: %w", schema, err)
	}
	p.made = append(p.made, schema)
	q := u.Query()
	q.Set("search_path", schema)
	// Named, so that its connections can be told from others' in a shared database: the
	// probe counts the CPU of these backends only (cpuProbe).
	q.Set("application_name", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// drop drops every schema fresh made.
func (p *pgSchemas) drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var first error
	for _, s := range p.made {
		if err := p.exec(ctx, "DROP SCHEMA "+s+" CASCADE"); err != nil && first == nil {
			first = fmt.Errorf("dropping schema %s: %w", s, err)
		}
	}
	p.made = nil
	return first
}

// settings are the server's settings that decide what a commit waits for.
func (p *pgSchemas) settings(ctx context.Context) (string, error) {
	conn, err := pgx.Connect(ctx, p.base)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var version, fsync, syncCommit, walSync, commitDelay string
	err = conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('fsync'),
		current_setting('synchronous_commit'), current_setting('wal_sync_method'), current_setting('commit_delay')`).
		Scan(&version, &fsync, &syncCommit, &walSync, &commitDelay)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("PostgreSQL %s on the same machine over TCP loopback; fsync=%s, synchronous_commit=%s, wal_sync_method=%s, commit_delay=%s",
		version, fsync, syncCommit, walSync, commitDelay), nil
}

func (p *pgSchemas) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, p.base)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// turnCounter is a TCP proxy to the database that counts round trips: the times a client
// connection sends after the server answered (or first), summed over connections.
type turnCounter struct {
	ln    net.Listener
	to    string
	turns atomic.Int64
}

// countTurns starts a proxy to the host:port of rawURL and returns it with rawURL pointed
// at it.
func countTurns(rawURL string) (*turnCounter, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", err
	}
	to := u.Host
	if u.Port() == "" {
		to = net.JoinHostPort(u.Hostname(), "5432")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	t := &turnCounter{ln: ln, to: to}
	go t.serve()
	u.Host = ln.Addr().String()
	return t, u.String(), nil
}

func (t *turnCounter) serve() {
	for {
		c, err := t.ln.Accept()
		if err != nil {
			return
		}
		go t.pipe(c)
	}
}

func (t *turnCounter) pipe(client net.Conn) {
	defer client.Close()
	server, err := net.DialTimeout("tcp", t.to, 5*time.Second)
	if err != nil {
		return
	}
	defer server.Close()
	var answered atomic.Bool // the server spoke last
	answered.Store(true)
	done := make(chan struct{}, 2)
	copyCounting := func(dst, src net.Conn, fromClient bool) {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if fromClient && answered.Swap(false) {
					t.turns.Add(1)
				}
				if !fromClient {
					answered.Store(true)
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go copyCounting(server, client, true)
	go copyCounting(client, server, false)
	<-done
}

func (t *turnCounter) close() { t.ln.Close() }
