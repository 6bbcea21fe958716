package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// measurePage runs the person's page's benchmarks (go test -bench in ./web: they render
// through the page's handlers in-process, on a real data file) and reports their figures:
// a document page's server time, the list at 100 and 10,000 documents, and how long after
// an agent's save an open page hears of it.
func measurePage(ctx context.Context, o *options, _ binaries, r *report) error {
	times := "20x"
	if o.quick {
		times = "2x"
	}
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^Benchmark(DocumentPage|List|LiveUpdate)$",
		"-benchmem", "-benchtime", times, "-count", strconv.Itoa(o.runs), "./web")
	cmd.Dir = o.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go test -bench ./web: %w\n%s", err, out)
	}
	runs := parseBench(string(out))
	med := func(name, unit string) float64 {
		vs := runs[name][unit]
		if len(vs) == 0 {
			return -1
		}
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	msOf := func(name string) float64 { return med(name, "ns/op") / 1e6 }

	for _, size := range []struct {
		name, shown string
		goal        float64
	}{{"100KB", "100 KB", 10}, {"1MB", "1 MB", 100}} {
		cold, warm := "DocumentPage/"+size.name+"/cold", "DocumentPage/"+size.name+"/warm"
		wall, cpu := msOf(cold), med(cold, "cpu-ms/op")
		r.target(target{item: "page", what: "document page, " + size.shown + ", server time (first view / later views)",
			ours:    fmt.Sprintf("%.1f ms (%.1f ms CPU) / %.1f ms", wall, cpu, msOf(warm)),
			goal:    fmt.Sprintf("≤ %.0f ms", size.goal),
			verdict: verdict(wall <= size.goal, fmt.Sprintf("the first view of a version takes %.1f ms (goldmark parsing about half, bluemonday a third); later views, from the kept HTML, %.1f ms", wall, msOf(warm)))})
	}
	l100, l10k := med("List/100", "cpu-ms/op"), med("List/10000", "cpu-ms/op")
	r.target(target{item: "page", what: "document list (first page of 50) at 10,000 documents vs 100",
		ours: fmt.Sprintf("%.2f ms vs %.2f ms CPU", l10k, l100), goal: "the same (paged)",
		verdict: verdict(l10k <= 1.5*l100, fmt.Sprintf("%.1f× the cost at 100", l10k/l100))})
	live, worst := med("LiveUpdate", "ms/update"), med("LiveUpdate", "max-ms")
	r.target(target{item: "page", what: "live update: the agent's save acknowledged → the open page's event",
		ours: fmt.Sprintf("%.0f ms mean, %.0f ms slowest", live, worst), goal: "≤ 200 ms",
		verdict: verdict(worst <= 200, fmt.Sprintf("the slowest took %.0f ms", worst))})

	b := r.section("The person's page")
	b.WriteString("From `go test -run '^$' -bench . -benchmem ./web` (" + times + " each, " + strconv.Itoa(o.runs) + " runs; medians): the page's handlers called in-process on a real\n")
	b.WriteString("data file, as the server calls them, without the network. A document page reads the latest version, renders its Markdown\n")
	b.WriteString("(goldmark, then bluemonday) and fills the template; a version's HTML is kept once made (versions never change), so\n")
	b.WriteString("\"cold\" is a version's first view and \"warm\" every later one. The targets are judged on wall time (what a browser\n")
	b.WriteString("waits); CPU time is the process's on both cores, GC included, and steadier when others share the machine. The live update is\n")
	b.WriteString("a save through the data file, as another process's\n")
	b.WriteString("would be: the page hears of it by watching the file (a stat every 50 ms while a page listens), not by being told.\n\n")
	b.WriteString("| benchmark | wall ms/op | CPU ms/op | allocated/op | other |\n|---|---|---|---|---|\n")
	names := make([]string, 0, len(runs))
	for name := range runs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		other := ""
		if v := med(name, "ms/update"); v >= 0 {
			other = fmt.Sprintf("%.1f ms mean after the save, %.1f ms slowest", v, med(name, "max-ms"))
		}
		cpu := "–"
		if v := med(name, "cpu-ms/op"); v >= 0 {
			cpu = fmt.Sprintf("%.2f", v)
		}
		fmt.Fprintf(b, "| %s | %.2f | %s | %.0f KB | %s |\n", name, msOf(name), cpu, med(name, "B/op")/1000, other)
	}
	b.WriteString("\nThe browser tests (`go test ./web/browser`) also log how long chromium took to show an agent's new version, saved by\n")
	b.WriteString("another process, after that process returned.\n")
	return nil
}

var benchLine = regexp.MustCompile(`^Benchmark(\S+?)(-\d+)?\s+\d+\s+(.*)$`)

// parseBench reads go test -bench output into each benchmark's values by unit, one a run.
func parseBench(out string) map[string]map[string][]float64 {
	runs := map[string]map[string][]float64{}
	for _, line := range strings.Split(out, "\n") {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		if runs[m[1]] == nil {
			runs[m[1]] = map[string][]float64{}
		}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				runs[m[1]][f[i+1]] = append(runs[m[1]][f[i+1]], v)
			}
		}
	}
	return runs
}
