package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/mcpb"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// testdata/registry-server.schema.json is the MCP Registry's published schema of server.json,
// 2025-12-11 (https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json),
// copied unchanged from the module github.com/modelcontextprotocol/registry v1.8.9, file
// internal/validators/schemas/2025-12-11.json (sha256 2e1e2dc7...9a9c2f68), which the
// registry's publisher CLI validates against. It is public data of the MCP project, whose
// LICENSE licenses it under Apache-2.0 (MIT for contributions not yet relicensed). The
// publisher's own validate command sends the file to the registry's web service, which CI
// can't reach; so the schema is checked here with a JSON Schema validator
// (github.com/santhosh-tekuri/jsonschema/v6, already linked by mcp-go), and the rules the
// registry adds beyond the schema by registryRules.

// validateServerJSON returns what is wrong with raw as a server.json: the schema's
// violations, then the registry's own rules; nil when it is valid.
func validateServerJSON(t *testing.T, raw []byte) []string {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join("testdata", "registry-server.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // "format": "uri" is checked, not only noted
	if err := c.AddResource(registrySchema, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(registrySchema)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var problems []string
	if err := sch.Validate(inst); err != nil {
		problems = append(problems, "schema: "+err.Error())
	}
	return append(problems, registryRules(raw)...)
}

// registryRules are the checks the registry's validator (internal/validators, v1.8.9) makes
// beyond the schema on what this server.json has, except the one that needs the network
// (that the bundle's URL answers): the name's namespace, a version that is not a range, a
// GitHub repository, https website and icons, an MCPB package as a GitHub release asset with
// its SHA-256, and remotes on https, not localhost, with every URL variable defined.
func registryRules(raw []byte) []string {
	var s struct {
		Name       string `json:"name"`
		Version    string `json:"version"`
		Repository struct {
			URL, Source string
		} `json:"repository"`
		WebsiteURL string `json:"websiteUrl"`
		Icons      []struct {
			Src string `json:"src"`
		} `json:"icons"`
		Packages []struct {
			RegistryType    string `json:"registryType"`
			Identifier      string `json:"identifier"`
			RegistryBaseURL string `json:"registryBaseUrl"`
			Version         string `json:"version"`
			FileSHA256      string `json:"fileSha256"`
			Transport       struct {
				Type, URL string
			} `json:"transport"`
		} `json:"packages"`
		Remotes []struct {
			Type      string                     `json:"type"`
			URL       string                     `json:"url"`
			Variables map[string]json.RawMessage `json:"variables"`
		} `json:"remotes"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return []string{err.Error()}
	}
	var p []string
	bad := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	https := func(field, u string) {
		if pu, err := url.Parse(u); err != nil || pu.Scheme != "https" || pu.Host == "" || strings.ContainsAny(u, "\"'<> \t\n\r") {
			bad("%s %q is not an absolute https URL", field, u)
		}
	}
	if ns, _, _ := strings.Cut(s.Name, "/"); ns != "io.github.compass-mcp" || strings.Count(s.Name, "/") != 1 {
		bad("name %q: a GitHub login proves the namespace io.github.compass-mcp, with one /", s.Name)
	}
	versionRange := regexp.MustCompile(`^[\^~<>=]|[xX*]$|\.[xX*]\.|\s-\s|\|\|`)
	for _, v := range []string{s.Version} {
		if v == "" || v == "latest" || versionRange.MatchString(v) {
			bad("version %q is not one specific version", v)
		}
	}
	if s.Repository.Source != "github" || !regexp.MustCompile(`^https?://(www\.)?github\.com/[\w.-]+/[\w.-]+/?$`).MatchString(s.Repository.URL) {
		bad("repository %+v is not a GitHub repository", s.Repository)
	}
	https("websiteUrl", s.WebsiteURL)
	for _, i := range s.Icons {
		https("icon src", i.Src)
	}
	for _, pkg := range s.Packages {
		if pkg.Version == "latest" || versionRange.MatchString(pkg.Version) || strings.Contains(pkg.Identifier, " ") {
			bad("package %q, version %q", pkg.Identifier, pkg.Version)
		}
		if pkg.Transport.Type != "stdio" || pkg.Transport.URL != "" {
			bad("package transport %+v, want stdio without a URL", pkg.Transport)
		}
		if pkg.RegistryType != "mcpb" {
			continue
		}
		https("mcpb identifier", pkg.Identifier)
		u, _ := url.Parse(pkg.Identifier)
		if u == nil || strings.ToLower(u.Host) != "github.com" || !regexp.MustCompile(`^/([a-zA-Z0-9]([a-zA-Z0-9\-]{0,37}[a-zA-Z0-9])?)/([a-zA-Z0-9._\-]+)/releases/download/([^/]+)/([^/]+)$`).MatchString(u.Path) {
			bad("mcpb identifier %q is not a GitHub release asset (/owner/repo/releases/download/tag/file)", pkg.Identifier)
		}
		if !strings.Contains(strings.ToLower(pkg.Identifier), "mcp") || pkg.RegistryBaseURL != "" || pkg.FileSHA256 == "" {
			bad("mcpb package %q: its URL must contain mcp, it has no registryBaseUrl and must have fileSha256", pkg.Identifier)
		}
	}
	for _, r := range s.Remotes {
		if r.Type != "streamable-http" && r.Type != "sse" {
			bad("remote type %q", r.Type)
		}
		// As the registry checks a template: its variables stand for a plain host.
		concrete := regexp.MustCompile(`\{([^}]+)\}`).ReplaceAllStringFunc(r.URL, func(v string) string {
			if _, ok := r.Variables[strings.Trim(v, "{}")]; !ok {
				bad("remote %q uses %s, which its variables don't define", r.URL, v)
			}
			return "example.com"
		})
		https("remote url", concrete)
		if u, err := url.Parse(concrete); err == nil && (u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1" || strings.HasSuffix(u.Hostname(), ".localhost")) {
			bad("remote %q is on localhost", r.URL)
		}
	}
	if pp, ok := s.Meta["io.modelcontextprotocol.registry/publisher-provided"]; ok && len(pp) > 4<<10 {
		bad("_meta's publisher-provided extension is %d bytes, over the registry's 4 KB", len(pp))
	}
	return p
}

// The validator finds what the registry would refuse (so that a pass means something): each
// of these changes to a good server.json is caught.
func TestValidatorRefusesWhatTheRegistryWould(t *testing.T) {
	good, err := registryFile(manifest(tools.Version, []string{"linux"}), "compass-mcp_"+tools.Version+".mcpb", strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := registryBytes(good)
	if p := validateServerJSON(t, raw); p != nil {
		t.Fatalf("a good server.json is refused: %q", p)
	}
	for name, change := range map[string]func(*serverJSON){
		"description of 101 characters": func(s *serverJSON) { s.Description = strings.Repeat("x", 101) },
		"a name without a namespace":    func(s *serverJSON) { s.Name = "compass-mcp" },
		"another owner's namespace":     func(s *serverJSON) { s.Name = "io.github.someone/compass-mcp" },
		"a digest not hex":              func(s *serverJSON) { s.Packages[0].FileSHA256 = "XYZ" },
		"no digest":                     func(s *serverJSON) { s.Packages[0].FileSHA256 = "" },
		"a bundle not on GitHub":        func(s *serverJSON) { s.Packages[0].Identifier = "https://example.com/compass-mcp.mcpb" },
		"a version range":               func(s *serverJSON) { s.Version = "^0.1.0" },
		"an http icon":                  func(s *serverJSON) { s.Icons[0].Src = "http://example.com/icon.png" },
		"a remote on localhost":         func(s *serverJSON) { s.Remotes[0].URL = "https://localhost/mcp" },
		"a remote on http":              func(s *serverJSON) { s.Remotes[0].URL = "http://{host}/mcp" },
		"an undefined URL variable":     func(s *serverJSON) { s.Remotes[0].URL = "https://{host}/{space}/mcp" },
		"a transport the schema lacks":  func(s *serverJSON) { s.Remotes[0].Type = "websocket" },
	} {
		s := good
		s.Packages = append([]registryPackage(nil), good.Packages...)
		s.Remotes = append([]registryRemote(nil), good.Remotes...)
		s.Icons = append([]registryIcon(nil), good.Icons...)
		change(&s)
		raw, _ := registryBytes(s)
		if p := validateServerJSON(t, raw); p == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A release's server.json is its bundle's: the digest of the .mcpb written beside it, the
// download URL of that file at the version's tag, and the manifest's name, description,
// version, environment (each variable described as the install form asks for it) and
// tools; and it is valid for the registry.
func TestServerJSONIsTheBundles(t *testing.T) {
	out := t.TempDir()
	cfg := config{out: out, version: tools.Version, src: source{commit: "0123456789abcdef0123456789abcdef01234567", time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}}
	name, err := writeBundle(cfg, map[string][]byte{"linux/amd64": []byte("a binary")})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := validateServerJSON(t, raw); p != nil {
		t.Errorf("server.json is not valid for the registry:\n%s\n%s", strings.Join(p, "\n"), raw)
	}
	bundle, err := os.ReadFile(filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	var m mcpb.Manifest
	mb, err := os.ReadFile(filepath.Join(out, "bundle", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Name, Title, Description, Version string
		Packages                          []struct {
			Identifier, Version, FileSHA256 string
			EnvironmentVariables            []struct {
				Name, Description string
				IsRequired        bool
			}
		}
		Meta struct {
			Publisher struct {
				Tools []mcpb.Tool
			} `json:"io.modelcontextprotocol.registry/publisher-provided"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	pkg := s.Packages[0]
	if want := fmt.Sprintf("%x", sha256.Sum256(bundle)); pkg.FileSHA256 != want {
		t.Errorf("fileSha256 %s, the bundle's is %s", pkg.FileSHA256, want)
	}
	if want := "https://github.com/compass-mcp/compass-mcp/releases/download/v" + m.Version + "/" + name; pkg.Identifier != want {
		t.Errorf("identifier %s, want %s", pkg.Identifier, want)
	}
	if s.Version != m.Version || pkg.Version != m.Version || s.Description != m.Description || s.Title != m.DisplayName || len(s.Description) > 100 {
		t.Errorf("server.json says %s %q %q, the manifest %s %q %q", s.Version, s.Title, s.Description, m.Version, m.DisplayName, m.Description)
	}
	if len(pkg.EnvironmentVariables) != len(m.Server.MCPConfig.Env) {
		t.Errorf("server.json has %d environment variables, the manifest %d", len(pkg.EnvironmentVariables), len(m.Server.MCPConfig.Env))
	}
	asked := map[string]mcpb.Option{}
	for _, o := range manifest(tools.Version, []string{"linux"}).UserConfig {
		asked[o.Key] = o
	}
	for _, e := range pkg.EnvironmentVariables {
		ref := userConfigRef.FindStringSubmatch(m.Server.MCPConfig.Env[e.Name])
		if ref == nil {
			t.Errorf("%s is not in the manifest's env", e.Name)
			continue
		}
		o := asked[ref[1]]
		if !strings.Contains(e.Description, o.Description) || e.IsRequired != o.Required {
			t.Errorf("%s: %q required %v; the install form asks %q required %v", e.Name, e.Description, e.IsRequired, o.Description, o.Required)
		}
	}
	if got, _ := json.Marshal(s.Meta.Publisher.Tools); !bytes.Equal(got, mustJSON(t, m.Tools)) {
		t.Errorf("server.json's tools %s, the manifest's %s", got, mustJSON(t, m.Tools))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The repository's server.json (what the registry is given: docs/INSTALL.md, "Publishing")
// is valid for the registry, and is the last release's: for its version and digest, exactly
// what the release command writes from the code's manifest now. So a change to what the
// manifest says (its description, environment, tools: the tools tools/list serves, as
// TestManifestListsTheServersTools checks) without a new version fails here: a version means
// one set of facts. A version in the code newer than server.json's fails too: the change that
// moves the version runs the whole release, which rewrites the file.
func TestRepositoryServerJSON(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := validateServerJSON(t, raw); p != nil {
		t.Errorf("server.json is not valid for the registry:\n%s", strings.Join(p, "\n"))
	}
	var s serverJSON
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Packages) != 1 {
		t.Fatalf("server.json has %d packages, want the bundle", len(s.Packages))
	}
	switch c := compareVersions(s.Version, tools.Version); {
	case c > 0:
		t.Fatalf("server.json is for %s, newer than the code's %s (tools.Version)", s.Version, tools.Version)
	case c < 0:
		// A version in the code that server.json doesn't carry is one the repository says it
		// serves (--version, initialize) while the registry would be given the older one's
		// facts: the release that changes the version rewrites the file, in the same change.
		t.Fatalf("server.json is for %s, older than the code's %s (tools.Version): run go run ./internal/cmd/release and commit the server.json it writes", s.Version, tools.Version)
	}
	var platforms []string
	for _, p := range bundlePlatforms {
		platforms = append(platforms, p.platform)
	}
	want, err := registryFile(manifest(s.Version, platforms), "compass-mcp_"+s.Version+".mcpb", s.Packages[0].FileSHA256)
	if err != nil {
		t.Fatal(err)
	}
	wb, _ := registryBytes(want)
	if !bytes.Equal(raw, wb) {
		t.Errorf("server.json is not what the release writes for %s now (the manifest's facts changed since that release: give tools.Version a new version, whose release rewrites server.json):\n--- server.json\n%s\n--- the release's\n%s", s.Version, raw, wb)
	}
}

// compareVersions compares semver versions a and b by their major, minor and patch numbers:
// -1, 0 or 1.
func compareVersions(a, b string) int {
	num := func(v string) [3]int {
		var n [3]int
		v, _, _ = strings.Cut(v, "-")
		v, _, _ = strings.Cut(v, "+")
		for i, part := range strings.SplitN(v, ".", 3) {
			n[i], _ = strconv.Atoi(part)
		}
		return n
	}
	x, y := num(a), num(b)
	for i := range x {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
