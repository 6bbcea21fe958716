package pgproxy

import (
	"net"
	"slices"
	"testing"
	"time"
)

// BenchmarkRoundTrip measures what a round trip through the proxy costs, to an echo server
// on loopback, with no delay and with 1 ms: the delay the latency benchmarks add to each of
// a call's round trips, as it is, not as asked.
//
//	go test -run '^$' -bench RoundTrip -benchtime 300x ./internal/testkit/pgproxy
func BenchmarkRoundTrip(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if err != nil {
						c.Close()
						return
					}
					c.Write(buf[:n])
				}
			}()
		}
	}()
	for _, delay := range []time.Duration{0, time.Millisecond} {
		b.Run(delay.String(), func(b *testing.B) {
			p, err := Start(ln.Addr().String(), delay)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			c, err := net.Dial("tcp", p.ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			buf := make([]byte, 64)
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := c.Write(buf); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < len(buf); {
					n, err := c.Read(buf[got:])
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
		})
	}
}
