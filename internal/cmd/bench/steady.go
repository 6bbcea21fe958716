package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tableStats is what PostgreSQL says of the kv_entries table of one schema: how many of its
// rows are dead, how its updates went, and how big it and its index are.
type tableStats struct {
	live, dead, upd, hot int64
	heap, index          int64 // bytes
	vacuums              int64 // autovacuums so far
}

func (s tableStats) String() string {
	hot := 0.0
	if s.upd > 0 {
		hot = 100 * float64(s.hot) / float64(s.upd)
	}
	return fmt.Sprintf("%d live, %d dead rows, %.0f%% of %d updates HOT, table %s, index %s, %d autovacuums",
		s.live, s.dead, hot, s.upd, mib(s.heap), mib(s.index), s.vacuums)
}

// readTableStats reads tableStats of kv_entries in the first schema of rawURL's search_path.
// The counts are the statistics system's, which backends report within about a second.
func readTableStats(ctx context.Context, rawURL string) (tableStats, error) {
	conn, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		return tableStats{}, err
	}
	defer conn.Close(ctx)
	var s tableStats
	err = conn.QueryRow(ctx, `SELECT n_live_tup, n_dead_tup, n_tup_upd, n_tup_hot_upd,
			pg_relation_size(relid), pg_indexes_size(relid), autovacuum_count
		FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = 'kv_entries'`).
		Scan(&s.live, &s.dead, &s.upd, &s.hot, &s.heap, &s.index, &s.vacuums)
	return s, err
}

// runNote is what was seen at the end of one run of the HTTP phases: the machine's load and,
// on PostgreSQL, the table's state.
type runNote struct {
	rates []float64       // each phase's calls/s
	p99   []time.Duration // each phase's 99th percentile of latency
	cpu   []cpuTotals     // each phase's CPU a call
	load  string
	stats string
}

// noteRun logs one run's rates with the load and the table's state, and returns them.
func noteRun(ctx context.Context, setup string, run int, data string, rs []float64, p99 []time.Duration, cpu []cpuTotals) runNote {
	n := runNote{rates: rs, p99: p99, cpu: cpu, load: loadSample("").avg}
	if strings.HasPrefix(data, "postgres") {
		if s, err := readTableStats(ctx, data); err != nil {
			n.stats = "(stats: " + err.Error() + ")"
		} else {
			n.stats = s.String()
		}
	}
	log.Printf("%s, run %d: %s calls/s; p99 %s; CPU a call %s; load %s; %s", setup, run+1, rates(rs), durations(p99), cpuPerCall(cpu), n.load, n.stats)
	return n
}

// durations shows latencies in milliseconds.
func durations(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = ms(d)
	}
	return strings.Join(s, ", ")
}

// cpuPerCall shows each phase's CPU a call, the servers' + the database's, in µs.
func cpuPerCall(cpu []cpuTotals) string {
	s := make([]string, len(cpu))
	for i, c := range cpu {
		s[i] = fmt.Sprintf("%d+%d µs", c.server.Microseconds(), c.db.Microseconds())
		if c.client > 0 {
			s[i] += fmt.Sprintf(" (clients %d µs)", c.client.Microseconds())
		}
		if c.blocks > 0 {
			s[i] += fmt.Sprintf(", %d buffers", c.blocks)
		}
		s[i] += fmt.Sprintf(", others %.0f%%, stolen %.0f%%", 100*c.others, 100*c.stolen)
		if c.yard > 0 {
			s[i] += fmt.Sprintf(", yardstick %d µs", c.yard.Microseconds())
		}
	}
	return strings.Join(s, ", ")
}

// drift is how the last run's rate compares to the first's, as a signed percentage.
func drift(rs []float64) string {
	if len(rs) < 2 || rs[0] == 0 {
		return "–"
	}
	return fmt.Sprintf("%+.0f%%", 100*(rs[len(rs)-1]-rs[0])/rs[0])
}

