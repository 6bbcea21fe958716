package main

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clients is how many MCP clients talk to the HTTP server at once.
const clients = 16

// httpLoad is how much one phase of the HTTP load does: each client makes at most perClient
// calls, and the phase stops at the deadline whatever is left.
type httpLoad struct {
	reads, writes int
	deadline      time.Duration
}

// phaseCalls bounds a client's calls in a phase that -phase times.
const phaseCalls = 100_000

func (o *options) httpLoad() httpLoad {
	if o.phase > 0 {
		return httpLoad{reads: phaseCalls, writes: phaseCalls, deadline: o.phase}
	}
	if o.quick {
		return httpLoad{reads: 5, writes: 5, deadline: 5 * time.Second}
	}
	return httpLoad{reads: 250, writes: 60, deadline: 10 * time.Second}
}

// phaseResult is one phase's calls: how many, over how long, and their latencies.
type phaseResult struct {
	calls   int
	elapsed time.Duration
}

// runPhase has every session make up to n calls of do, all at once, and returns how many
// were made and over how long; latencies go to lat. Past the deadline no call starts, but
// those in flight finish: a write cut off there may still commit, and the rigs count on
// knowing each of their writes' fate (a shared line's next edit names its last).
func runPhase(ctx context.Context, sessions []*mcp.ClientSession, n int, deadline time.Duration, lat *series, run int, do func(ctx context.Context, client, i int, cs *mcp.ClientSession) error) (phaseResult, error) {
	return runPaced(ctx, sessions, n, deadline, 0, lat, run, do)
}

