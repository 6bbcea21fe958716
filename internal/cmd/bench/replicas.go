package main

import (
	"context"
	"fmt"
	"log"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replicaSetup is one way of serving: a store and how many `serve --http` processes share it.
type replicaSetup struct {
	name     string
	replicas int
	data     func(ctx context.Context) (string, error) // COMPASS_DATA for every replica
}

// sharedRig adds to an httpRig one document that every client edits, each its own line.
type sharedRig struct {
	*httpRig
	shared  string
	lineOf  []int // the number on each client's line of the shared document
	written int   // edits of the shared document acknowledged
}

func (rig *sharedRig) writeShared(ctx context.Context, c, _ int, cs *mcp.ClientSession) error {
	n := rig.lineOf[c]
	_, err := call(ctx, cs, "edit_document", map[string]any{"document": rig.shared, "old": fmt.Sprintf("client %d: %d\n", c, n), "new": fmt.Sprintf("client %d: %d\n", c, n+1)})
	if err == nil {
		rig.lineOf[c] = n + 1
	}
	return err
}

var versionOf = regexp.MustCompile(`version (\d+) of (\d+)`)

// check reads the shared document back: one version for each acknowledged edit after the
// first, and every client's line at its last acknowledged number (no update lost).
func (rig *sharedRig) check(ctx context.Context) error {
	got, err := call(ctx, rig.sessions[len(rig.sessions)-1], "read_document", map[string]any{"document": rig.shared})
	if err != nil {
		return err
	}
	m := versionOf.FindStringSubmatch(got)
	if m == nil {
		return fmt.Errorf("read_document of the shared document said no version: %.200q", got)
	}
	if v, _ := strconv.Atoi(m[2]); v != 1+rig.written {
		return fmt.Errorf("the shared document is at version %d after %d acknowledged edits (want %d)", v, rig.written, 1+rig.written)
	}
	for c, n := range rig.lineOf {
		if !strings.Contains(got, fmt.Sprintf("client %d: %d\n", c, n)) {
			return fmt.Errorf("client %d's line of the shared document lost its edit %d", c, n)
		}
	}
	return nil
}

// measureReplicas is the HTTP half of "bbolt and PostgreSQL side by side": 16 clients over
// streamable HTTP on `compass-mcp serve --http` on a bbolt file, on PostgreSQL, and on two
// replicas sharing one PostgreSQL schema (clients spread over both), each reading, then
// writing each its own document, then all writing one document.
func measureReplicas(ctx context.Context, o *options, bins binaries, r *report) error {
	b := r.sectionNamed("bbolt and PostgreSQL side by side")
	if o.pg == "" {
		if b.Len() == 0 {
			b.WriteString("Not measured in this run: give `-pg postgres://…` (or set COMPASS_TEST_DATA) to measure both stores.\n")
		}
		return nil
	}
	// A compass-mcp that doesn't know PostgreSQL would take the URL for a file's path.
	if help, _ := exec.Command(bins.compass, "serve", "-h").CombinedOutput(); !strings.Contains(string(help), "postgres://") {
		return fmt.Errorf("this compass-mcp's serve takes no --data postgres://")
	}
	schemas := &pgSchemas{base: o.pg}
	defer schemas.drop()
	file := func(context.Context) (string, error) { return filepath.Join(o.work, "replicas.db"), nil }
	schema := func(ctx context.Context) (string, error) { return schemas.fresh(ctx, "http") }
	setups := []replicaSetup{
		{"bbolt, 1 server", 1, file},
		{"PostgreSQL, 1 server", 1, schema},
		{"PostgreSQL, 2 replicas", 2, schema},
	}
	if o.setups != "" {
		keys := []string{"bbolt", "pg", "replicas"}
		var chosen []replicaSetup
		for i, s := range setups {
			if slices.Contains(strings.Split(o.setups, ","), keys[i]) {
				chosen = append(chosen, s)
			}
		}
		if len(chosen) == 0 {
			return fmt.Errorf("-setups %q names no setup; they are %s", o.setups, strings.Join(keys, ","))
		}
		setups = chosen
	}
	load := o.httpLoad()
	type phase struct {
		name string
		n    int
		do   func(rig *sharedRig) func(context.Context, int, int, *mcp.ClientSession) error
	}
	phases := []phase{
		{"reads/s: `read_document`, each client its own 2 KB document", load.reads, func(rig *sharedRig) func(context.Context, int, int, *mcp.ClientSession) error {
			return rig.read
		}},
		{"writes/s: `edit_document`, each client its own document", load.writes, func(rig *sharedRig) func(context.Context, int, int, *mcp.ClientSession) error {
			return rig.write
		}},
		{"writes/s: `edit_document`, all clients one document (each its own line)", load.writes, func(rig *sharedRig) func(context.Context, int, int, *mcp.ClientSession) error {
			return rig.writeShared
		}},
		{"calls/s, mixed: each client 9 reads of its document to 1 edit of its line of the shared one", load.reads, func(rig *sharedRig) func(context.Context, int, int, *mcp.ClientSession) error {
			return func(ctx context.Context, c, i int, cs *mcp.ClientSession) error {
				if i%10 == 9 {
					return rig.writeShared(ctx, c, i, cs)
				}
				return rig.read(ctx, c, i, cs)
			}
		}},
	}
	type result struct {
		rates []float64
		lat   *series
	}
	results := map[[2]int]*result{}
	notes := make([][]runNote, len(setups))
	// Every setup's servers are started first and stay up; the runs then take the setups in
	// turn (run 1 of each, then run 2 of each, ...), so that what else the machine does at a
	// moment falls on all of them alike and the ratio of two setups' figures in one run tells
	// a trend from the machine's noise (writeRatios).
	rigs := make([]*sharedRig, len(setups))
	datas := make([]string, len(setups))
	closeAll := func() {
		for _, rig := range rigs {
			if rig != nil {
				rig.close()
			}
		}
	}
	for si, setup := range setups {
		data, err := setup.data(ctx)
		if err != nil {
			closeAll()
			return err
		}
		datas[si] = data
		var cmds []*exec.Cmd
		for range setup.replicas {
			cmd := exec.Command(bins.compass, "serve", "--http", "127.0.0.1:0")
			cmd.Env = append(compassEnv(data), "COMPASS_LOG=info") // the URL is logged at info
			cmds = append(cmds, cmd)
		}
		base, err := startRig(ctx, cmds...)
		if err != nil {
			closeAll()
			return fmt.Errorf("%s: %w", setup.name, err)
		}
		rig := &sharedRig{httpRig: base, lineOf: make([]int, clients)}
		rigs[si] = rig
		var text strings.Builder
		text.WriteString("# Shared\n\n")
		for c := range clients {
			fmt.Fprintf(&text, "client %d: 0\n", c)
		}
		answer, err := call(ctx, rig.sessions[0], "write_document", map[string]any{"title": "Shared plan", "text": text.String()})
		if err != nil {
			closeAll()
			return err
		}
		m := idPattern.FindStringSubmatch(answer)
		if m == nil {
			closeAll()
			return fmt.Errorf("write_document answered without a link: %q", answer)
		}
		rig.shared = m[1]
		for pi := range phases {
			results[[2]int{si, pi}] = &result{lat: newSeries(o.runs)}
		}
	}
	// afterPhase keeps the rig's count of the shared document's acknowledged edits.
	afterPhase := func(rig *sharedRig, pi int, got phaseResult) {
		switch pi {
		case 2:
			rig.written += got.calls
		case 3:
			rig.written = 0
			for _, n := range rig.lineOf {
				rig.written += n
			}
		}
	}
	for w := range o.warmup {
		for si, setup := range setups {
			rig := rigs[si]
			var rs []string
			for pi, ph := range phases {
				got, err := runPhase(ctx, rig.sessions, ph.n, load.deadline, newSeries(1), 0, ph.do(rig))
				if err != nil {
					closeAll()
					return fmt.Errorf("%s, warm-up, %s: %w\n%s", setup.name, ph.name, err, rig.stderr())
				}
				afterPhase(rig, pi, got)
				rs = append(rs, fmt.Sprintf("%.0f", float64(got.calls)/got.elapsed.Seconds()))
			}
			log.Printf("warm-up run %d of %d, %s (not counted): calls/s %s", w+1, o.warmup, setup.name, strings.Join(rs, " / "))
		}
	}
	yard := startYardstick()
	defer yard.close()
	for run := range o.runs {
		for si, setup := range setups {
			rig, data := rigs[si], datas[si]
			var runRates []float64
			var runCPU []cpuTotals
			var runP99 []time.Duration
			probe := rig.probe(data)
			for pi, ph := range phases {
				res := results[[2]int{si, pi}]
				before := probe.read(ctx)
				yard.take()
				got, err := runPhase(ctx, rig.sessions, ph.n, load.deadline, res.lat, run, ph.do(rig))
				if err != nil {
					err = fmt.Errorf("%s, %s: %w\n%s", setup.name, ph.name, err, rig.stderr())
					closeAll()
					return err
				}
				afterPhase(rig, pi, got)
				res.rates = append(res.rates, float64(got.calls)/got.elapsed.Seconds())
				runRates = append(runRates, float64(got.calls)/got.elapsed.Seconds())
				runP99 = append(runP99, percentile(res.lat.runs[run], 99))
				c := before.perCall(probe.read(ctx), got.calls)
				c.yard = yard.take()
				runCPU = append(runCPU, c)
			}
			notes[si] = append(notes[si], noteRun(ctx, setup.name, run, data, runRates, runP99, runCPU))
		}
	}
	for si, setup := range setups {
		rig := rigs[si]
		if err := rig.check(ctx); err != nil {
			closeAll()
			return fmt.Errorf("%s: %w", setup.name, err)
		}
		rigs[si] = nil
		if err := rig.close(); err != nil {
			closeAll()
			return fmt.Errorf("%s: stopping the servers: %w\n%s", setup.name, err, rig.stderr())
		}
	}

	fmt.Fprintf(b, "### HTTP: one server and two replicas\n\n")
	fmt.Fprintf(b, "`compass-mcp serve --http 127.0.0.1:0` with `COMPASS_DATA` a bbolt file or a PostgreSQL schema of its own; for two\n")
	fmt.Fprintf(b, "replicas, two such processes on one schema, the %d go-sdk client sessions spread over them in turn (client c on\n", clients)
	b.WriteString("replica c mod 2, as a round-robin balancer would place them). A run is four phases, one after the other: reads of each\n")
	b.WriteString("client's own document of about 2 KB; one-line edits of it; one-line edits of one document shared by all, each client\n")
	fmt.Fprintf(b, "its own line; and the two mixed. Each client makes at most %d reads and %d writes a phase (%d calls in the mixed one),\n", load.reads, load.writes, load.reads)
	fmt.Fprintf(b, "which stops after %s whatever is left; calls/s is calls ÷ the phase's wall time, the median of %d runs. The setups take turns,\n", load.deadline, o.runs)
	b.WriteString("run 1 of each, then run 2 of each, and so on, all their servers up throughout.")
	if o.warmup > 0 {
		fmt.Fprintf(b, " Run 1 follows %d run(s) of each setup not counted (`-warmup`), on the same servers and stores.", o.warmup)
	}
	b.WriteString("\nLatencies are of every call of the phase, all runs together. After the runs the shared document is read back:\n")
	b.WriteString("its version count is one more than the acknowledged edits and every client's line holds its last edit (checked).\n")
	b.WriteString("The clients, the servers and PostgreSQL share the machine's cores: a second replica adds no CPU here, so the last\n")
	b.WriteString("column shows what sharing one database across processes costs, not how replicas scale. (On machines of their own,\n")
	b.WriteString("replicas' reads would add up, being bound by their own CPU and the database's; writes would not, being serial under\n")
	b.WriteString("the database's one advisory lock: expected from the design, not measured here.)\n\n")
	b.WriteString("| load |")
	for _, s := range setups {
		fmt.Fprintf(b, " %s |", s.name)
	}
	b.WriteString("\n|---|")
	for range setups {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for pi, ph := range phases {
		fmt.Fprintf(b, "| %s |", ph.name)
		for si := range setups {
			res := results[[2]int{si, pi}]
			s := res.lat.summary()
			fmt.Fprintf(b, " **%.0f/s** (runs %s); p50 %s, p99 %s |", medianOf(res.rates), rates(res.rates), ms(s.p50), ms(s.p99))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	names := make([]string, len(setups))
	for i, s := range setups {
		names[i] = s.name
	}
	phaseNames := make([]string, len(phases))
	for i, ph := range phases {
		phaseNames[i] = ph.name
	}
	writeRunByRun(b, names, phaseNames, notes)
	writeRatios(b, names, phaseNames, notes)
	writeGauge(b, names, notes)
	return nil
}