// writeRunByRun writes the runs of each setup that kept notes: each phase's calls/s, the
// load, and the table's state after the run.
func writeRunByRun(b *strings.Builder, names []string, phases []string, notes [][]runNote) {
	for si, ns := range notes {
		if len(ns) == 0 {
			continue
		}
		fmt.Fprintf(b, "Run by run, %s: calls/s of each phase, and in brackets its CPU a call, the servers' + PostgreSQL's backends'\n", names[si])
		b.WriteString("(from /proc, in 10 ms ticks: less moved by other work than calls/s) and, on PostgreSQL, the buffers its queries read\n")
		b.WriteString("a call (hit or not: the work itself, which the machine's load doesn't move); p99; the load average and kv_entries after the run.\n\n")
		b.WriteString("| run | reads | own writes | shared writes | mixed | load | kv_entries |\n|---|---|---|---|---|---|---|\n")
		for run, n := range ns {
			fmt.Fprintf(b, "| %d |", run+1)
			for pi, r := range n.rates {
				fmt.Fprintf(b, " %.0f, p99 %s (%s) |", r, ms(n.p99[pi]), cpuPerCall(n.cpu[pi:pi+1]))
			}
			fmt.Fprintf(b, " %s | %s |\n", n.load, n.stats)
		}
		b.WriteString("| last ÷ first |")
		for pi := range phases {
			col := make([]float64, len(ns))
			for run, n := range ns {
				col[run] = n.rates[pi]
			}
			fmt.Fprintf(b, " %s |", drift(col))
		}
		b.WriteString(" | |\n\n")
	}
}

// writeRatios tells a trend from the machine's noise, for each setup after the first (the
// reference: bbolt when it was run): in each run, the setup's calls/s and p99 divided by the
// reference's in the same run, whose phases ran just before on the same machine. What the
// machine does to both cancels in the ratio; what grows in one setup only stays. The slope
// is a least-squares line through the ratios, as the change it makes from the first run to
// the last, in percent of the ratios' mean.
func writeRatios(b *strings.Builder, names []string, phases []string, notes [][]runNote) {
	if len(notes) < 2 || len(notes[0]) < 2 {
		return
	}
	for si := 1; si < len(notes); si++ {
		fmt.Fprintf(b, "Ratio to %s, run by run: %s's calls/s ÷ %s's in the same run (and p99 ÷ p99). Trend: a least-squares line\n", names[0], names[si], names[0])
		b.WriteString("through the ratios, its change from the first run to the last in % of their mean; last ÷ first of the setup alone beside it.\n\n")
		b.WriteString("| phase | calls/s ratio, each run | trend of the ratio | calls/s last ÷ first | p99 ratio, each run | trend of the ratio | p99 last ÷ first |\n|---|---|---|---|---|---|---|\n")
		for pi := range phases {
			var rate, p99, ownRate, ownP99 []float64
			for run, n := range notes[si] {
				ref := notes[0][run]
				rate = append(rate, n.rates[pi]/ref.rates[pi])
				p99 = append(p99, float64(n.p99[pi])/float64(ref.p99[pi]))
				ownRate = append(ownRate, n.rates[pi])
				ownP99 = append(ownP99, float64(n.p99[pi]))
			}
			fmt.Fprintf(b, "| %s | %s | %+.0f%% | %s | %s | %+.0f%% | %s |\n", phaseShort[pi], ratios(rate), 100*trend(rate), drift(ownRate), ratios(p99), 100*trend(p99), drift(ownP99))
		}
		b.WriteString("\n")
	}
}

