// Command release builds compass-mcp's release from the repository, in one command:
//
//	go run ./internal/cmd/release                    # every platform, into dist/
//	go run ./internal/cmd/release -targets host      # this machine's only (what CI checks)
//
// For each target it builds a static binary (CGO_ENABLED=0, -trimpath, -buildvcs=false,
// -ldflags setting the version and commit) and puts it in an archive (.tar.gz; .zip for
// Windows) with the README and LICENSE; then it packs the MCP Bundle for Claude Desktop
// (compass-mcp_VERSION.mcpb: one bundle, every desktop, see bundle.go), the MCP Registry's
// server.json for it (registry.go; a whole release writes it at the repository's root too),
// and SHA256SUMS.
// Every file is reproducible: the same commit gives the same bytes, whoever builds it, since
// nothing depends on the machine, the folder or the clock (times are the commit's, or
// SOURCE_DATE_EPOCH).
//
// The version released is version.Release, the one the server tells clients in initialize:
// to release a new version, change it there, commit, and tag the commit v<version>. One
// number in one place, so that --version, the archives, the bundle's manifest and the
// server agree.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/compass-mcp/compass-mcp/internal/version"
)

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	out := fs.String("out", "dist", "the folder to write the release into (emptied first, if an earlier release wrote it)")
	targets := fs.String("targets", "all", `comma-separated GOOS/GOARCH pairs, "all" (`+strings.Join(allTargets, ", ")+`), or "host" (this machine's)`)
	commit := fs.String("commit", "", "if set, the commit to say the binaries were built from (default: git rev-parse HEAD)")
	manifestOnly := fs.String("manifest-only", "", "if set, write only the release's manifest.json and icon (every platform) into this folder, building nothing")
	dirty := fs.Bool("allow-dirty", false, "build even if the work tree has uncommitted changes (the commit is then marked +dirty)")
	if err := fs.Parse(args); err == flag.ErrHelp {
		return nil
	} else if err != nil {
		return err
	}
	if *manifestOnly != "" {
		return writeReleaseManifest(*manifestOnly, version.Release)
	}
	var list []string
	switch *targets {
	case "all":
		list = allTargets
	case "host":
		list = []string{runtime.GOOS + "/" + runtime.GOARCH}
	default:
		list = strings.Split(*targets, ",")
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	src, err := sourceOf(root, *commit, *dirty)
	if err != nil {
		return err
	}
	outDir, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	cfg := config{root: root, out: outDir, version: version.Release, src: src, targets: list}
	if *targets == "all" {
		// The whole release is the one published: its server.json is the repository's too.
		cfg.registry = filepath.Join(root, "server.json")
	}
	files, err := release(cfg)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Println(filepath.Join(*out, f))
	}
	return nil
}
