package pg_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/jackc/pgx/v5"
)

func exec(t testing.TB, url, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// Replicas starting together on an empty schema: one migrates, the others find it done.
func TestOpenTogetherMigratesOnce(t *testing.T) {
	url := kvtest.URL(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			db, err := pg.Open(context.Background(), url)
			if err != nil {
				t.Error(err)
				return
			}
			db.Close()
		})
	}
	wg.Wait()
	db := open(t, url)
	err := db.View(context.Background(), func(tx kv.Tx) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n, tables int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM compass_schema").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != pg.Migrations() {
		t.Errorf("compass_schema has %d versions, want %d (one a migration)", n, pg.Migrations())
	}
	// In the schema the URL's search_path names, not in public.
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename = 'kv_entries'", db.Schema()).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 1 || !strings.HasPrefix(db.Schema(), "kvtest_") {
		t.Errorf("kv_entries is not in the URL's schema (%q)", db.Schema())
	}
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	url := kvtest.URL(t)
	open(t, url).Close()
	exec(t, url, "INSERT INTO compass_schema (version) VALUES (99)")
	_, err := pg.Open(context.Background(), url)
	if !errors.Is(err, pg.ErrSchemaTooNew) || !strings.Contains(err.Error(), "version 99") || !strings.Contains(err.Error(), fmt.Sprintf("up to %d", pg.Migrations())) {
		t.Errorf("Open on a newer schema = %v, want ErrSchemaTooNew naming both versions", err)
	}
}

func TestOpenRefusesAMissingSchema(t *testing.T) {
	url := kvtest.URL(t)
	url = strings.Replace(url, "search_path=kvtest_", "search_path=nothere_", 1)
	_, err := pg.Open(context.Background(), url)
	if err == nil || !strings.Contains(err.Error(), "search_path") {
		t.Errorf("Open with a missing schema = %v, want an error about the search_path", err)
	}
}

// A search_path whose first schema is missing is refused even when a later one exists
// (PostgreSQL would fall back to it, and the store would land in another schema than the
// URL names: a typo would put a team's data among another's).
func TestOpenRefusesAMissingFirstSchema(t *testing.T) {
	url := kvtest.URL(t)
	i := strings.Index(url, "search_path=") + len("search_path=")
	for _, first := range []string{"nothere,", "%22Nothere%22,%20"} {
		_, err := pg.Open(context.Background(), url[:i]+first+url[i:])
		if err == nil || !strings.Contains(err.Error(), "search_path") {
			t.Errorf("Open with search_path=%s<a schema that exists> = %v, want an error about the search_path", first, err)
		}
	}
	// Quoted, and the default's "$user" first: as PostgreSQL reads them.
	for _, sp := range []string{"%22" + url[i:] + "%22", "%22$user%22,%20" + url[i:]} {
		db, err := pg.Open(context.Background(), url[:i]+sp)
		if err != nil {
			t.Errorf("Open with search_path=%s: %v", sp, err)
			continue
		}
		db.Close()
	}
}