// writeGauge tells a trend in what a call costs from the machine's speed, for each setup
// that ran twice or more: in each run, the servers' and the database's CPU a call divided by
// the clients' (cpuTotals.client), which the same process measured over the same calls. On a
// shared machine a core's speed moves by ±15% from one minute to the next (docs/
// PERFORMANCE.md, section 11), and calls/s and every process's CPU a call with it; the
// clients' work a call stays the same, so the ratio moves only with what a call costs the
// servers and the database.
func writeGauge(b *strings.Builder, names []string, notes [][]runNote) {
	wrote := false
	for si, ns := range notes {
		if len(ns) < 2 || len(ns[0].cpu) == 0 || ns[0].cpu[0].client == 0 {
			continue
		}
		if !wrote {
			b.WriteString("CPU a call against the clients', run by run: (the servers' + the database's CPU a call) ÷ the clients' CPU a call in the\n")
			b.WriteString("same phase, whose work a call is the same every run (a gauge of the machine the calls met). Trend: a least-squares line through\n")
			b.WriteString("the ratios, its change from the first run to the last in % of their mean.\n\n")
			b.WriteString("| setup | phase | ratio, each run | trend |\n|---|---|---|---|\n")
			wrote = true
		}
		for pi := range ns[0].cpu {
			var rs []float64
			for _, n := range ns {
				if c := n.cpu[pi]; c.client > 0 {
					rs = append(rs, float64(c.server+c.db)/float64(c.client))
				}
			}
			fmt.Fprintf(b, "| %s | %s | %s | %+.0f%% |\n", names[si], phaseShort[pi], ratios(rs), 100*trend(rs))
		}
	}
	if wrote {
		b.WriteString("\n")
	}
}

// phaseShort names the HTTP replicas' phases in a narrow column.
var phaseShort = []string{"reads", "own writes", "shared writes", "mixed"}

func ratios(rs []float64) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprintf("%.2f", r)
	}
	return strings.Join(s, ", ")
}

