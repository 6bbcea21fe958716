package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"regexp"

	"github.com/compass-mcp/compass-mcp/internal/mcpb"
)

// The MCP Registry's server.json (github.com/modelcontextprotocol/registry, schema
// 2025-12-11): what the registry lists, made from the bundle's manifest, so that the name,
// description, version, environment variables and tools the two say cannot disagree, and
// from the bundle's own bytes (its SHA-256). The fields are written in the order the
// registry's documentation shows them.
type serverJSON struct {
	Schema      string            `json:"$schema"`
	Name        string            `json:"name"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Version     string            `json:"version"`
	Repository  registryRepo      `json:"repository"`
	WebsiteURL  string            `json:"websiteUrl"`
	Icons       []registryIcon    `json:"icons"`
	Packages    []registryPackage `json:"packages"`
	Remotes     []registryRemote  `json:"remotes"`
	Meta        registryMeta      `json:"_meta"`
}

type registryRepo struct {
	URL    string `json:"url"`
	Source string `json:"source"`
}

type registryIcon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType"`
	Sizes    []string `json:"sizes"`
}

type registryPackage struct {
	RegistryType         string          `json:"registryType"`
	Identifier           string          `json:"identifier"`
	Version              string          `json:"version"`
	FileSHA256           string          `json:"fileSha256"`
	Transport            registryStdio   `json:"transport"`
	EnvironmentVariables []registryInput `json:"environmentVariables"`
}

type registryStdio struct {
	Type string `json:"type"`
}

// registryInput is the registry's Input (and KeyValueInput, with a name).
type registryInput struct {
	Name        string `json:"name,omitempty"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired,omitempty"`
	IsSecret    bool   `json:"isSecret,omitempty"`
	Format      string `json:"format,omitempty"`
	Default     string `json:"default,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
}

type registryRemote struct {
	Type      string                   `json:"type"`
	URL       string                   `json:"url"`
	Headers   []registryInput          `json:"headers,omitempty"`
	Variables map[string]registryInput `json:"variables,omitempty"`
}

type registryMeta struct {
	Publisher struct {
		Tools []mcpb.Tool `json:"tools"`
	} `json:"io.modelcontextprotocol.registry/publisher-provided"`
}

const (
	registrySchema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
	// registryName is io.github.<owner>/<repository>, the namespace a GitHub login proves.
	registryName = "io.github.compass-mcp/compass-mcp"
)

var userConfigRef = regexp.MustCompile(`^\$\{user_config\.([A-Za-z0-9_]+)\}$`)

// registryFile is server.json for the bundle bundleName of manifest m, whose bytes have
// the SHA-256 digest (hex). The bundle is downloaded from the GitHub release of the tag
// v<version>, where the release's files are uploaded (docs/INSTALL.md, "Publishing").
func registryFile(m mcpb.Manifest, bundleName, digest string) (serverJSON, error) {
	tag := "v" + m.Version
	s := serverJSON{
		Schema:      registrySchema,
		Name:        registryName,
		Title:       m.DisplayName,
		Description: m.Description,
		Version:     m.Version,
		Repository:  registryRepo{URL: repository, Source: "github"},
		WebsiteURL:  m.Homepage,
		// The registry takes https icons only: the bundle's, as the tag has it in the repository.
		Icons: []registryIcon{{Src: "https://raw.githubusercontent.com/compass-mcp/compass-mcp/" + tag + "/internal/icon/icon-512.png", MIMEType: "image/png", Sizes: []string{"512x512"}}},
	}
	// The environment the bundle's command gets, each variable described as the person is
	// asked for it (the manifest's user_config), in that order.
	var env []registryInput
	for _, u := range m.UserConfig {
		for name, v := range m.Server.MCPConfig.Env {
			ref := userConfigRef.FindStringSubmatch(v)
			if ref == nil || ref[1] != u.Key {
				continue
			}
			in := registryInput{Name: name, Description: u.Description, IsRequired: u.Required, IsSecret: u.Sensitive}
			if d, ok := u.Default.(string); ok && d != "" {
				in.Default = d
			}
			if u.Type == "file" {
				in.Format = "filepath"
			}
			env = append(env, in)
		}
	}
	if len(env) != len(m.Server.MCPConfig.Env) {
		return serverJSON{}, fmt.Errorf("the manifest's env has %d variables, %d of them from user_config: each must be ${user_config.KEY}, to be described in server.json", len(m.Server.MCPConfig.Env), len(env))
	}
	s.Packages = []registryPackage{{
		RegistryType:         "mcpb",
		Identifier:           repository + "/releases/download/" + tag + "/" + bundleName,
		Version:              m.Version,
		FileSHA256:           digest,
		Transport:            registryStdio{Type: "stdio"},
		EnvironmentVariables: env,
	}}
	// A team's own server, wherever it is hosted: serve --http behind https (--public-url),
	// reached at /mcp. Clients sign in with OAuth; a static token works where a client takes one.
	s.Remotes = []registryRemote{{
		Type: "streamable-http",
		URL:  "https://{host}/mcp",
		Headers: []registryInput{{
			Name:        "Authorization",
			Description: "Bearer and a token from compass-mcp tokens add, for a client that takes one; clients that sign in with OAuth need none",
			IsSecret:    true,
			Placeholder: "Bearer cmp_...",
		}},
		Variables: map[string]registryInput{
			"host": {Description: "Where your team's compass-mcp is served: the host of its --public-url", IsRequired: true, Placeholder: "compass.example.com"},
		},
	}}
	s.Meta.Publisher.Tools = m.Tools
	return s, nil
}

// registryBytes is s as the file: indented, with a final newline.
func registryBytes(s serverJSON) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeRegistryFile writes server.json for the bundle bundleName of the platforms, whose
// bytes are bundle, into each of paths.
func writeRegistryFile(version string, platforms []string, bundleName string, bundle []byte, paths ...string) error {
	s, err := registryFile(manifest(version, platforms), bundleName, fmt.Sprintf("%x", sha256.Sum256(bundle)))
	if err != nil {
		return err
	}
	b, err := registryBytes(s)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
