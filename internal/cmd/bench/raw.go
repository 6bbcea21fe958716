package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"
)

// rawStdio is a server over stdio driven with JSON-RPC lines written by hand. The client
// decodes nothing (it only finds the end of the answer's line), so the server's CPU time per
// call is what the call costs the server, whatever any client library would add.
type rawStdio struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
}

func startRaw(cmd *exec.Cmd) (*rawStdio, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = &tailBuffer{}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &rawStdio{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), next: 1}
	if _, err := r.request("initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"bench-raw","version":"1.0.0"}}`, protocol)); err != nil {
		r.close()
		return nil, err
	}
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// request sends one request and returns its answer's line, as sent.
func (r *rawStdio) request(method, params string) ([]byte, error) {
	id := r.next
	r.next++
	if _, err := fmt.Fprintf(r.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
		return nil, err
	}
	want := []byte(fmt.Sprintf(`"id":%d`, id))
	for {
		line, err := r.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s ended before answering %s: %w", filepath.Base(r.cmd.Path), method, err)
		}
		if bytes.Contains(line, want) { // one request at a time: the first line with its id
			return line, nil
		}
	}
}

// tool calls a tool; an error result is an error.
func (r *rawStdio) tool(name string, args any) ([]byte, error) {
	raw, err := json.Marshal(map[string]any{"name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	line, err := r.request("tools/call", string(raw))
	if err == nil && (bytes.Contains(line, []byte(`"isError":true`)) || bytes.Contains(line, []byte(`"error":{`))) {
		err = fmt.Errorf("%s: %.300s", name, line)
	}
	return line, err
}

func (r *rawStdio) pid() int { return r.cmd.Process.Pid }

func (r *rawStdio) close() error {
	r.in.Close()
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		r.cmd.Process.Kill()
		return <-done
	}
}

// measureRawRead is item 1's server side: read_document of the 100 KB document with a client
// that decodes nothing, and the filesystem server's read_text_file the same way, in turns. The
// figure is the server process's CPU time a call (/proc/<pid>/stat, over every call of a run).
func measureRawRead(ctx context.Context, o *options, bins binaries, r *report) error {
	calls, warm := 1000, 100
	if o.quick {
		calls, warm = 20, 5
	}
	doc := join(lines(2000, 1))
	cmd := exec.Command(bins.compass, "serve")
	cmd.Env = compassEnv(filepath.Join(o.work, "raw.db"))
	ours, err := startRaw(cmd)
	if err != nil {
		return err
	}
	defer ours.close()
	saved, err := ours.tool("write_document", map[string]any{"title": "Big plan", "text": doc})
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`/document/([0-9A-Z]{26})`).FindSubmatch(saved)
	if m == nil {
		return fmt.Errorf("write_document's answer names no document: %.300s", saved)
	}
	type side struct {
		name   string
		s      *rawStdio
		call   func() ([]byte, error)
		cpu    []time.Duration // server CPU a call, each run
		lat    *series
		answer int
	}
	sides := []*side{{name: "compass-mcp", s: ours, lat: newSeries(o.runs), call: func() ([]byte, error) {
		return ours.tool("read_document", map[string]any{"document": string(m[1])})
	}}}
	why := peerMissing(o)
	if why == "" {
		file := filepath.Join(o.work, "raw-fs", "big-plan.md")
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			return err
		}
		fs, err := startRaw(o.peerCommand(filepath.Dir(file)))
		if err != nil {
			return err
		}
		defer fs.close()
		sides = append(sides, &side{name: "filesystem server", s: fs, lat: newSeries(o.runs), call: func() ([]byte, error) {
			return fs.tool("read_text_file", map[string]any{"path": file})
		}})
	}
	for _, sd := range sides {
		for range warm {
			if _, err := sd.call(); err != nil {
				return err
			}
		}
	}
	for run := range o.runs {
		for _, sd := range sides {
			if err := ctx.Err(); err != nil {
				return err
			}
			before := cpuTime(sd.s.pid())
			for range calls {
				start := time.Now()
				line, err := sd.call()
				if err != nil {
					return err
				}
				sd.lat.add(run, time.Since(start))
				sd.answer = len(line)
			}
			sd.cpu = append(sd.cpu, (cpuTime(sd.s.pid())-before)/time.Duration(calls))
		}
	}
	median := func(ds []time.Duration) time.Duration {
		fs := make([]float64, len(ds))
		for i, d := range ds {
			fs[i] = float64(d)
		}
		return time.Duration(medianOf(fs))
	}
	b := r.section("1b. stdio, server side: read_document of 100 KB with a client that decodes nothing")
	fmt.Fprintf(b, "The same %d-byte document, read whole %d times a run by a client that writes JSON-RPC lines by hand and only looks for the\n", len(doc), calls)
	b.WriteString("end of each answer's line, so that no client library's decoding is in the figures; each server in turn, run after run.\n")
	b.WriteString("Server CPU a call is the server process's CPU time (/proc/<pid>/stat, 10 ms ticks) over a run's calls, divided by them.\n\n")
	b.WriteString("| server | answer | server CPU a call (median run) | runs | call, wall (median) | p90 |\n|---|---|---|---|---|---|\n")
	for _, sd := range sides {
		runs := ""
		for i, c := range sd.cpu {
			if i > 0 {
				runs += ", "
			}
			runs += ms(c)
		}
		s := sd.lat.summary()
		fmt.Fprintf(b, "| %s | %d B | %s | %s | %s | %s |\n", sd.name, sd.answer, ms(median(sd.cpu)), runs, ms(s.median), ms(s.p90))
	}
	oursCPU := median(sides[0].cpu)
	peer := "not measured: " + why
	if len(sides) > 1 {
		peer = ms(median(sides[1].cpu))
	}
	r.target(target{"1", "read_document, 100 KB, stdio: server CPU a call (raw client)", ms(oursCPU), peer, "≤ 0.4 ms",
		verdict(oursCPU <= 400*time.Microsecond, "see section 1b")})
	return nil
}
