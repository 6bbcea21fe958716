package main

import (
	"fmt"
	"slices"
	"time"
)

// series holds the latencies of one measurement, run by run.
type series struct {
	runs [][]time.Duration
}

func newSeries(runs int) *series { return &series{runs: make([][]time.Duration, runs)} }

func (s *series) add(run int, d time.Duration) { s.runs[run] = append(s.runs[run], d) }

// summary is what a series is reported as: the median of the runs' medians, the spread of
// those medians (how noisy the machine was), and percentiles of all samples together.
type summary struct {
	n                 int
	median, lo, hi    time.Duration // median of run medians; lowest and highest run median
	p50, p90, p99, mx time.Duration // over every sample
}

func (s *series) summary() summary {
	var all, medians []time.Duration
	for _, r := range s.runs {
		if len(r) == 0 {
			continue
		}
		all = append(all, r...)
		medians = append(medians, percentile(r, 50))
	}
	if len(all) == 0 {
		return summary{}
	}
	slices.Sort(medians)
	return summary{
		n:      len(all),
		median: percentile(medians, 50),
		lo:     medians[0],
		hi:     medians[len(medians)-1],
		p50:    percentile(all, 50),
		p90:    percentile(all, 90),
		p99:    percentile(all, 99),
		mx:     slices.Max(all),
	}
}

// spread is how far apart the runs' medians were, relative to their median.
func (m summary) spread() float64 {
	if m.median == 0 {
		return 0
	}
	return float64(m.hi-m.lo) / float64(m.median)
}

// percentile is the nearest-rank p-th percentile of ds (which it doesn't change).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if p >= 100 {
		return s[len(s)-1]
	}
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// medianOf is the median of values.
func medianOf(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ms shows a duration in milliseconds, with precision that suits its size.
func ms(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	switch {
	case f == 0:
		return "0 ms"
	case f < 1:
		return fmt.Sprintf("%.3f ms", f)
	case f < 10:
		return fmt.Sprintf("%.2f ms", f)
	case f < 100:
		return fmt.Sprintf("%.1f ms", f)
	default:
		return fmt.Sprintf("%.0f ms", f)
	}
}

// size shows a byte count in B, KB or MB (of 1,000 and 1,000,000 bytes: targets are said so).
func size(n int64) string {
	switch {
	case n < 10_000:
		return fmt.Sprintf("%d B", n)
	case n < 10_000_000:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
}

// mib shows a memory size in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