// runPaced is runPhase with the calls paced: with every > 0 the sessions together start a
// call every that long (client c's i-th call is due at start + (i×clients + c)×every),
// each call's latency counted from when it was due, not from when it started. A server
// that falls behind the pace is charged its queue (no coordinated omission): a call due
// while the one before it was still running waits, and its wait counts. With every == 0,
// each session starts its next call as soon as the last one answers (runPhase).
func runPaced(ctx context.Context, sessions []*mcp.ClientSession, n int, deadline, every time.Duration, lat *series, run int, do func(ctx context.Context, client, i int, cs *mcp.ClientSession) error) (phaseResult, error) {
	stopped, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	ctx, fail := context.WithCancel(ctx)
	defer fail()
	var (
		mu    sync.Mutex
		calls int
		first error
		wg    sync.WaitGroup
	)
	start := time.Now()
	for c, cs := range sessions {
		wg.Go(func() {
			for i := range n {
				if stopped.Err() != nil || ctx.Err() != nil {
					return
				}
				t := time.Now()
				if every > 0 {
					due := start.Add(time.Duration(i*len(sessions)+c) * every)
					if wait := time.Until(due); wait > 0 {
						select {
						case <-time.After(wait):
						case <-stopped.Done():
							return
						}
					}
					t = due
				}
				err := do(ctx, c, i, cs)
				d := time.Since(t)
				mu.Lock()
				if err != nil {
					if first == nil && ctx.Err() == nil {
						first = err
					}
					mu.Unlock()
					fail()
					return
				}
				calls++
				lat.add(run, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return phaseResult{calls: calls, elapsed: time.Since(start)}, first
}

// httpRig is one server or more (replicas of one store) serving streamable HTTP, with a
// document and a session per client; the clients are spread over the servers in turn.
type httpRig struct {
	srv      *httpServer   // the first server
	srvs     []*httpServer // all of them
	hc       *http.Client
	sessions []*mcp.ClientSession
	docs     []string // each client's document
	counters []int    // the number on each document's counter line
}

// startRig starts a server of each cmd, one after the other (so that replicas don't race
// at start more than a deployment's would), and connects the clients, client c to server
// c mod len(cmds).
func startRig(ctx context.Context, cmds ...*exec.Cmd) (*httpRig, error) {
	rig := &httpRig{hc: httpClient()}
	for _, cmd := range cmds {
		srv, err := startHTTP(cmd)
		if err != nil {
			rig.close()
			return nil, err
		}
		rig.srvs = append(rig.srvs, srv)
	}
	rig.srv = rig.srvs[0]
	for c := range clients {
		srv := rig.srvs[c%len(rig.srvs)]
		cs, err := connectHTTP(ctx, srv.url, rig.hc)
		if err != nil {
			rig.close()
			return nil, fmt.Errorf("connecting client %d: %w\n%s", c, err, srv.stderr)
		}
		rig.sessions = append(rig.sessions, cs)
		text := fmt.Sprintf("counter: 0\n\n%s", join(lines(40, uint64(100+c))))
		answer, err := call(ctx, cs, "write_document", map[string]any{"title": fmt.Sprintf("Note of client %d", c), "text": text})
		if err != nil {
			rig.close()
			return nil, err
		}
		m := idPattern.FindStringSubmatch(answer)
		if m == nil {
			rig.close()
			return nil, fmt.Errorf("write_document answered without a link: %q", answer)
		}
		rig.docs = append(rig.docs, m[1])
	}
	rig.counters = make([]int, clients)
	return rig, nil
}

func (rig *httpRig) read(ctx context.Context, c, _ int, cs *mcp.ClientSession) error {
	got, err := call(ctx, cs, "read_document", map[string]any{"document": rig.docs[c]})
	if err == nil && !strings.Contains(got, "counter: ") {
		err = fmt.Errorf("read_document gave another text: %.80q", got)
	}
	return err
}

// write is one durable one-line edit of the client's own document.
func (rig *httpRig) write(ctx context.Context, c, _ int, cs *mcp.ClientSession) error {
	n := rig.counters[c]
	_, err := call(ctx, cs, "edit_document", map[string]any{"document": rig.docs[c], "old": fmt.Sprintf("counter: %d\n", n), "new": fmt.Sprintf("counter: %d\n", n+1)})
	if err == nil {
		rig.counters[c] = n + 1
	}
	return err
}

func (rig *httpRig) close() error {
	for _, cs := range rig.sessions {
		cs.Close()
	}
	var first error
	for _, srv := range rig.srvs {
		if err := srv.stop(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// stderr is the servers' last words, for an error message.
func (rig *httpRig) stderr() string {
	var b strings.Builder
	for i, srv := range rig.srvs {
		fmt.Fprintf(&b, "server %d:\n%s", i+1, srv.stderr)
	}
	return b.String()
}

// measureHTTP is items 2 and 6: 16 clients over streamable HTTP reading, then writing, and
// the server's memory idle and under that load.
func measureHTTP(ctx context.Context, o *options, bins binaries, r *report) error {
	cmd := exec.Command(bins.compass, "serve", "--http", "127.0.0.1:0")
	cmd.Env = compassEnv(filepath.Join(o.work, "http.db"))
	cmd.Env = append(cmd.Env, "COMPASS_LOG=info") // the URL is logged at info
	rig, err := startRig(ctx, cmd)
	if err != nil {
		return err
	}
	pid := rig.srv.cmd.Process.Pid
	time.Sleep(500 * time.Millisecond)
	idle, err := memoryOf(pid)
	if err != nil {
		return err
	}
	load := o.httpLoad()
	sampler := sampleRSS(pid)
	readLat, writeLat := newSeries(o.runs), newSeries(o.runs)
	var readRates, writeRates []float64
	var reads, writes int
	for run := range o.runs {
		res, err := runPhase(ctx, rig.sessions, load.reads, load.deadline, readLat, run, rig.read)
		if err != nil {
			rig.close()
			return fmt.Errorf("reads: %w\n%s", err, rig.srv.stderr)
		}
		reads += res.calls
		readRates = append(readRates, float64(res.calls)/res.elapsed.Seconds())
		res, err = runPhase(ctx, rig.sessions, load.writes, load.deadline, writeLat, run, rig.write)
		if err != nil {
			rig.close()
			return fmt.Errorf("writes: %w\n%s", err, rig.srv.stderr)
		}
		writes += res.calls
		writeRates = append(writeRates, float64(res.calls)/res.elapsed.Seconds())
	}
	peakRSS := sampler.stop()
	after, _ := memoryOf(pid)
	if err := rig.close(); err != nil {
		return fmt.Errorf("stopping the HTTP server: %w\n%s", err, rig.srv.stderr)
	}

	rs, ws := readLat.summary(), writeLat.summary()
	r.noted("HTTP reads", rs)
	r.noted("HTTP writes", ws)
	readRate, writeRate := medianOf(readRates), medianOf(writeRates)
	b := r.section("2. Streamable HTTP, 16 clients")
	fmt.Fprintf(b, "`compass-mcp serve --http 127.0.0.1:0`; %d go-sdk client sessions over one keep-alive HTTP client, each with its own\n", clients)
	b.WriteString("document of about 2 KB. A run is a read phase (every client calls `read_document` of its document as fast as answers\n")
	b.WriteString("come) and then a write phase (every client calls `edit_document` on one line of its document: each a new version,\n")
	fmt.Fprintf(b, "committed with fsync before the answer). Each client makes at most %d reads and %d writes a run, and a phase\n", load.reads, load.writes)
	fmt.Fprintf(b, "stops after %s whatever is left. Throughput is calls / the phase's wall time; the median of %d runs.\n\n", load.deadline, o.runs)
	b.WriteString("| phase | calls | calls/s (median run) | runs (calls/s) |\n|---|---|---|---|\n")
	fmt.Fprintf(b, "| read_document | %d | %.0f | %s |\n", reads, readRate, rates(readRates))
	fmt.Fprintf(b, "| edit_document | %d | %.0f | %s |\n\n", writes, writeRate, rates(writeRates))
	latencyTable(b, []latencyRow{{"read_document, 16 at once", rs}, {"edit_document, 16 at once", ws}})

	m := r.section("6. Memory of the server")
	m.WriteString("Resident memory of the `compass-mcp serve --http` process above, from /proc/<pid>/status:\n\n")
	fmt.Fprintf(m, "- idle (its %d documents made, %d sessions open, 0.5 s without calls): VmRSS %s\n", clients, clients, mib(idle.rss))
	fmt.Fprintf(m, "- under the load of section 2: highest VmRSS sampled every 20 ms %s; VmHWM at the end %s\n", mib(peakRSS), mib(after.hwm))
	fmt.Fprintf(m, "- after the load: VmRSS %s\n", mib(after.rss))

	r.target(target{"2", "reads/s, HTTP, 16 clients", fmt.Sprintf("%.0f/s (p90 %s)", readRate, ms(rs.p90)), "", "≥ 2,000/s", verdict(readRate >= 2000, "see section 2")})
	r.target(target{"2", "durable writes/s, HTTP, 16 clients", fmt.Sprintf("%.0f/s (p90 %s)", writeRate, ms(ws.p90)), "", "≥ 1,000/s", verdict(writeRate >= 1000, "see section 2")})
	r.target(target{"6", "server RSS idle / under HTTP load", fmt.Sprintf("%s / %s", mib(idle.rss), mib(max(peakRSS, after.hwm))), "", "(reported)", ""})
	return nil
}

func rates(rs []float64) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprintf("%.0f", r)
	}
	return strings.Join(s, ", ")
}
