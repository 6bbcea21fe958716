package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/macho"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/mcpb"
	"github.com/compass-mcp/compass-mcp/internal/version"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/tools"
)

// Building the same commit twice gives the same bytes (every archive, the bundle and
// SHA256SUMS), though the second build is from a copy of the source in another folder, in
// an environment set to change the binary if the builder let it (GOFLAGS, GOAMD64,
// CGO_ENABLED). One platform only, to keep the tests quick (go run ./internal/cmd/release
// builds all six the same way). Both builds share the build cache: that the compiler gives
// the same bytes for the same inputs is the Go toolchain's promise (perfectly reproducible
// since Go 1.21); what is checked here is what the builder controls. The builder runs as
// people run it, go run, which also keeps its compressing out of this race-checked test.
func TestReproducible(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := source{commit: "0123456789abcdef0123456789abcdef01234567", time: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	build := func(dir string, env ...string) string {
		out := t.TempDir()
		cmd := exec.Command("go", "run", "./internal/cmd/release", "-targets", "linux/amd64", "-commit", src.commit, "-out", out)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append([]string{"SOURCE_DATE_EPOCH=" + strconv.FormatInt(src.time.Unix(), 10)}, env...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go run ./internal/cmd/release in %s: %v\n%s", dir, err, b)
		}
		return out
	}
	a := build(root)
	b := build(copySource(t, root), "GOFLAGS=-tags=netgo -ldflags=-X=github.com/compass-mcp/compass-mcp/internal/version.stamped=other", "GOAMD64=v3", "CGO_ENABLED=1")
	v := version.Release
	names := []string{"SHA256SUMS", "compass-mcp_" + v + ".mcpb", "compass-mcp_" + v + "_linux_amd64.tar.gz", "server.json"}
	for _, n := range names {
		x, err := os.ReadFile(filepath.Join(a, n))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two builds of the same commit (%d and %d bytes)", n, len(x), len(y))
		}
	}

	// The archive: the binary, README and LICENSE in one folder, the commit's time,
	// root's, the binary executable.
	f, err := os.Open(filepath.Join(a, names[2]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Name+" "+os.FileMode(h.Mode).String())
		if !h.ModTime.Equal(src.time) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" {
			t.Errorf("%s: time %v, owner %d:%d %q; want %v, 0:0", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, src.time)
		}
		if h.Name == "compass-mcp_"+v+"_linux_amd64/compass-mcp" && runtime.GOOS+"/"+runtime.GOARCH == "linux/amd64" {
			bin := filepath.Join(t.TempDir(), "compass-mcp")
			data, _ := io.ReadAll(tr)
			if err := os.WriteFile(bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "--version").Output()
			if want := "compass-mcp " + v + " (commit " + src.commit + ", "; err != nil || !strings.HasPrefix(string(out), want) {
				t.Errorf("the released binary's --version: %q, %v; want it to start %q", out, err, want)
			}
		}
	}
	dir := "compass-mcp_" + v + "_linux_amd64/"
	want := []string{dir + "LICENSE -rw-r--r--", dir + "README.md -rw-r--r--", dir + "compass-mcp -rwxr-xr-x"}
	if !slices.Equal(got, want) {
		t.Errorf("the archive holds\n%q\nwant\n%q", got, want)
	}
	sums, _ := os.ReadFile(filepath.Join(a, "SHA256SUMS"))
	if lines := strings.Split(strings.TrimSpace(string(sums)), "\n"); len(lines) != 2 || !strings.HasSuffix(lines[0], "  "+names[1]) {
		t.Errorf("SHA256SUMS:\n%s", sums)
	}
}

// copySource copies the module at root into a new folder, leaving out what git and npm
// keep there, and returns the folder.
func copySource(t *testing.T, root string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "elsewhere")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case d.Name() == ".git", d.Name() == "node_modules", rel == "dist", rel == filepath.Join(".ci", "node"):
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// thinMachO is the smallest Mach-O executable header debug/macho reads: no load commands.
func thinMachO(cpu macho.Cpu, sub uint32, pad int) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, [8]uint32{macho.Magic64, uint32(cpu), sub, uint32(macho.TypeExec), 0, 0, 0, 0})
	b.Write(bytes.Repeat([]byte{byte(cpu)}, pad))
	return b.Bytes()
}

