package kvtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// PGBin is where Debian's PostgreSQL 15 keeps initdb and pg_ctl.
const PGBin = "/usr/lib/postgresql/15/bin"

// Cluster is a PostgreSQL cluster of one test's own, for tests that stop or restart the
// database: the shared one must never be.
type Cluster struct {
	URL  string // postgres://postgres@127.0.0.1:port/postgres
	dir  string
	port int
	t    testing.TB
}

// NewCluster makes and starts a private cluster on a free port, stopped and removed when t
// ends. It runs initdb and pg_ctl as the postgres user (initdb refuses root), so it needs
// root and Debian's postgresql; without them t is skipped, or fails when CI=true. Like
// every PostgreSQL test, it runs only when a database is named (Postgres).
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	Postgres(t) // skips (or fails in CI) like the other PostgreSQL tests
	pgUser, err := user.Lookup("postgres")
	missing := ""
	switch {
	case os.Geteuid() != 0:
		missing = "root (to run initdb as the postgres user)"
	case err != nil:
		missing = "the postgres user"
	default:
		if _, err := os.Stat(filepath.Join(PGBin, "initdb")); err != nil {
			missing = PGBin + "/initdb"
		}
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a private PostgreSQL cluster needs %s", missing)
		}
		t.Skipf("a private PostgreSQL cluster needs %s", missing)
	}
	dir, err := os.MkdirTemp("", "compass-pg-")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(pgUser.Uid)
	gid, _ := strconv.Atoi(pgUser.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c := &Cluster{URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres", port), dir: dir, port: port, t: t}
	t.Cleanup(func() {
		c.pgctl("stop", "-m", "immediate")
		os.RemoveAll(dir)
	})
	if out, err := c.asPostgres(filepath.Join(PGBin, "initdb"), "-D", c.data(), "-A", "trust", "-U", "postgres", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	c.Start()
	return c
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) asPostgres(name string, args ...string) *exec.Cmd {
	return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
}

func (c *Cluster) pgctl(args ...string) error {
	args = append([]string{"-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-w", "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", c.port, c.dir)}, args...)
	out, err := c.asPostgres(filepath.Join(PGBin, "pg_ctl"), args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %v: %v\n%s", args, err, out)
	}
	return nil
}

// Start starts the cluster and waits until it takes connections.
func (c *Cluster) Start() {
	c.t.Helper()
	if err := c.pgctl("start"); err != nil {
		c.t.Fatal(err)
	}
}

// Stop stops it (fast: open connections are closed).
func (c *Cluster) Stop() {
	c.t.Helper()
	if err := c.pgctl("stop", "-m", "fast"); err != nil {
		c.t.Fatal(err)
	}
}
