package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// peerMissing says why the filesystem server can't be measured, or "" when it can.
func peerMissing(o *options) string {
	if _, err := exec.LookPath(o.node); err != nil {
		return "node is not installed"
	}
	if _, err := os.Stat(o.fsMain); err != nil {
		return "the filesystem server is not installed (internal/cmd/bench/run.sh installs it)"
	}
	return ""
}

func (o *options) peerCommand(dir string) *exec.Cmd {
	return exec.Command(o.node, o.fsMain, dir)
}

// rawToolsList starts cmd, says initialize, initialized and tools/list in raw JSON-RPC over
// its stdio, and returns the tools/list response line as sent (without its line break) and
// how many tools it lists.
func rawToolsList(cmd *exec.Cmd) (int, int, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}`+"\n", protocol)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	lines := make(chan []byte)
	go func() {
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	sent := false
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return 0, 0, fmt.Errorf("%s ended before answering tools/list", filepath.Base(cmd.Path))
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Result struct {
					Tools []json.RawMessage `json:"tools"`
				} `json:"result"`
			}
			if json.Unmarshal(line, &msg) != nil {
				continue
			}
			switch string(msg.ID) {
			case "1":
				if !sent {
					fmt.Fprint(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
					sent = true
				}
			case "2":
				return len(line), len(msg.Result.Tools), nil
			}
		case <-timeout:
			return 0, 0, fmt.Errorf("%s did not answer tools/list within 20s", filepath.Base(cmd.Path))
		}
	}
}

// measureToolsList is item 7: what every conversation pays for the tools' descriptions.
func measureToolsList(ctx context.Context, o *options, bins binaries, r *report) error {
	cmd := exec.Command(bins.compass, "serve")
	cmd.Env = compassEnv(filepath.Join(o.work, "toolslist.db"))
	ours, n, err := rawToolsList(cmd)
	if err != nil {
		return err
	}
	b := r.section("7. tools/list")
	fmt.Fprintf(b, "The whole JSON-RPC response to `tools/list`, as sent over stdio (protocol %s).\n\n", protocol)
	fmt.Fprintf(b, "- compass-mcp: %d bytes for %d tools (%d bytes a tool)\n", ours, n, ours/max(n, 1))
	peer := "not measured: " + peerMissing(o)
	if peerMissing(o) == "" {
		dir := filepath.Join(o.work, "toolslist-fs")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		theirs, tn, err := rawToolsList(o.peerCommand(dir))
		if err != nil {
			return err
		}
		peer = fmt.Sprintf("%d B (%d tools)", theirs, tn)
		fmt.Fprintf(b, "- filesystem server: %d bytes for %d tools (%d bytes a tool)\n", theirs, tn, theirs/max(tn, 1))
	}
	const goal = 6000
	r.target(target{"7", "tools/list response", fmt.Sprintf("%d B (%d tools)", ours, n), peer, "≤ 6 KB (6,000 B)",
		verdict(ours <= goal, fmt.Sprintf("%d B over; the tool descriptions (charter/) would have to be cut by that much", ours-goal))})
	return nil
}

var idPattern = regexp.MustCompile(`/document/([0-9A-Z]{26})`)

// create writes a new document through the tools and returns its id.
func create(ctx context.Context, cs *stdioSession, title, text string) (string, error) {
	answer, err := call(ctx, cs.ClientSession, "write_document", map[string]any{"title": title, "text": text})
	if err != nil {
		return "", err
	}
	m := idPattern.FindStringSubmatch(answer)
	if m == nil {
		return "", fmt.Errorf("write_document answered without a link: %q", answer)
	}
	return m[1], nil
}

// side is one server of the stdio comparison, and what its calls cost.
type side struct {
	name       string
	s          *stdioSession
	edit, read func(ctx context.Context, old, next string) (string, error)
	edits      *series
	reads      *series
	// CPU time over all calls (warm-up included): its process's, and this process's (the
	// go-sdk client) while waiting for its answers.
	serverEdit, serverRead, clientEdit, clientRead time.Duration
	calls                                          [2]int // edits, reads
}

// timed makes one call, adding its latency to lat (unless warming up) and this process's
// CPU time during it to client.
func timed(run int, warm bool, lat *series, client *time.Duration, call func() error) error {
	c0, start := selfCPU(), time.Now()
	err := call()
	d := time.Since(start)
	*client += selfCPU() - c0
	if !warm {
		lat.add(run, d)
	}
	return err
}

func perCall(d time.Duration, n int) time.Duration { return d / time.Duration(max(n, 1)) }

// measureStdio is item 1: a one-line edit and a whole read of a 100 KB document over stdio,
// compass-mcp and the filesystem server side by side, call for call.
func measureStdio(ctx context.Context, o *options, bins binaries, r *report) error {
	edits, reads, warm := 200, 100, 20
	if o.quick {
		edits, reads, warm = 10, 5, 2
	}
	text := lines(2000, 1)
	doc := join(text)

	cmd := exec.Command(bins.compass, "serve")
	cmd.Env = compassEnv(filepath.Join(o.work, "stdio.db"))
	s, err := connectStdio(ctx, cmd)
	if err != nil {
		return err
	}
	defer s.Close()
	id, err := create(ctx, s, "Big plan", doc)
	if err != nil {
		return err
	}
	ours := &side{name: "compass-mcp", s: s, edits: newSeries(o.runs), reads: newSeries(o.runs),
		edit: func(ctx context.Context, old, next string) (string, error) {
			return call(ctx, s.ClientSession, "edit_document", map[string]any{"document": id, "old": old, "new": next})
		},
		read: func(ctx context.Context, _, _ string) (string, error) {
			return call(ctx, s.ClientSession, "read_document", map[string]any{"document": id})
		},
	}
	sides := []*side{ours}

	why := peerMissing(o)
	var theirs *side
	if why == "" {
		file := filepath.Join(o.work, "fs", "big-plan.md")
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			return err
		}
		fs, err := connectStdio(ctx, o.peerCommand(filepath.Dir(file)))
		if err != nil {
			return err
		}
		defer fs.Close()
		theirs = &side{name: "filesystem server", s: fs, edits: newSeries(o.runs), reads: newSeries(o.runs),
			edit: func(ctx context.Context, old, next string) (string, error) {
				return call(ctx, fs.ClientSession, "edit_file", map[string]any{"path": file, "edits": []map[string]any{{"oldText": old, "newText": next}}})
			},
			read: func(ctx context.Context, _, _ string) (string, error) {
				return call(ctx, fs.ClientSession, "read_text_file", map[string]any{"path": file})
			},
		}
		sides = append(sides, theirs)
	}

	// In turn, each side first in every other call, so that both see the same machine.
	inTurn := func(i int, fn func(sd *side) error) error {
		for k := range sides {
			if err := fn(sides[(i+k)%len(sides)]); err != nil {
				return err
			}
		}
		return nil
	}
	phase := func(server func(sd *side) *time.Duration, fn func() error) error {
		before := make([]time.Duration, len(sides))
		for k, sd := range sides {
			before[k] = cpuTime(sd.s.pid())
		}
		err := fn()
		for k, sd := range sides {
			*server(sd) += cpuTime(sd.s.pid()) - before[k]
		}
		return err
	}
	n := 0 // edits made so far, for the next line to change
	for run := range o.runs {
		err := phase(func(sd *side) *time.Duration { return &sd.serverEdit }, func() error {
			for i := range warm + edits {
				k := (n * 7919) % len(text)
				old, next := text[k], fmt.Sprintf("%d. edited in edit %d, %s", k+1, n, strings.Repeat("x", 16))
				text[k] = next
				n++
				err := inTurn(i, func(sd *side) error {
					sd.calls[0]++
					return timed(run, i < warm, sd.edits, &sd.clientEdit, func() error {
						_, err := sd.edit(ctx, old, next)
						return err
					})
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		want := join(text)
		err = phase(func(sd *side) *time.Duration { return &sd.serverRead }, func() error {
			for i := range warm + reads {
				err := inTurn(i, func(sd *side) error {
					sd.calls[1]++
					var got string
					err := timed(run, i < warm, sd.reads, &sd.clientRead, func() (err error) {
						got, err = sd.read(ctx, "", "")
						return err
					})
					if err == nil && !strings.HasSuffix(got, want) && !strings.HasSuffix(got+"\n", want) {
						err = fmt.Errorf("%s's read did not give back the text edited so far", sd.name)
					}
					return err
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}

	oe, or := ours.edits.summary(), ours.reads.summary()
	r.noted("stdio edit", oe)
	r.noted("stdio read", or)
	b := r.section("1. stdio: a 100 KB document, compass-mcp beside the filesystem server")
	fmt.Fprintf(b, "A %d-byte Markdown document of %d lines. Each run makes %d one-line edits (`edit_document` / `edit_file`, a different line each time,\n", len(doc), len(text), edits)
	fmt.Fprintf(b, "the same edits on both) and then %d whole reads (`read_document` / `read_text_file`), after %d warm-up calls not counted. Calls alternate\n", reads, warm)
	b.WriteString("between the two servers, one at a time, so both see the same machine. compass-mcp commits every edit to bbolt with fsync\n")
	b.WriteString("and keeps it as a new version; the filesystem server writes a temporary file and renames it, without fsync, and keeps no history.\n")
	b.WriteString("Its answers carry the text twice (`content` and `structuredContent`); compass-mcp's once, after a header line.\n\n")
	var rows []latencyRow
	for _, what := range []struct {
		call string
		s    func(*side) *series
	}{{"edit", func(sd *side) *series { return sd.edits }}, {"read", func(sd *side) *series { return sd.reads }}} {
		for _, sd := range sides {
			rows = append(rows, latencyRow{sd.name + " " + what.call, what.s(sd).summary()})
		}
	}
	latencyTable(b, rows)
	b.WriteString("CPU time a call cost, on average, warm-up calls included: the server process's (/proc/<pid>/stat), and the go-sdk client's\n")
	b.WriteString("(this process's, getrusage) while it waited for that server's answer: sending the request, reading and decoding the answer.\n\n")
	b.WriteString("| server | edit: server CPU | edit: client CPU | read: server CPU | read: client CPU | resident memory after (peak) |\n|---|---|---|---|---|---|\n")
	for _, sd := range sides {
		mem, _ := memoryOf(sd.s.pid())
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s (%s) |\n", sd.name, ms(perCall(sd.serverEdit, sd.calls[0])), ms(perCall(sd.clientEdit, sd.calls[0])),
			ms(perCall(sd.serverRead, sd.calls[1])), ms(perCall(sd.clientRead, sd.calls[1])), mib(mem.rss), mib(mem.hwm))
	}
	if theirs == nil {
		b.WriteString("\nThe filesystem server was not measured: " + why + ".\n")
		r.target(target{"1", "edit_document, 100 KB, stdio", ms(oe.median), "not measured", "≤ 0.5× the filesystem server's edit_file", "not measured: " + why})
		r.target(target{"1", "read_document, 100 KB, stdio", ms(or.median), "not measured", "≤ 0.2× the filesystem server's read_text_file", "not measured: " + why})
		return nil
	}
	te, tr := theirs.edits.summary(), theirs.reads.summary()
	r.noted("filesystem edit", te)
	r.noted("filesystem read", tr)
	editRatio, readRatio := float64(oe.median)/float64(te.median), float64(or.median)/float64(tr.median)
	fmt.Fprintf(b, "\nRatios of medians (compass-mcp / filesystem server): edit %.2f×, read %.2f×.\n", editRatio, readRatio)

	// What the targets would take: the budget left for the server once the client's CPU (and,
	// for an edit, two fsyncs) are paid.
	syncs := 2 * r.fsync.median
	clientEdit, serverEdit := perCall(ours.clientEdit, ours.calls[0]), perCall(ours.serverEdit, ours.calls[0])
	editBudget := te.median/2 - clientEdit - syncs
	editWhy := fmt.Sprintf("0.5× theirs is %s; it would take the server's CPU per edit down from %s to about %s (the client takes %s, two fsyncs %s). Profile: `go run ./internal/cmd/bench -profile DIR`",
		ms(te.median/2), ms(serverEdit), ms(max(editBudget, 0)), ms(clientEdit), ms(syncs))
	clientRead, serverRead := perCall(ours.clientRead, ours.calls[1]), perCall(ours.serverRead, ours.calls[1])
	readWhy := fmt.Sprintf("0.2× theirs is %s; our call costs the go-sdk client %s of CPU (decoding the 100 KB answer) and the server %s", ms(tr.median/5), ms(clientRead), ms(serverRead))
	if clientRead >= tr.median/5 {
		readWhy += ": the client alone takes more than the target, so no server can meet it with this client"
	} else {
		readWhy += fmt.Sprintf(": it would take the server's CPU down to about %s. Profile: `go run ./internal/cmd/bench -profile DIR`", ms(tr.median/5-clientRead))
	}
	r.target(target{"1", "edit_document, 100 KB, stdio (durable, versioned)", fmt.Sprintf("%s (p90 %s)", ms(oe.median), ms(oe.p90)), fmt.Sprintf("%s (p90 %s)", ms(te.median), ms(te.p90)),
		"≤ 0.5× theirs", fmt.Sprintf("%.2f×: ", editRatio) + verdict(editRatio <= 0.5, editWhy)})
	r.target(target{"1", "read_document, 100 KB, stdio", fmt.Sprintf("%s (p90 %s)", ms(or.median), ms(or.p90)), fmt.Sprintf("%s (p90 %s)", ms(tr.median), ms(tr.p90)),
		"≤ 0.2× theirs", fmt.Sprintf("%.2f×: ", readRatio) + verdict(readRatio <= 0.2, readWhy)})
	return nil
}

// measureOverhead is item 3: the same client calling a no-op tool and read_document of a
// small document on one server (tools.New plus a no-op tool, over stdio).
func measureOverhead(ctx context.Context, o *options, bins binaries, r *report) error {
	calls, warm, cold := 300, 30, 8
	if o.quick {
		calls, warm, cold = 20, 3, 2
	}
	cmd := exec.Command(bins.self, "-serve", "stdio", "-data", filepath.Join(o.work, "overhead.db"))
	cmd.Env = compassEnv("")
	s, err := connectStdio(ctx, cmd)
	if err != nil {
		return err
	}
	defer s.Close()
	small := join(lines(4, 2))
	id, err := create(ctx, s, "Small note", small)
	if err != nil {
		return err
	}
	noop, read := newSeries(o.runs), newSeries(o.runs)
	for run := range o.runs {
		for i := range warm + calls {
			for pass := range 2 {
				start := time.Now()
				if (pass == 0) == (i%2 == 0) {
					if _, err := call(ctx, s.ClientSession, "noop", nil); err != nil {
						return err
					}
					if i >= warm {
						noop.add(run, time.Since(start))
					}
				} else {
					if _, err := call(ctx, s.ClientSession, "read_document", map[string]any{"document": id}); err != nil {
						return err
					}
					if i >= warm {
						read.add(run, time.Since(start))
					}
				}
			}
		}
	}
	// After an idle spell the server has let go of the data file (bolt.DefaultIdle) and
	// opens it again for the call.
	coldRead := newSeries(o.runs)
	for run := range o.runs {
		for range cold {
			time.Sleep(120 * time.Millisecond)
			start := time.Now()
			if _, err := call(ctx, s.ClientSession, "read_document", map[string]any{"document": id}); err != nil {
				return err
			}
			coldRead.add(run, time.Since(start))
		}
	}
	ns, rs, cs := noop.summary(), read.summary(), coldRead.summary()
	r.noted("no-op", ns)
	r.noted("small read", rs)
	ratio := float64(rs.median) / float64(ns.median)
	b := r.section("3. Overhead of the tools over mcp-go")
	fmt.Fprintf(b, "One server over stdio: `tools.New` (as `compass-mcp serve` builds it, on a data file held while in use, served by `transport.ServeStdio`) plus a tool `noop`\n")
	fmt.Fprintf(b, "that binds no arguments and answers \"ok\". The same go-sdk client alternates `noop` and `read_document` of a %d-byte document.\n", len(small))
	fmt.Fprintf(b, "A third row is `read_document` after 120 ms without calls, when the server has let go of the data file and opens it again (%d a run).\n\n", cold)
	latencyTable(b, []latencyRow{{"noop (transport and mcp-go alone)", ns}, {"read_document, small", rs}, {"read_document after 120 ms idle", cs}})
	fmt.Fprintf(b, "read_document / noop: %.2f× (medians); the tool's own work is %s a call.\n", ratio, ms(rs.median-ns.median))
	r.target(target{"3", "read_document (small) vs a no-op tool, stdio", fmt.Sprintf("%s vs %s", ms(rs.median), ms(ns.median)), "", "≤ 1.5×",
		fmt.Sprintf("%.2f×: ", ratio) + verdict(ratio <= 1.5, "see section 3")})
	return nil
}