func TestUniversal(t *testing.T) {
	amd := thinMachO(macho.CpuAmd64, 3, 40000)
	arm := thinMachO(macho.CpuArm64, 0, 123)
	fat, err := universal(amd, arm)
	if err != nil {
		t.Fatal(err)
	}
	ff, err := macho.NewFatFile(bytes.NewReader(fat))
	if err != nil {
		t.Fatalf("the universal binary does not read back: %v", err)
	}
	if len(ff.Arches) != 2 {
		t.Fatalf("%d slices, want 2", len(ff.Arches))
	}
	for i, want := range [][]byte{amd, arm} {
		a := ff.Arches[i]
		if a.Offset%(1<<14) != 0 || a.Align != 14 {
			t.Errorf("slice %d (%v) at %d, aligned 2^%d: want a multiple of 16 KiB", i, a.Cpu, a.Offset, a.Align)
		}
		if got := fat[a.Offset : a.Offset+a.Size]; !bytes.Equal(got, want) {
			t.Errorf("slice %d (%v) is not the thin binary byte for byte", i, a.Cpu)
		}
	}
	if ff.Arches[0].Cpu != macho.CpuAmd64 || ff.Arches[0].SubCpu != 3 || ff.Arches[1].Cpu != macho.CpuArm64 {
		t.Errorf("slices are %v/%d and %v/%d", ff.Arches[0].Cpu, ff.Arches[0].SubCpu, ff.Arches[1].Cpu, ff.Arches[1].SubCpu)
	}
	if _, err := universal(amd, []byte("not a binary")); err == nil {
		t.Error("universal took something that is not a Mach-O file")
	}
}

// The manifest of the release (every platform) starts, on each platform, a file that is in
// the bundle, with nothing left for the host to fill in but what the person must answer.
func TestManifestLaunchesOnEveryPlatform(t *testing.T) {
	m := manifest("1.2.3", []string{"darwin", "win32", "linux"})
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back mcpb.Manifest // as a host reads it
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range back.UserConfig {
		keys = append(keys, o.Key)
	}
	if !slices.Equal(keys, []string{"me", "space", "data", "web"}) {
		t.Errorf("the install form asks %q", keys)
	}
	for _, p := range bundlePlatforms {
		l, err := back.Launch("/bundle", p.platform, map[string]string{"me": "ana"}, map[string]string{"HOME": "/home/ana"})
		if err != nil {
			t.Fatal(err)
		}
		want := "/bundle/" + p.path
		if p.platform == "win32" {
			want = `/bundle\` + strings.ReplaceAll(p.path, "/", `\`)
		}
		if l.Command != want {
			t.Errorf("on %s the command is %s, want the bundle's %s", p.platform, l.Command, want)
		}
		wantEnv := map[string]string{"COMPASS_ME": "ana", "COMPASS_SPACE": "personal", "COMPASS_DATA": "", "COMPASS_WEB": ""}
		if !slices.Equal(l.Args, []string{"serve"}) || !mapsEqual(l.Env, wantEnv) {
			t.Errorf("on %s: args %q env %q; want [serve] and %q", p.platform, l.Args, l.Env, wantEnv)
		}
	}
	if _, err := back.Launch("/bundle", "darwin", nil, nil); err == nil {
		t.Error("without the person's name, the manifest still starts the server")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// The manifest lists the tools the server offers a model, no more, no fewer: not the
// change view's app-only undo_change (visibility ["app"]), which no model sees.
func TestManifestListsTheServersTools(t *testing.T) {
	db, err := bolt.OpenFile(filepath.Join(t.TempDir(), "c.db"), bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv, err := tools.New(db, tools.Config{Space: "personal", For: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	var served, listed []string
	for name := range srv.ListTools() {
		if name != tools.UndoTool {
			served = append(served, name)
		}
	}
	for _, tool := range manifest("1.2.3", []string{"linux"}).Tools {
		listed = append(listed, tool.Name)
		if tool.Description == "" || strings.Contains(tool.Description, "\n") {
			t.Errorf("%s: a manifest's tool has a one-line description, got %q", tool.Name, tool.Description)
		}
	}
	slices.Sort(served)
	slices.Sort(listed)
	if !slices.Equal(served, listed) {
		t.Errorf("the server offers %q; the manifest lists %q", served, listed)
	}
}

// -out naming a folder that holds anything a release did not write is refused, not emptied.
func TestOutFolderOfSomethingElse(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"SHA256SUMS", "compass-mcp_0.1.0.mcpb", "go.mod"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := emptyOut(dir); err == nil || !strings.Contains(err.Error(), "go.mod") {
		t.Fatalf("emptyOut of a folder with go.mod: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "SHA256SUMS")); err != nil {
		t.Fatalf("a refused folder lost a file: %v", err)
	}
	os.Remove(filepath.Join(dir, "go.mod"))
	if err := emptyOut(dir); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an earlier release's folder still holds %v", entries)
	}
}