// trend is the change a least-squares line through ys (at x = 0, 1, ...) makes from the
// first x to the last, as a fraction of the ys' mean.
func trend(ys []float64) float64 {
	n := float64(len(ys))
	if n < 2 {
		return 0
	}
	var sx, sy, sxy, sxx float64
	for i, y := range ys {
		x := float64(i)
		sx, sy, sxy, sxx = sx+x, sy+y, sxy+x*y, sxx+x*x
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	if sy == 0 {
		return 0
	}
	return slope * (n - 1) / (sy / n)
}

// measureSoak is mixed load (9 reads to 1 edit, as the HTTP replicas' mixed phase) on two
// replicas sharing one PostgreSQL schema, for -soak, minute by minute: whether latency
// stays where it began as the table ages.
func measureSoak(ctx context.Context, o *options, bins binaries, r *report) error {
	if o.pg == "" {
		return fmt.Errorf("the soak needs -pg postgres://… (or COMPASS_TEST_DATA)")
	}
	schemas := &pgSchemas{base: o.pg}
	defer schemas.drop()
	data, err := schemas.fresh(ctx, "soak")
	if err != nil {
		return err
	}
	var cmds []*exec.Cmd
	for range 2 {
		cmd := exec.Command(bins.compass, "serve", "--http", "127.0.0.1:0")
		cmd.Env = append(compassEnv(data), "COMPASS_LOG=info")
		cmds = append(cmds, cmd)
	}
	base, err := startRig(ctx, cmds...)
	if err != nil {
		return err
	}
	rig := &sharedRig{httpRig: base, lineOf: make([]int, clients)}
	defer rig.close()
	if o.history > 0 {
		if err := addHistory(ctx, data, o.history); err != nil {
			return fmt.Errorf("adding %d rows of history: %w", o.history, err)
		}
	}
	var text strings.Builder
	text.WriteString("# Shared\n\n")
	for c := range clients {
		fmt.Fprintf(&text, "client %d: 0\n", c)
	}
	answer, err := call(ctx, rig.sessions[0], "write_document", map[string]any{"title": "Shared plan", "text": text.String()})
	if err != nil {
		return err
	}
	m := idPattern.FindStringSubmatch(answer)
	if m == nil {
		return fmt.Errorf("write_document answered without a link: %q", answer)
	}
	rig.shared = m[1]
	mixed := func(ctx context.Context, c, i int, cs *mcp.ClientSession) error {
		if i%10 == 9 {
			return rig.writeShared(ctx, c, i, cs)
		}
		return rig.read(ctx, c, i, cs)
	}
	type minute struct {
		rate     float64
		s        summary
		cpu      cpuTotals // a call's, and the share of the cores other work used
		load     string
		stats    string
		finished time.Duration
	}
	var minutes []minute
	var every time.Duration // 0: without pause
	if o.soakRate > 0 {
		every = time.Duration(float64(time.Second) / o.soakRate)
	}
	for w := range o.warmup {
		got, err := runPaced(ctx, rig.sessions, 1<<30, time.Minute, every, newSeries(1), 0, mixed)
		if err != nil {
			return fmt.Errorf("soak, warm-up minute %d: %w\n%s", w+1, err, rig.stderr())
		}
		log.Printf("soak, warm-up minute %d of %d (not counted): %.0f calls/s", w+1, o.warmup, float64(got.calls)/got.elapsed.Seconds())
	}
	probe := rig.probe(data)
	yard := startYardstick()
	defer yard.close()
	start := time.Now()
	for time.Since(start) < o.soak {
		lat := newSeries(1)
		before := probe.read(ctx)
		yard.take()
		got, err := runPaced(ctx, rig.sessions, 1<<30, time.Minute, every, lat, 0, mixed)
		if err != nil {
			return fmt.Errorf("soak, minute %d: %w\n%s", len(minutes)+1, err, rig.stderr())
		}
		mn := minute{rate: float64(got.calls) / got.elapsed.Seconds(), s: lat.summary(), load: loadSample("").avg, finished: time.Since(start)}
		mn.cpu = before.perCall(probe.read(ctx), got.calls)
		mn.cpu.yard = yard.take()
		if st, err := readTableStats(ctx, data); err == nil {
			mn.stats = st.String()
		}
		minutes = append(minutes, mn)
		log.Printf("soak, minute %d: %.0f calls/s, p50 %s, p99 %s; CPU a call %s; load %s; %s", len(minutes), mn.rate, ms(mn.s.p50), ms(mn.s.p99), cpuPerCall([]cpuTotals{mn.cpu}), mn.load, mn.stats)
	}
	rig.written = 0
	for _, n := range rig.lineOf {
		rig.written += n
	}
	if err := rig.check(ctx); err != nil {
		return err
	}
	b := r.section("PostgreSQL soak: mixed load on two replicas")
	fmt.Fprintf(b, "Two `compass-mcp serve --http` replicas on one PostgreSQL schema, %d clients spread over them, each making 9 `read_document`\n", clients)
	pace, flag := "without pause", ""
	if every > 0 {
		pace, flag = fmt.Sprintf("%g calls a second together, each call's latency counted from when it was due,", o.soakRate), fmt.Sprintf(" -soak-rate %g", o.soakRate)
	}
	fmt.Fprintf(b, "of its own document to 1 `edit_document` of its line of one shared document, %s for %s (`go run ./internal/cmd/bench\n", pace, o.soak)
	fmt.Fprintf(b, "-pg URL -only soak -soak %s%s`); minute by minute, with the load average and kv_entries at each minute's end. After it the\n", o.soak, flag)
	b.WriteString("shared document is read back and every acknowledged edit is in it (checked).")
	if o.warmup > 0 {
		fmt.Fprintf(b, " Minute 1 follows %d minute(s) of the same load not counted (`-warmup %d`).", o.warmup, o.warmup)
	}
	if o.history > 0 {
		fmt.Fprintf(b, " The table starts with %d rows of history that no call reads (`-soak-history %d`: 200-byte values in a bucket of their own, vacuumed and analyzed\n", o.history, o.history)
		b.WriteString("before the load), as a store that has kept months of versions: autovacuum's default waits for 20% of the table's rows in dead ones.")
	}
	b.WriteString("\n\n")
	b.WriteString("Each minute also says what a call cost (the servers' CPU + their backends', and the buffers the database read)\n")
	b.WriteString("and, as gauges of the machine's noise, the clients' CPU a call (the same work every minute), the share of its cores that other work used that minute,\n")
	b.WriteString("and the share the host stole from them (/proc/stat's steal; a probe pauses the load about a second between minutes)\n")
	b.WriteString("and the yardstick: the CPU time a fixed piece of work (hashing 1 MiB, every 250 ms) took that minute, ÷ minute 1's.")
	b.WriteString("\n\n| minute | calls/s | p50 | p99 | p99 ÷ first minute's | yardstick ÷ first minute's | a call; others' and stolen share of the cores | load | kv_entries |\n|---|---|---|---|---|---|---|---|---|\n")
	var p99s []time.Duration
	for i, mn := range minutes {
		p99s = append(p99s, mn.s.p99)
		yr := "–"
		if y0 := minutes[0].cpu.yard; y0 > 0 && mn.cpu.yard > 0 {
			yr = fmt.Sprintf("%.2f", float64(mn.cpu.yard)/float64(y0))
		}
		fmt.Fprintf(b, "| %d | %.0f | %s | %s | %.2f | %s | %s | %s | %s |\n", i+1, mn.rate, ms(mn.s.p50), ms(mn.s.p99), float64(mn.s.p99)/float64(minutes[0].s.p99), yr, cpuPerCall([]cpuTotals{mn.cpu}), mn.load, mn.stats)
	}
	if len(p99s) > 0 {
		fmt.Fprintf(b, "\nHighest p99 %s, %.2f× the first minute's.\n", ms(slices.Max(p99s)), float64(slices.Max(p99s))/float64(p99s[0]))
	}
	return nil
}

// cpuProbe reads the CPU time the servers and their database's backends have used so far,
// and how many buffers the database has read in the store's tables: on a machine shared with
// others, CPU per call moves far less with their load than calls/s, and buffers per call not
// at all (they count the work the queries do, not how fast the machine does it).
type cpuProbe struct {
	servers []int  // the servers' pids
	data    string // a postgres:// URL of the store's schema, whose backends are counted, or ""
}

func (rig *httpRig) probe(data string) cpuProbe {
	p := cpuProbe{}
	for _, s := range rig.srvs {
		p.servers = append(p.servers, s.cmd.Process.Pid)
	}
	if strings.HasPrefix(data, "postgres") {
		p.data = data
	}
	return p
}

// cpuTotals are CPU times used so far, by the servers and by the database's backends, and
// the buffers read (hit or not) in the schema's tables, indexes and TOAST.
type cpuTotals struct {
	server, db time.Duration
	blocks     int64
	// The machine's busy time (all cores, from /proc/stat), this process's (the clients'),
	// and when they were read: what is neither theirs nor the servers' nor the database's
	// backends' is other work on the machine (others).
	busy, self time.Duration
	at         time.Time
	others     float64 // per call: the share of the machine's cores other work used meanwhile
	// steal is the time the host ran something else while the machine's cores had work
	// (/proc/stat's steal: this machine is a guest); stolen, per call, its share of the
	// cores meanwhile: a slower machine that no process's CPU time shows.
	steal  time.Duration
	stolen float64
	// yard is the yardstick's piece meanwhile, in CPU time (0: not measured): how fast the
	// machine ran (see yardstick).
	yard time.Duration
	// client is this process's CPU a call meanwhile: the clients' (and the yardstick's, about
	// 1% of a core). Their work a call is the same in every run, so it gauges the machine as
	// the calls met it, the same moment and the same mix of work (writeGauge).
	client time.Duration
}

// perCall is what the work between t and later cost a call, over n calls.
func (t cpuTotals) perCall(later cpuTotals, n int) cpuTotals {
	n = max(n, 1)
	c := cpuTotals{server: (later.server - t.server) / time.Duration(n), db: (later.db - t.db) / time.Duration(n), blocks: (later.blocks - t.blocks) / int64(n),
		client: (later.self - t.self) / time.Duration(n)}
	if wall := later.at.Sub(t.at); wall > 0 && t.busy > 0 {
		other := (later.busy - t.busy) - (later.self - t.self) - (later.server - t.server) - (later.db - t.db)
		c.others = max(0, float64(other)/float64(wall)/float64(runtime.NumCPU()))
		c.stolen = max(0, float64(later.steal-t.steal)/float64(wall)/float64(runtime.NumCPU()))
	}
	return c
}

// machineBusy is the CPU time all cores have spent not idle since boot, and the time the
// host stole from them (steal, not counted in busy), from /proc/stat.
func machineBusy() (busy, steal time.Duration) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		switch {
		case i == 7:
			steal += time.Duration(n) * 10 * time.Millisecond
		case i != 3 && i != 4 && i < 8: // not idle, iowait; guest time is counted in user already
			busy += time.Duration(n) * 10 * time.Millisecond
		}
	}
	return busy, steal
}