func TestUnreachableDatabase(t *testing.T) {
	kvtest.Postgres(t) // a PostgreSQL test: skipped, or failed in CI, like the others
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	start := time.Now()
	_, err = pg.Open(context.Background(), "postgres://compass:compass@"+addr+"/compass?connect_timeout=5")
	t.Logf("Open on a closed port: %v", err)
	if !errors.Is(err, kv.ErrUnavailable) || !strings.Contains(err.Error(), addr) {
		t.Errorf("Open on a closed port = %v, want ErrUnavailable naming %s", err, addr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Open on a closed port took %v", d)
	}
}

// A transaction waiting on another replica's write lock (here: a writer that does not end)
// gives up at its deadline with ErrUnavailable, and the store works on afterwards.
func TestDeadline(t *testing.T) {
	url := kvtest.URL(t)
	a := open(t, url)
	// 1 s, not less: Open itself (its connection, the migrations' check) runs within it, and
	// took over 300 ms on a machine busy with other tests.
	b := open(t, url, pg.WithTimeout(time.Second))
	release, holding := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- a.Update(context.Background(), func(tx kv.Tx) error {
			bk, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			bk.Get([]byte("x")) // takes the lock: a write transaction reaches the database at its first read
			close(holding)
			<-release
			return bk.Put([]byte("x"), []byte("a"))
		})
	}()
	<-holding
	start := time.Now()
	err := b.Update(context.Background(), func(tx kv.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("b"))
		return err
	})
	t.Logf("the Update behind a writer: %v", err)
	if !errors.Is(err, kv.ErrUnavailable) {
		t.Errorf("an Update behind a writer that doesn't end = %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("it took %v with a 1 s timeout", d)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	err = b.Update(context.Background(), func(tx kv.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("x"), []byte("b")) })
	if err != nil {
		t.Errorf("the Update after: %v", err)
	}
}

// Two replicas (two DBs on one schema) incrementing one counter: no update lost.
func TestTwoReplicasSerialise(t *testing.T) {
	for _, mode := range []string{"lock"} {
		t.Run(mode, func(t *testing.T) {
			url := kvtest.URL(t)
			dbs := []*pg.DB{open(t, url), open(t, url)}
			const each = 25
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					for range each {
						err := dbs[i%2].Update(context.Background(), func(tx kv.Tx) error {
							b, err := tx.CreateBucketIfNotExists([]byte("b"))
							if err != nil {
								return err
							}
							n, _ := strconv.Atoi(string(b.Get([]byte("n"))))
							return b.Put([]byte("n"), []byte(strconv.Itoa(n+1)))
						})
						if err != nil {
							t.Error(err)
						}
					}
				})
			}
			wg.Wait()
			var n int
			dbs[0].View(context.Background(), func(tx kv.Tx) error {
				n, _ = strconv.Atoi(string(tx.Bucket([]byte("b")).Get([]byte("n"))))
				return nil
			})
			if n != 8*each {
				t.Errorf("counter %d, want %d", n, 8*each)
			}
		})
	}
}

