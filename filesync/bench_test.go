//go:build unix

package filesync_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// The costs of issue 35: a vault of benchFiles files of about 7 KB in 100 folders
// (COMPASS_SYNC_FILES for another count). docs/PERFORMANCE.md has the figures, from
//
//	go test -run '^$' -bench 'Sync|BulkCreate' -benchtime 1x -timeout 30m ./filesync
func benchFiles(b *testing.B) int {
	if v := os.Getenv("COMPASS_SYNC_FILES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			b.Fatalf("COMPASS_SYNC_FILES=%q: a count of at least 100", v)
		}
		return n
	}
	return 10000
}

// noteText is a note of about 7 KB: 100 lines of 70 characters.
func noteText(i int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# Note %d\n", i)
	for l := range 100 {
		fmt.Fprintf(&sb, "line %03d of note %06d: %s\n", l, i, strings.Repeat("x", 40))
	}
	return sb.String()
}

func vault(b *testing.B, n int) string {
	dir := filepath.Join(b.TempDir(), "vault")
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("folder %02d", i%100), fmt.Sprintf("note %05d.md", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(noteText(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func newSync(s *docstore.Store, dir string) *filesync.Sync {
	return &filesync.Sync{Store: s, Dir: dir, By: docstore.Author{By: "agent:sync", For: "person:ana"}}
}

// BenchmarkBulkCreate is the yardstick: the same documents made straight into an empty
// space, 8 at once so that the store groups their commits, as the sync makes them.
func BenchmarkBulkCreate(b *testing.B) {
	n := benchFiles(b)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		s := docstore.New(kvtest.Open(b), "personal")
		b.StartTimer()
		var wg sync.WaitGroup
		next := make(chan int)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					if _, err := s.Create(ctx, fmt.Sprintf("folder %02d/note %05d", i%100, i), noteText(i), docstore.KindSave, docstore.Author{By: "agent:sync", For: "person:ana"}); err != nil {
						b.Error(err)
					}
				}
			}()
		}
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	b.ReportMetric(float64(n), "files")
}

// BenchmarkSyncFirst is the first sync of the vault into an empty space.
func BenchmarkSyncFirst(b *testing.B) {
	n := benchFiles(b)
	dir := vault(b, n)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		os.RemoveAll(filepath.Join(dir, ".compass"))
		s := docstore.New(kvtest.Open(b), "personal")
		b.StartTimer()
		rep, err := newSync(s, dir).Once(ctx)
		if err != nil || rep.Created != n {
			b.Fatalf("%+v %v", rep, err)
		}
	}
	b.ReportMetric(float64(n), "files")
}

// BenchmarkSyncNoChange is a pass over the synced vault with nothing changed: the
// reconcile every few minutes and at start.
func BenchmarkSyncNoChange(b *testing.B) {
	n := benchFiles(b)
	dir := vault(b, n)
	ctx := context.Background()
	y := newSync(docstore.New(kvtest.Open(b), "personal"), dir)
	if _, err := y.Once(ctx); err != nil {
		b.Fatal(err)
	}
	cpu := cpuTime()
	for b.Loop() {
		if rep, err := y.Once(ctx); err != nil || rep.Changed() {
			b.Fatalf("%+v %v", rep, err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(n), "files")
}

// BenchmarkSyncOneEdit is a pass that carries one file's edit into the space (in the
// continuous mode the watcher's settle time, 300 ms, comes before it).
func BenchmarkSyncOneEdit(b *testing.B) {
	n := benchFiles(b)
	dir := vault(b, n)
	ctx := context.Background()
	y := newSync(docstore.New(kvtest.Open(b), "personal"), dir)
	if _, err := y.Once(ctx); err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "folder 07", "note 00007.md")
	i := 0
	cpu := cpuTime()
	for b.Loop() {
		b.StopTimer()
		i++
		os.WriteFile(p, []byte(noteText(7)+fmt.Sprintf("edit %d\n", i)), 0o644)
		b.StartTimer()
		if rep, err := y.Once(ctx); err != nil || rep.Saved != 1 {
			b.Fatalf("%+v %v", rep, err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op") // the edits' writes too: small
	b.ReportMetric(float64(n), "files")
}

// cpuTime is the process's user and system CPU time so far: on a machine shared with
// others, what a pass costs is clearer than how long it waited.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSyncNoChangeOverHTTP is BenchmarkSyncNoChange against a real
// `compass-mcp serve --http` on 127.0.0.1 with a person's token: one request a pass (the
// listing), which the server answers from the space's document records.
//
//	COMPASS_SYNC_FILES=1000 go test -run '^$' -bench SyncNoChangeOverHTTP -benchtime 10x ./filesync
func BenchmarkSyncNoChangeOverHTTP(b *testing.B) {
	n := benchFiles(b)
	dir := vault(b, n)
	ctx := context.Background()
	tm := newTeam(b)
	asked := &counting{}
	remote := &filesync.Remote{URL: tm.url, Token: tm.token("--for", "ana"), Space: "personal", Client: &http.Client{Transport: asked}}
	y := &filesync.Sync{Space: remote, Dir: dir}
	if rep, err := y.Once(ctx); err != nil || rep.Created != n {
		b.Fatalf("%+v %v", rep, err)
	}
	asked.n.Store(0)
	cpu, served := cpuTime(), procCPU(tm.pid)
	for b.Loop() {
		if rep, err := y.Once(ctx); err != nil || rep.Changed() {
			b.Fatalf("%+v %v", rep, err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "client-cpu-ms/op")
	b.ReportMetric(float64(procCPU(tm.pid)-served)/float64(b.N)/1e6, "server-cpu-ms/op")
	b.ReportMetric(float64(asked.n.Load())/float64(b.N), "requests/op")
	b.ReportMetric(float64(n), "files")
}

// procCPU is the user and system CPU time process pid has used, from /proc (Linux; 0
// elsewhere), in clock ticks of 10 ms.
func procCPU(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name (in parentheses, which may hold spaces): utime
	// and stime are the 12th and 13th.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(u+st) * 10 * time.Millisecond
}
