package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// protocol is what every client here asks for: the newest version negotiated in initialize,
// which both servers speak, so that the two are measured on the same footing.
const protocol = "2025-11-25"

// binaries are the programs the benchmark starts.
type binaries struct {
	compass string // compass-mcp, built from the module
	self    string // this command, for -serve and -worst
}

func build(o *options) (binaries, error) {
	b := binaries{compass: filepath.Join(o.work, "compass-mcp")}
	cmd := exec.Command("go", "build", "-o", b.compass, "./cmd/compass-mcp")
	cmd.Dir = o.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return b, fmt.Errorf("building compass-mcp: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		return b, err
	}
	b.self = self
	return b, nil
}

func runOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return string(out), nil
}

// compassEnv is what every compass-mcp process here runs with.
func compassEnv(data string) []string {
	return append(os.Environ(), "COMPASS_DATA="+data, "COMPASS_SPACE=personal", "COMPASS_ME=ana", "COMPASS_AGENT=bench", "COMPASS_LOG=warn", "COMPASS_WEB=off")
}

// stdioSession is a server started over stdio with a go-sdk client session on it.
type stdioSession struct {
	*mcp.ClientSession
	cmd    *exec.Cmd
	stderr *tailBuffer
}

func (s *stdioSession) pid() int { return s.cmd.Process.Pid }

func connectStdio(ctx context.Context, cmd *exec.Cmd) (*stdioSession, error) {
	tail := &tailBuffer{}
	cmd.Stderr = tail
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cs, err := c.Connect(cctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w\n%s", filepath.Base(cmd.Path), err, tail)
	}
	return &stdioSession{ClientSession: cs, cmd: cmd, stderr: tail}, nil
}

// call calls a tool and returns its text, refusing an error result.
func call(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("%s refused: %s", tool, b.String())
	}
	return b.String(), nil
}

// httpServer is a server process serving streamable HTTP on loopback.
type httpServer struct {
	cmd    *exec.Cmd
	url    string
	stderr *tailBuffer
	done   chan error
}

var urlPattern = regexp.MustCompile(`url=(http://\S+/mcp)`)

// startHTTP starts cmd, which must log "url=http://.../mcp" on stderr once it listens.
func startHTTP(cmd *exec.Cmd) (*httpServer, error) {
	tail := &tailBuffer{}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &httpServer{cmd: cmd, stderr: tail, done: make(chan error, 1)}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			tail.Write([]byte(line + "\n"))
			if m := urlPattern.FindStringSubmatch(line); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		s.done <- cmd.Wait()
	}()
	select {
	case s.url = <-urls:
		return s, nil
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("%s said no URL within 20s:\n%s", filepath.Base(cmd.Path), tail)
	}
}

// stop asks the server to finish (SIGINT) and waits for it.
func (s *httpServer) stop() error {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-s.done:
		return err
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		return fmt.Errorf("the HTTP server did not stop within 15s of SIGINT")
	}
}

// httpClient is shared by every session to one server: enough idle connections that 16
// concurrent clients don't open a new one per call (http.DefaultTransport keeps 2 per host).
func httpClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        128,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     90 * time.Second,
	}}
}

func connectHTTP(ctx context.Context, url string, hc *http.Client) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
}

// memory is a process's resident memory now (VmRSS) and at its highest (VmHWM), in bytes.
type memory struct{ rss, hwm int64 }

func memoryOf(pid int) (memory, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	var m memory
	for line := range strings.Lines(string(raw)) {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(value)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		kb, _ := strconv.ParseInt(f[0], 10, 64)
		switch name {
		case "VmRSS":
			m.rss = kb << 10
		case "VmHWM":
			m.hwm = kb << 10
		}
	}
	return m, nil
}

// rssSampler records the highest VmRSS of a process, sampled every 20 ms until stopped.
type rssSampler struct {
	stopC chan struct{}
	done  chan int64
}

func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{stopC: make(chan struct{}), done: make(chan int64, 1)}
	go func() {
		var most int64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if m, err := memoryOf(pid); err == nil {
				most = max(most, m.rss)
			}
			select {
			case <-s.stopC:
				s.done <- most
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) stop() int64 {
	close(s.stopC)
	return <-s.done
}

// tailBuffer keeps the last 8 KB written to it: a server's stderr, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if t.buf.Len() > 8<<10 {
		rest := t.buf.Bytes()[t.buf.Len()-8<<10:]
		t.buf = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// cpuTime is the CPU time (user and system) a process has used so far, from
// /proc/<pid>/stat, in clock ticks of 10 ms.
func cpuTime(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after it are plain.
	_, rest, ok := strings.Cut(string(raw), ") ")
	if !ok {
		return 0
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// selfCPU is the CPU time this process (the clients) has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