// statsLag is how long the probe waits before it reads the database's counters: backends
// report their buffers to the statistics system at most once a second.
const statsLag = 1100 * time.Millisecond

func (p cpuProbe) read(ctx context.Context) cpuTotals {
	t := cpuTotals{self: procCPU(os.Getpid()), at: time.Now()}
	t.busy, t.steal = machineBusy()
	for _, pid := range p.servers {
		t.server += procCPU(pid)
	}
	if p.data == "" {
		return t
	}
	// The backends' CPU is read after the wait, with the servers idle: it moves no more.
	time.Sleep(statsLag)
	conn, err := pgx.Connect(ctx, p.data)
	if err != nil {
		return t
	}
	defer conn.Close(ctx)
	// Only the servers' backends: the database may be shared with others' (tests, other
	// benchmarks), whose CPU is none of these calls'. Every URL of a bench schema names its
	// connections after the schema (pgSchemas.fresh), this one too.
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity
		WHERE application_name = current_setting('application_name') AND backend_type = 'client backend' AND pid <> pg_backend_pid()`)
	if err != nil {
		return t
	}
	pids, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
	for _, pid := range pids {
		t.db += procCPU(int(pid))
	}
	_ = conn.QueryRow(ctx, `SELECT coalesce(sum(coalesce(heap_blks_read, 0) + coalesce(heap_blks_hit, 0) + coalesce(idx_blks_read, 0) + coalesce(idx_blks_hit, 0)
			+ coalesce(toast_blks_read, 0) + coalesce(toast_blks_hit, 0) + coalesce(tidx_blks_read, 0) + coalesce(tidx_blks_hit, 0)), 0)::bigint
		FROM pg_statio_user_tables WHERE schemaname = current_schema()`).Scan(&t.blocks)
	return t
}

// procCPU is the user and system CPU time process pid has used, from /proc (0 if gone).
func procCPU(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name, which is in parentheses and may hold spaces.
	_, after, ok := strings.Cut(string(raw), ") ")
	if !ok {
		return 0
	}
	f := strings.Fields(after)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// addHistory puts n rows in a bucket no entry names (invisible to every call), then vacuums
// and analyzes the table, so that the soak starts on a table the size of an old store's.
func addHistory(ctx context.Context, data string, n int) error {
	conn, err := pgx.Connect(ctx, data)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, sql := range []string{
		`INSERT INTO kv_entries (bucket, key, value) SELECT -1, int8send(i), convert_to(repeat(md5(i::text), 6), 'UTF8') FROM generate_series(1, $1::bigint) AS i`,
		`VACUUM (ANALYZE) kv_entries`,
	} {
		var args []any
		if strings.Contains(sql, "$1") {
			args = append(args, n)
		}
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			return err
		}
	}
	return nil
}
