package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// allTargets are the platforms released: every desktop people run Claude Desktop or an
// editor on, and the servers a team runs compass-mcp on.
var allTargets = []string{"darwin/arm64", "darwin/amd64", "windows/amd64", "windows/arm64", "linux/amd64", "linux/arm64"}

// source is what the binaries are built from.
type source struct {
	commit string    // the full hash, +dirty when the tree had changes
	time   time.Time // the commit's time (or SOURCE_DATE_EPOCH): every file's time in the archives
}

type config struct {
	root, out, version string
	src                source
	targets            []string
	// registry, if set, is where server.json is written besides out: the repository's
	// root, by a whole release (every target), which is what the registry is given.
	registry string
}

var semver = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// release builds cfg.targets into cfg.out (emptied first) and returns the names of the
// files written there, server.json and SHA256SUMS last (server.json, which holds the
// bundle's digest itself, is not in SHA256SUMS).
func release(cfg config) ([]string, error) {
	if !semver.MatchString(cfg.version) {
		return nil, fmt.Errorf("version %q is not semver like 1.2.3 (no v): the bundle's manifest needs one", cfg.version)
	}
	if err := emptyOut(cfg.out); err != nil {
		return nil, err
	}
	bin := filepath.Join(cfg.out, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(bin)
	readme, err := os.ReadFile(filepath.Join(cfg.root, "README.md"))
	if err != nil {
		return nil, err
	}
	license, err := os.ReadFile(filepath.Join(cfg.root, "LICENSE"))
	if err != nil {
		return nil, err
	}
	binaries := map[string][]byte{} // by target
	var names []string
	for _, t := range cfg.targets {
		goos, goarch, ok := strings.Cut(t, "/")
		if !ok {
			return nil, fmt.Errorf("target %q is not GOOS/GOARCH", t)
		}
		exe := "compass-mcp"
		if goos == "windows" {
			exe += ".exe"
		}
		path := filepath.Join(bin, goos+"_"+goarch, exe)
		start := time.Now()
		if err := goBuild(cfg, goos, goarch, path); err != nil {
			return nil, err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		slog.Info("built", "target", t, "bytes", len(b), "took", time.Since(start).Round(time.Millisecond))
		binaries[t] = b
		dir := fmt.Sprintf("compass-mcp_%s_%s_%s", cfg.version, goos, goarch)
		files := []file{
			{name: dir + "/" + exe, data: b, mode: 0o755},
			{name: dir + "/LICENSE", data: license, mode: 0o644},
			{name: dir + "/README.md", data: readme, mode: 0o644},
		}
		var archive []byte
		if goos == "windows" {
			archive, err = zipFiles(files, cfg.src.time)
			dir += ".zip"
		} else {
			archive, err = tarGz(files, cfg.src.time)
			dir += ".tar.gz"
		}
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(cfg.out, dir), archive, 0o644); err != nil {
			return nil, err
		}
		names = append(names, dir)
	}
	name, err := writeBundle(cfg, binaries)
	if err != nil {
		return nil, err
	}
	names = append(names, name)
	sort.Strings(names)
	var sums bytes.Buffer
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(cfg.out, n))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(b), n)
	}
	if err := os.WriteFile(filepath.Join(cfg.out, "SHA256SUMS"), sums.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return append(names, "server.json", "SHA256SUMS"), nil
}

// emptyOut empties out, a folder an earlier release wrote into; a folder holding anything else
// (-out . by mistake) is refused rather than emptied.
func emptyOut(out string) error {
	entries, err := os.ReadDir(out)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		return err
	}
	for _, e := range entries {
		if n := e.Name(); n != "SHA256SUMS" && n != "server.json" && n != "bundle" && n != "bin" && !strings.HasPrefix(n, "compass-mcp_") {
			return fmt.Errorf("%s holds %s, which no release wrote: give a new or empty folder (-out)", out, n)
		}
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(out, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// goBuild builds compass-mcp for goos/goarch into path, statically and reproducibly: the
// environment that could change the bytes is set here, not taken from the caller's (whose
// GOFLAGS, GOAMD64 or CGO_ENABLED may say otherwise).
func goBuild(cfg config, goos, goarch, path string) error {
	ldflags := fmt.Sprintf("-s -w -X github.com/compass-mcp/compass-mcp/internal/version.stamped=%s -X github.com/compass-mcp/compass-mcp/internal/version.commit=%s", cfg.version, cfg.src.commit)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", path, "./cmd/compass-mcp")
	cmd.Dir = cfg.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=-mod=readonly",
		"GOEXPERIMENT=", "GOAMD64=v1", "GOARM64=v8.0", "GO386=", "GOARM=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building for %s/%s: %w", goos, goarch, err)
	}
	return nil
}

// moduleRoot is the folder of the go.mod of the module being released.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the compass-mcp module: run this from the repository")
	}
	return filepath.Dir(mod), nil
}

// sourceOf asks git for the commit at root and its time; commit, if set, names the commit
// instead (a build from a source archive, where there is no git). SOURCE_DATE_EPOCH, if
// set, gives the time (https://reproducible-builds.org/specs/source-date-epoch/).
func sourceOf(root, commit string, allowDirty bool) (source, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w (give -commit, and SOURCE_DATE_EPOCH, to build without git)", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	var src source
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if commit != "" {
		src.commit = commit
	} else {
		var err error
		if src.commit, err = git("rev-parse", "HEAD"); err != nil {
			return source{}, err
		}
		changes, err := git("status", "--porcelain")
		if err != nil {
			return source{}, err
		}
		if changes != "" {
			if !allowDirty {
				return source{}, fmt.Errorf("the work tree has uncommitted changes, so the binaries would not be commit %s: commit them, or give -allow-dirty", src.commit)
			}
			src.commit += "+dirty"
		}
		if epoch == "" {
			if epoch, err = git("log", "-1", "--format=%ct", "HEAD"); err != nil {
				return source{}, err
			}
		}
	}
	if epoch == "" {
		return source{}, fmt.Errorf("with -commit, set SOURCE_DATE_EPOCH (the commit's time, in seconds since 1970) too")
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return source{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", epoch, err)
	}
	src.time = time.Unix(sec, 0).UTC()
	return src, nil
}
