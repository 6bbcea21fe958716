package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
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
	rates []float64   // each phase's calls/s
	cpu   []cpuTotals // each phase's CPU a call
	load  string
	stats string
}

// noteRun logs one run's rates with the load and the table's state, and returns them.
func noteRun(ctx context.Context, setup string, run int, data string, rs []float64, cpu []cpuTotals) runNote {
	n := runNote{rates: rs, cpu: cpu, load: loadSample("").avg}
	if strings.HasPrefix(data, "postgres") {
		if s, err := readTableStats(ctx, data); err != nil {
			n.stats = "(stats: " + err.Error() + ")"
		} else {
			n.stats = s.String()
		}
	}
	log.Printf("%s, run %d: %s calls/s; CPU a call %s; load %s; %s", setup, run+1, rates(rs), cpuPerCall(cpu), n.load, n.stats)
	return n
}

// drift is how the last run's rate compares to the first's, as a signed percentage.
// cpuPerCall shows each phase's CPU a call, the servers' + the database's, in µs.
func cpuPerCall(cpu []cpuTotals) string {
	s := make([]string, len(cpu))
	for i, c := range cpu {
		s[i] = fmt.Sprintf("%d+%d µs", c.server.Microseconds(), c.db.Microseconds())
	}
	return strings.Join(s, ", ")
}

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
		b.WriteString("(from /proc, in 10 ms ticks: less moved by other work than calls/s); the load average and kv_entries after the run.\n\n")
		b.WriteString("| run | reads | own writes | shared writes | mixed | load | kv_entries |\n|---|---|---|---|---|---|---|\n")
		for run, n := range ns {
			fmt.Fprintf(b, "| %d |", run+1)
			for pi, r := range n.rates {
				fmt.Fprintf(b, " %.0f (%s) |", r, cpuPerCall(n.cpu[pi:pi+1]))
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
		load     string
		stats    string
		finished time.Duration
	}
	var minutes []minute
	start := time.Now()
	for time.Since(start) < o.soak {
		lat := newSeries(1)
		got, err := runPhase(ctx, rig.sessions, 1<<30, time.Minute, lat, 0, mixed)
		if err != nil {
			return fmt.Errorf("soak, minute %d: %w\n%s", len(minutes)+1, err, rig.stderr())
		}
		mn := minute{rate: float64(got.calls) / got.elapsed.Seconds(), s: lat.summary(), load: loadSample("").avg, finished: time.Since(start)}
		if st, err := readTableStats(ctx, data); err == nil {
			mn.stats = st.String()
		}
		minutes = append(minutes, mn)
		log.Printf("soak, minute %d: %.0f calls/s, p50 %s, p99 %s; load %s; %s", len(minutes), mn.rate, ms(mn.s.p50), ms(mn.s.p99), mn.load, mn.stats)
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
	fmt.Fprintf(b, "of its own document to 1 `edit_document` of its line of one shared document, without pause, for %s (`go run ./internal/cmd/bench\n", o.soak)
	fmt.Fprintf(b, "-pg URL -only soak -soak %s`); minute by minute, with the load average and kv_entries at each minute's end. After it the\n", o.soak)
	b.WriteString("shared document is read back and every acknowledged edit is in it (checked).")
	if o.history > 0 {
		fmt.Fprintf(b, " The table starts with %d rows of history that no call reads (`-soak-history %d`: 200-byte values in a bucket of their own, vacuumed and analyzed\n", o.history, o.history)
		b.WriteString("before the load), as a store that has kept months of versions: autovacuum's default waits for 20% of the table's rows in dead ones.")
	}
	b.WriteString("\n\n")
	b.WriteString("| minute | calls/s | p50 | p99 | p99 ÷ first minute's | load | kv_entries |\n|---|---|---|---|---|---|---|\n")
	var p99s []time.Duration
	for i, mn := range minutes {
		p99s = append(p99s, mn.s.p99)
		fmt.Fprintf(b, "| %d | %.0f | %s | %s | %.2f | %s | %s |\n", i+1, mn.rate, ms(mn.s.p50), ms(mn.s.p99), float64(mn.s.p99)/float64(minutes[0].s.p99), mn.load, mn.stats)
	}
	if len(p99s) > 0 {
		fmt.Fprintf(b, "\nHighest p99 %s, %.2f× the first minute's.\n", ms(slices.Max(p99s)), float64(slices.Max(p99s))/float64(p99s[0]))
	}
	return nil
}

// cpuProbe reads the CPU time the servers and their database's backends have used so far:
// on a machine shared with others, CPU per call moves far less with their load than calls/s.
type cpuProbe struct {
	servers []int  // the servers' pids
	data    string // a postgres:// URL of the database whose client backends are counted, or ""
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

// cpuTotals are CPU times used so far, by the servers and by the database's backends.
type cpuTotals struct{ server, db time.Duration }

func (p cpuProbe) read(ctx context.Context) cpuTotals {
	var t cpuTotals
	for _, pid := range p.servers {
		t.server += procCPU(pid)
	}
	if p.data == "" {
		return t
	}
	conn, err := pgx.Connect(ctx, p.data)
	if err != nil {
		return t
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`)
	if err != nil {
		return t
	}
	pids, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
	for _, pid := range pids {
		t.db += procCPU(int(pid))
	}
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
