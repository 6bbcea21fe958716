// Command bench measures compass-mcp end to end and prints its report: the figures
// docs/PERFORMANCE.md gives come from it.
//
// It builds the server, starts it as an MCP host would (stdio, and streamable HTTP on
// loopback), drives it with the official go-sdk client, and measures beside it, in the same
// run and with the same client, the reference filesystem server (@modelcontextprotocol/
// server-filesystem, run with node) on the same text:
//
//	internal/cmd/bench/run.sh                 # installs the npm server into internal/cmd/bench/node_modules, then the below
//	go run ./internal/cmd/bench               # the full run (a few minutes): the report, on stdout
//	go run ./internal/cmd/bench -quick        # small counts, a few seconds, no npm needed: prints the report
//	go run ./internal/cmd/bench -profile DIR  # CPU and allocation profiles of the hot paths, into DIR
//	go run ./internal/cmd/bench -pg postgres://… -only sidebyside,replicas  # bbolt and PostgreSQL side by side, to stdout
//	go run ./internal/cmd/bench -pg postgres://… -only replicas -setups bbolt,replicas -runs 10  # ten runs in a row, the setups taking turns
//	go run ./internal/cmd/bench -pg postgres://… -only replicas -setups bbolt,replicas -runs 10 -phase 10s  # the same, each phase 10 s long
//	go run ./internal/cmd/bench -pg postgres://… -only replicas -setups bbolt,replicas -runs 10 -phase 10s -warmup 1  # after one run not counted
//	go run ./internal/cmd/bench -pg postgres://… -only soak -soak 30m [-soak-history 500000]  # mixed load minute by minute
//
// With -pg (or COMPASS_TEST_DATA) set to a PostgreSQL database, the report gains a section
// "bbolt and PostgreSQL side by side": the same store calls on both, and HTTP servers on
// bbolt, on PostgreSQL and two replicas on one PostgreSQL schema. It works in schemas of
// its own (bench_…), which it drops at the end; without a database the section says so.
//
// Every load it makes goes to 127.0.0.1 only, and every loop is bounded in count and time.
//
// Run with -serve, it is instead a compass-mcp server of its own (tools.New served by
// package transport, as the real one, plus a no-op tool): that is what the overhead and
// profiling measurements talk to.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// options are the command's flags.
type options struct {
	quick    bool
	out      string
	runs     int
	warmup   int    // runs of the HTTP replicas step made first and not counted
	node     string // the node binary
	fsMain   string // the filesystem server's entry point (dist/index.js)
	profile  string // if set, profile the hot paths into this folder instead of benchmarking
	pg       string // if set, a PostgreSQL database to measure beside bbolt
	only     string // if set, the steps to run (their keys, comma-separated)
	setups   string // if set, the HTTP replicas' setups to run (bbolt, pg, replicas)
	soak     time.Duration
	phase    time.Duration // if set, how long each phase of the HTTP load runs (httpLoad)
	history  int           // rows of history the soak's table starts with
	soakRate float64       // calls/s the soak's clients make together; 0: each without pause
	root     string        // the module's root folder
	work     string        // a temporary folder for binaries and data files
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("bench: ")
	if len(os.Args) > 1 && os.Args[1] == "-serve" {
		if err := serveChild(os.Args[2:]); err != nil {
			log.Fatal(err)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "-worst" {
		if err := worstChild(os.Args[2:]); err != nil {
			log.Fatal(err)
		}
		return
	}
	var o options
	flag.BoolVar(&o.quick, "quick", false, "if set, run small counts (a few seconds, for CI); times are not asserted")
	flag.StringVar(&o.out, "o", "-", "the file to write the report to (- for stdout). docs/PERFORMANCE.md is a reference written by hand from reports: the report is not it")
	flag.IntVar(&o.runs, "runs", 0, "if set, how many runs each measurement is repeated (default 5, 2 with -quick)")
	flag.IntVar(&o.warmup, "warmup", 0, "if set, the HTTP replicas step first makes this many runs it doesn't count, and the soak this many minutes (their calls/s go to stderr): a new PostgreSQL schema's first minute runs plans made for empty tables until its first autoanalyze, and its caches are cold")
	flag.StringVar(&o.node, "node", "node", "the node binary that runs the filesystem server")
	flag.StringVar(&o.fsMain, "fs-server", "", "if set, the filesystem server's dist/index.js; default internal/cmd/bench/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	flag.StringVar(&o.profile, "profile", "", "if set, write CPU and allocation profiles of edit_document over stdio and read_document over HTTP into this folder, and skip the benchmark")
	flag.StringVar(&o.pg, "pg", os.Getenv(pgEnv), "if set, a postgres:// URL: measure PostgreSQL beside bbolt in a section of its own, in schemas of the benchmark's own that it drops at the end [$"+pgEnv+"]")
	flag.StringVar(&o.only, "only", "", "if set, run only these steps (comma-separated keys: "+strings.Join(stepKeys(), ",")+")")
	flag.StringVar(&o.setups, "setups", "", "if set, run only these setups of the HTTP replicas step (comma-separated: bbolt,pg,replicas)")
	flag.DurationVar(&o.phase, "phase", 0, "if set, each phase of the HTTP load runs this long (at most "+fmt.Sprint(phaseCalls)+" calls a client), instead of 250 reads or 60 writes a client within 10s: longer phases, less noise between runs (bbolt's short phases last a second or two)")
	flag.DurationVar(&o.soak, "soak", 30*time.Minute, "how long the soak step (-only soak) runs its mixed load on two PostgreSQL replicas")
	flag.Float64Var(&o.soakRate, "soak-rate", 0, "if set, the soak's clients together make this many calls a second, each call's latency counted from when it was due (a server behind the pace is charged its queue), instead of each making its next call as soon as the last answers (flat out, p99 is the queue's length over the rate the machine gives; at a pace below capacity it is the calls' own tail, stalls included)")
	flag.IntVar(&o.history, "soak-history", 0, "if set, the soak's table starts with this many rows of history no call reads (as a store that has kept months of versions), vacuumed and analyzed")
	flag.Parse()
	if err := run(&o); err != nil {
		log.Fatal(err)
	}
}

func run(o *options) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	o.root = root
	if o.runs == 0 {
		o.runs = 5
		if o.quick {
			o.runs = 2
		}
	}
	if o.fsMain == "" {
		o.fsMain = filepath.Join(root, "internal", "cmd", "bench", "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	}
	work, err := os.MkdirTemp("", "compass-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	o.work = work

	bins, err := build(o)
	if err != nil {
		return err
	}
	timeout := 30 * time.Minute
	if o.phase > 0 { // four phases a run for each setup
		timeout += time.Duration(max(o.runs, 5)*4*3) * o.phase
	}
	if slices.Contains(strings.Split(o.only, ","), soakStep.key) {
		timeout += o.soak
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if o.profile != "" {
		return profile(ctx, o, bins)
	}

	r := &report{opts: o, started: time.Now(), machine: readMachine(root)}
	r.load = append(r.load, loadSample("start"))
	var chosen []step
	for _, s := range append(steps, soakStep) {
		if o.only == "" && s.key != soakStep.key || slices.Contains(strings.Split(o.only, ","), s.key) {
			chosen = append(chosen, s)
		}
	}
	if len(chosen) == 0 {
		return fmt.Errorf("-only %q names no step; the steps are %s", o.only, strings.Join(stepKeys(), ","))
	}
	for _, s := range chosen {
		log.Printf("%s ...", s.name)
		start, before := time.Now(), readCPUCounters()
		if err := s.run(ctx, o, bins, r); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		l := loadSample("after " + s.name)
		l.others = othersShare(before, readCPUCounters())
		r.load = append(r.load, l)
		log.Printf("%s: %s", s.name, time.Since(start).Round(time.Millisecond))
	}
	r.took = time.Since(r.started)
	var w io.Writer = os.Stdout
	if o.out != "-" {
		f, err := os.Create(o.out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if err := r.write(w); err != nil {
		return err
	}
	if o.out != "-" {
		log.Printf("wrote %s", o.out)
	}
	return nil
}

// step is one measurement of the report.
type step struct {
	key, name string
	run       func(context.Context, *options, binaries, *report) error
}

var steps = []step{
	{"fsync", "fsync", measureFsync},
	{"toolslist", "tools/list size", measureToolsList},
	{"stdio", "stdio: compass-mcp and the filesystem server", measureStdio},
	{"raw", "stdio, server side: a raw client", measureRawRead},
	{"overhead", "overhead over mcp-go", measureOverhead},
	{"http", "streamable HTTP, 16 clients", measureHTTP},
	{"storage", "storage", measureStorage},
	{"worst", "worst cases", measureWorst},
	{"page", "the person's page", measurePage},
	{"sidebyside", "bbolt and PostgreSQL side by side: the stores", measureSideBySide},
	{"replicas", "bbolt and PostgreSQL side by side: HTTP replicas", measureReplicas},
}

// soakStep runs only when -only names it: it takes as long as -soak says.
var soakStep = step{"soak", "PostgreSQL soak", measureSoak}

func stepKeys() []string {
	var keys []string
	for _, s := range append(steps, soakStep) {
		keys = append(keys, s.key)
	}
	return keys
}

// moduleRoot is the folder of the go.mod of the module being measured.
func moduleRoot() (string, error) {
	out, err := runOutput("go", "env", "GOMOD")
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(out)
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run bench inside the compass-mcp module (go env GOMOD is empty)")
	}
	return filepath.Dir(mod), nil
}
