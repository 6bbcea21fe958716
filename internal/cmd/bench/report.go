package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// report gathers what the measurements found, and writes it as Markdown.
type report struct {
	opts     *options
	started  time.Time
	took     time.Duration
	machine  []string
	load     []load
	targets  []target
	sections []*section
	spreads  []spreadNote
	fsync    summary // a 4 KB write and fsync where the data files are

	pgSettings string // what the PostgreSQL server measured beside bbolt commits with
}

// target is one line of the summary table.
type target struct {
	item, what, ours, peer, goal, verdict string
}

type section struct {
	title string
	body  strings.Builder
}

type spreadNote struct {
	what   string
	spread float64
}

func (r *report) target(t target) { r.targets = append(r.targets, t) }

// section starts a section of details and returns it to be written to.
func (r *report) section(title string) *strings.Builder {
	r.sections = append(r.sections, &section{title: title})
	return &r.sections[len(r.sections)-1].body
}

// sectionNamed is the section of that title, started if there is none yet.
func (r *report) sectionNamed(title string) *strings.Builder {
	for _, s := range r.sections {
		if s.title == title {
			return &s.body
		}
	}
	return r.section(title)
}

// noted records a summary's run-to-run spread for the noise paragraph.
func (r *report) noted(what string, s summary) {
	r.spreads = append(r.spreads, spreadNote{what, s.spread()})
}

// verdict says whether ok, with why when not.
func verdict(ok bool, why string) string {
	if ok {
		return "met"
	}
	return "**not met**: " + why
}

type load struct {
	when   string
	avg    string  // /proc/loadavg's first three fields
	others float64 // the share of the machine's CPU that other processes used during the step, or -1
}

// cpuCounters are the machine's busy CPU time (/proc/stat) and this process's and its
// waited-for children's, to tell how much of the machine others used meanwhile.
type cpuCounters struct {
	at                   time.Time
	busy, self, children time.Duration
}

func readCPUCounters() cpuCounters {
	c := cpuCounters{at: time.Now(), self: selfCPU()}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		c.children = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c.busy, _ = machineBusy()
	return c
}

// othersShare is the share of all cores that processes other than this one and its
// children used between a and b.
func othersShare(a, b cpuCounters) float64 {
	// /proc/stat counts in 10 ms ticks: too coarse for a step shorter than a second.
	if b.at.Sub(a.at) < time.Second || b.busy == 0 {
		return -1
	}
	wall := b.at.Sub(a.at) * time.Duration(runtime.NumCPU())
	others := (b.busy - a.busy) - (b.self - a.self) - (b.children - a.children)
	return min(1, max(0, float64(others)/float64(wall)))
}

func loadSample(when string) load {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return load{when: when, avg: "?", others: -1}
	}
	f := strings.Fields(string(raw))
	return load{when: when, avg: strings.Join(f[:3], " "), others: -1}
}

// readMachine describes the machine and the code measured.
func readMachine(root string) []string {
	var m []string
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(raw)) {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				m = append(m, fmt.Sprintf("%d × %s", runtime.NumCPU(), strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))))
				break
			}
		}
	}
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		if first, _, ok := strings.Cut(string(raw), "\n"); ok {
			m = append(m, "memory: "+strings.Join(strings.Fields(first)[1:], " "))
		}
	}
	m = append(m, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		m = append(m, "node "+strings.TrimSpace(string(out)))
	}
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		m = append(m, "compass-mcp at "+strings.TrimSpace(string(out)))
	}
	return m
}