// A connection killed under a transaction: that transaction fails with ErrUnavailable,
// the next one works.
func TestConnectionKilled(t *testing.T) {
	url := kvtest.URL(t)
	app := "kvtest_killed_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	db := open(t, url+"&application_name="+app)
	if err := db.Update(context.Background(), func(tx kv.Tx) error {
		for _, name := range []string{"b", "c"} {
			if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	err := db.View(context.Background(), func(tx kv.Tx) error {
		tx.Bucket([]byte("b")).Get([]byte("x")) // the transaction has begun on its connection
		exec(t, url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", app)
		// Not b again: its read found it empty, and a Get of it asks the database nothing
		// now (gaps.go).
		tx.Bucket([]byte("c")).Get([]byte("y"))
		return nil
	})
	t.Logf("the killed View: %v", err)
	if !errors.Is(err, kv.ErrUnavailable) || !strings.Contains(err.Error(), "127.0.0.1:5432") {
		t.Errorf("a View whose connection was killed = %v, want ErrUnavailable naming the database", err)
	}
	if err := db.View(context.Background(), func(tx kv.Tx) error { tx.Bucket([]byte("b")).Get([]byte("x")); return nil }); err != nil {
		t.Errorf("the View after: %v", err)
	}
}

func TestChanges(t *testing.T) {
	url := kvtest.URL(t)
	a, b := open(t, url), open(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	ch := a.Changes(ctx)
	// The LISTEN connection starts in the background, and signals once it listens: no
	// commit was made since a and b were opened, so no other signal is on its way.
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no signal 10 s after Changes: the LISTEN connection was not made")
	}
	// A failed write sends nothing.
	no := errors.New("no")
	if err := b.Update(context.Background(), func(tx kv.Tx) error {
		bk, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		bk.Put([]byte("k"), []byte("v"))
		return no
	}); !errors.Is(err, no) {
		t.Fatalf("the failed write = %v, want its fn's error", err)
	}
	select {
	case <-ch:
		t.Error("a signal for a write that was rolled back")
	case <-time.After(300 * time.Millisecond):
	}
	// A commit, on another replica, does.
	if err := b.Update(context.Background(), func(tx kv.Tx) error {
		bk, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		return bk.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no signal on one replica 10 s after another committed")
	}
	cancel()
	select {
	case _, ok := <-ch:
		for ok {
			_, ok = <-ch
		}
	case <-time.After(5 * time.Second):
		t.Error("Changes' channel not closed after its context ended")
	}
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func TestPoolSize(t *testing.T) {
	url := kvtest.URL(t)
	if got, want := open(t, url).PoolSize(), max(4, 2*runtime.GOMAXPROCS(0)); got != want {
		t.Errorf("default pool size %d, want %d", got, want)
	}
	if got := open(t, url+"&pool_max_conns=7").PoolSize(); got != 7 {
		t.Errorf("pool size with pool_max_conns=7: %d", got)
	}
}

// Readers are not left without a connection by writers queued on the lock.
func TestWritersLeaveReadersAConnection(t *testing.T) {
	db := open(t, kvtest.URL(t)+"&pool_max_conns=2")
	if err := db.Update(context.Background(), func(tx kv.Tx) error { _, err := tx.CreateBucketIfNotExists([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	release, holding := make(chan struct{}), make(chan struct{}, 4)
	var started, wg sync.WaitGroup
	started.Add(4)
	for range 4 {
		wg.Go(func() {
			started.Done()
			db.Update(context.Background(), func(tx kv.Tx) error {
				tx.Bucket([]byte("b")).Get([]byte("x")) // the lock is this writer's
				holding <- struct{}{}
				<-release
				return nil
			})
		})
	}
	// One writer holds the lock; the three others have called Update, and wait for it.
	started.Wait()
	<-holding
	done := make(chan error, 1)
	go func() {
		done <- db.View(context.Background(), func(tx kv.Tx) error { tx.Bucket([]byte("b")).Get([]byte("x")); return nil })
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Error("a View waited for writers queued on the lock")
	}
	close(release)
	wg.Wait()
}

// A commit of more than 64 MiB of values is sent in several statements (PostgreSQL takes
// at most 1 GB in one message): every value arrives.
func TestCommitInSeveralStatements(t *testing.T) {
	db := open(t, kvtest.URL(t))
	const n, size = 10, 8 << 20
	err := db.Update(context.Background(), func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		for i := range n {
			if err := b.Put([]byte{byte(i)}, bytes.Repeat([]byte{byte(i)}, size)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket([]byte("b"))
		for i := range n {
			if v := b.Get([]byte{byte(i)}); len(v) != size || v[0] != byte(i) || v[size-1] != byte(i) {
				t.Errorf("value %d: %d bytes", i, len(v))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An Update that gave up at its deadline while waiting for the write lock is not applied
// later, when the lock comes free: its caller was told it failed, and may well write again.
func TestTimedOutWriteNotAppliedLater(t *testing.T) {
	url := kvtest.URL(t)
	a := open(t, url)
	// 1 s, not less: Open itself (its connection, the migrations' check) runs within it, and
	// took over 300 ms on a machine busy with other tests.
	b := open(t, url, pg.WithTimeout(time.Second))
	if err := a.Update(context.Background(), func(tx kv.Tx) error { _, err := tx.CreateBucketIfNotExists([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	release, holding := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- a.Update(context.Background(), func(tx kv.Tx) error {
			tx.Bucket([]byte("b")).Get([]byte("x")) // takes the lock
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	// Only writes: they go to the database with the lock's request, in one round trip.
	err := b.Update(context.Background(), func(tx kv.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("late"), []byte("b")) })
	if !errors.Is(err, kv.ErrUnavailable) {
		t.Fatalf("an Update behind a writer that doesn't end = %v, want ErrUnavailable", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A write left waiting on the lock would have it before one asked for after it (the
	// lock's waiters are served in turn): once another write has had the lock, it would
	// have been committed.
	if err := a.Update(context.Background(), func(tx kv.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("after"), []byte("a")) }); err != nil {
		t.Fatal(err)
	}
	var late []byte
	if err := a.View(context.Background(), func(tx kv.Tx) error { late = tx.Bucket([]byte("b")).Get([]byte("late")); return nil }); err != nil {
		t.Fatal(err)
	}
	if late != nil {
		t.Errorf("an Update that returned %v was committed once the lock came free", err)
	}
}

// A writer that stops talking to the database while holding the write lock (a replica
// frozen, or cut off from the network without its connection being closed) does not hold
// every replica's writes past its own deadline: the database ends its session then.
func TestStalledWriterLetsGoOfTheLock(t *testing.T) {
	url := kvtest.URL(t)
	stalled := open(t, url, pg.WithTimeout(500*time.Millisecond))
	other := open(t, url, pg.WithTimeout(8*time.Second))
	if err := other.Update(context.Background(), func(tx kv.Tx) error { _, err := tx.CreateBucketIfNotExists([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	release, holding := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- stalled.Update(context.Background(), func(tx kv.Tx) error {
			b := tx.Bucket([]byte("b"))
			b.Get([]byte("x")) // takes the lock
			close(holding)
			<-release // says nothing more to the database, and keeps its connection
			return b.Put([]byte("stalled"), []byte("1"))
		})
	}()
	defer func() {
		close(release)
		if err := <-done; !errors.Is(err, kv.ErrUnavailable) {
			t.Errorf("the stalled writer, whose session was ended, returned %v, want ErrUnavailable", err)
		}
	}()
	<-holding
	start := time.Now()
	if err := other.Update(context.Background(), func(tx kv.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("other"), []byte("1")) }); err != nil {
		t.Fatalf("a writer behind one that stalled with the lock: %v (after %v)", err, time.Since(start))
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("a writer behind one that stalled with the lock waited %v; the stalled one's deadline is 500 ms", d)
	}
}

// A commit by another replica right after Changes is called is signalled, even when it
// lands before the listening connection is up.
func TestChangesFromTheStart(t *testing.T) {
	url := kvtest.URL(t)
	a, b := open(t, url), open(t, url)
	if err := b.Update(context.Background(), func(tx kv.Tx) error { _, err := tx.CreateBucketIfNotExists([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := a.Changes(ctx)
	if err := b.Update(context.Background(), func(tx kv.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(3 * time.Second):
		t.Error("no signal for a commit made just after Changes was called")
	}
}

// A deadline longer than PostgreSQL's timeouts can say (copy --timeout 720h) still writes.
func TestLongTimeout(t *testing.T) {
	db := open(t, kvtest.URL(t), pg.WithTimeout(30*24*time.Hour))
	if err := db.Update(context.Background(), func(tx kv.Tx) error { _, err := tx.CreateBucketIfNotExists([]byte("b")); return err }); err != nil {
		t.Errorf("an Update with a 30-day timeout: %v", err)
	}
}

// Data the database reports corrupted is kv.ErrDamaged, as a bbolt file whose pages fault
// is: the stores above tell the person to restore a backup, whichever the store. The
// database raises it here from a trigger on the entries' table (data_corrupted, XX001),
// as it would on reading a damaged page; a read that doesn't touch the table still works.
func TestCorruptedDataIsDamaged(t *testing.T) {
	url := kvtest.URL(t)
	db := open(t, url)
	put := func(k string) error {
		return db.Update(context.Background(), func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("docs"))
			if err != nil {
				return err
			}
			return b.Put([]byte(k), []byte("v"))
		})
	}
	if err := put("before"); err != nil {
		t.Fatal(err)
	}
	exec(t, url, `CREATE FUNCTION corrupted() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'invalid page in block 7 of relation base/1/2' USING ERRCODE = 'data_corrupted'; END $$`)
	exec(t, url, `CREATE TRIGGER corrupted BEFORE INSERT OR UPDATE ON kv_entries FOR EACH ROW EXECUTE FUNCTION corrupted()`)
	err := put("after")
	t.Logf("a write on corrupted data: %v", err)
	if !errors.Is(err, kv.ErrDamaged) || errors.Is(err, kv.ErrUnavailable) || !strings.Contains(err.Error(), "backup") {
		t.Errorf("a write on corrupted data = %v, want kv.ErrDamaged saying to restore a backup", err)
	}
	var pe interface{ SQLState() string }
	if !errors.As(err, &pe) || pe.SQLState() != "XX001" {
		t.Errorf("the error doesn't keep the database's own (XX001): %v", err)
	}
	if err := db.View(context.Background(), func(tx kv.Tx) error {
		if tx.Bucket([]byte("docs")).Get([]byte("before")) == nil {
			t.Error("the value written before is gone")
		}
		return nil
	}); err != nil {
		t.Errorf("a read after: %v", err)
	}
}
