package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"
)

// profile writes CPU and allocation profiles of the hot paths into o.profile:
// edit_document and read_document of a 100 KB document over stdio, and read_document of
// small documents over streamable HTTP by 16 clients. The server is bench -serve (tools.New,
// as serve builds it), so that it can write the profiles; *.client.cpu.pprof are of this
// process, the go-sdk clients. go tool pprof -top FILE shows them.
func profile(ctx context.Context, o *options, bins binaries) error {
	dir, err := filepath.Abs(o.profile)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	edits := 1000
	if o.quick {
		edits = 20
	}

	cmd := exec.Command(bins.self, "-serve", "stdio", "-data", filepath.Join(o.work, "profile-stdio.db"),
		"-cpuprofile", filepath.Join(dir, "edit-stdio.cpu.pprof"), "-allocprofile", filepath.Join(dir, "edit-stdio.allocs.pprof"))
	cmd.Env = compassEnv("")
	s, err := connectStdio(ctx, cmd)
	if err != nil {
		return err
	}
	text := lines(2000, 1)
	id, err := create(ctx, s, "Big plan", join(text))
	if err != nil {
		return err
	}
	start := time.Now()
	for n := range edits {
		k := (n * 7919) % len(text)
		next := fmt.Sprintf("%d. edited in edit %d, %s", k+1, n, strings.Repeat("x", 16))
		if _, err := call(ctx, s.ClientSession, "edit_document", map[string]any{"document": id, "old": text[k], "new": next}); err != nil {
			return err
		}
		text[k] = next
	}
	log.Printf("%d edits of 100 KB over stdio: %s each", edits, ms(time.Since(start)/time.Duration(edits)))
	s.Close()

	// Whole reads of the same 100 KB over stdio, profiling this process (the go-sdk client) too.
	cmd = exec.Command(bins.self, "-serve", "stdio", "-data", filepath.Join(o.work, "profile-stdio.db"),
		"-cpuprofile", filepath.Join(dir, "read-stdio.cpu.pprof"), "-allocprofile", filepath.Join(dir, "read-stdio.allocs.pprof"))
	cmd.Env = compassEnv("")
	if s, err = connectStdio(ctx, cmd); err != nil {
		return err
	}
	stopClient, err := profileSelf(filepath.Join(dir, "read-stdio.client.cpu.pprof"))
	if err != nil {
		return err
	}
	reads := edits / 2
	start = time.Now()
	for range reads {
		if _, err := call(ctx, s.ClientSession, "read_document", map[string]any{"document": id}); err != nil {
			return err
		}
	}
	stopClient()
	log.Printf("%d reads of 100 KB over stdio: %s each", reads, ms(time.Since(start)/time.Duration(reads)))
	s.Close()

	cmd = exec.Command(bins.self, "-serve", "http", "-data", filepath.Join(o.work, "profile-http.db"),
		"-cpuprofile", filepath.Join(dir, "read-http.cpu.pprof"), "-allocprofile", filepath.Join(dir, "read-http.allocs.pprof"))
	cmd.Env = compassEnv("")
	rig, err := startRig(ctx, cmd)
	if err != nil {
		return err
	}
	load := o.httpLoad()
	lat := newSeries(1)
	if stopClient, err = profileSelf(filepath.Join(dir, "read-http.client.cpu.pprof")); err != nil {
		return err
	}
	res, err := runPhase(ctx, rig.sessions, load.reads*4, 2*load.deadline, lat, 0, rig.read)
	stopClient()
	if err != nil {
		rig.close()
		return err
	}
	log.Printf("%d reads over HTTP by %d clients: %.0f/s, p90 %s", res.calls, clients, float64(res.calls)/res.elapsed.Seconds(), ms(lat.summary().p90))
	if err := rig.close(); err != nil {
		return err
	}
	log.Printf("profiles in %s; see them with: go tool pprof -top %s", dir, filepath.Join(dir, "edit-stdio.cpu.pprof"))
	return nil
}

// profileSelf profiles this process's CPU (the clients) into file until the returned stop.
func profileSelf(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