func (r *report) write(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Performance\n\n")
	b.WriteString("What compass-mcp costs, measured end to end: the built server started as an MCP host starts it, driven by the\n")
	b.WriteString("official go-sdk client, beside the reference filesystem server (`@modelcontextprotocol/server-filesystem`,\n")
	b.WriteString("run with node) doing the same work on the same text, in the same run. Written by the command below; don't edit by hand.\n\n")
	b.WriteString("```sh\ninternal/cmd/bench/run.sh        # installs the filesystem server into internal/cmd/bench/node_modules, then: go run ./internal/cmd/bench\n```\n\n")
	if r.opts.quick {
		b.WriteString("**This is a `-quick` run: counts are too small for the figures to mean much.**\n\n")
	}
	fmt.Fprintf(&b, "Run %s, %d runs of each measurement, %s in all. Machine: %s.\n\n", r.started.Format("2006-01-02 15:04 MST"), r.opts.runs, r.took.Round(time.Second), strings.Join(r.machine, "; "))

	b.WriteString("## Targets\n\n")
	b.WriteString("| # | what | compass-mcp | filesystem server | target | |\n|---|---|---|---|---|---|\n")
	for _, t := range r.targets {
		if r.opts.quick && t.verdict != "" {
			t.verdict = "not judged (-quick)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", t.item, t.what, t.ours, t.peer, t.goal, t.verdict)
	}
	b.WriteString("\nTimes are the median of the runs' medians; the sections below give p90, p99 and each run's spread.\n\n")

	b.WriteString("## How noisy the machine was\n\n")
	b.WriteString("Load average (1, 5, 15 min) as the run went, which counts the benchmark's own processes too, and the share of the\n")
	b.WriteString("machine's CPU that other processes (other engineers' tests share these cores) used during each step:\n\n")
	for _, l := range r.load {
		fmt.Fprintf(&b, "- %s: load %s", l.when, l.avg)
		if l.others >= 0 {
			fmt.Fprintf(&b, "; others used %.0f%% of the %d cores", 100*l.others, runtime.NumCPU())
		}
		b.WriteString("\n")
	}
	if len(r.spreads) > 0 {
		b.WriteString("\nRun-to-run spread ((slowest run median − fastest) / median):")
		for i, s := range r.spreads {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(&b, "%s %s %.0f%%", sep, s.what, 100*s.spread)
		}
		b.WriteString(".\n")
	}
	if r.fsync.n > 0 {
		fmt.Fprintf(&b, "\nThe disk: a 4 KB write and fsync in the data files' folder takes %s (median of %d; p90 %s, max %s). A bbolt commit syncs twice.\n",
			ms(r.fsync.median), r.fsync.n, ms(r.fsync.p90), ms(r.fsync.mx))
	}
	b.WriteString("\n")
	for _, s := range r.sections {
		fmt.Fprintf(&b, "## %s\n\n%s\n", s.title, strings.TrimRight(s.body.String(), "\n")+"\n")
	}
	b.WriteString("## Profiles\n\n")
	b.WriteString("`go run ./internal/cmd/bench -profile DIR` writes CPU and allocation profiles of the hot paths into DIR: `edit_document` and\n")
	b.WriteString("`read_document` of the 100 KB document over stdio, and `read_document` by 16 clients over HTTP, each of a server built as\n")
	b.WriteString("`serve` builds it (`*.client.cpu.pprof` are of the go-sdk clients). `go tool pprof -top DIR/edit-stdio.cpu.pprof` shows one.\n")
	b.WriteString("The in-process benchmarks of the stores and the tools: `go test -run '^$' -bench . -benchmem ./docstore ./threads ./linediff ./tools`.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// latencyTable writes a table of latency summaries, one row per name.
func latencyTable(b *strings.Builder, rows []latencyRow) {
	b.WriteString("| call | samples | median | fastest–slowest run median | p50 | p90 | p99 | max |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		s := r.s
		fmt.Fprintf(b, "| %s | %d | %s | %s – %s | %s | %s | %s | %s |\n", r.name, s.n, ms(s.median), ms(s.lo), ms(s.hi), ms(s.p50), ms(s.p90), ms(s.p99), ms(s.mx))
	}
	b.WriteString("\n")
}

type latencyRow struct {
	name string
	s    summary
}
