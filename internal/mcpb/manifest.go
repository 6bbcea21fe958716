// Package mcpb is the manifest of an MCP Bundle (.mcpb): the zip with a manifest.json and a
// server that Claude Desktop installs local MCP servers from. It writes manifests (for the
// release builder) and turns one into the command a host starts, as Claude Desktop does.
//
// The fields are those of manifest_version 0.3 (github.com/modelcontextprotocol/mcpb,
// MANIFEST.md), checked in CI by the mcpb CLI's own validator (.ci/mcpb.sh).
package mcpb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Version is the manifest_version written and read.
const Version = "0.3"

// Manifest is a bundle's manifest.json.
type Manifest struct {
	ManifestVersion string         `json:"manifest_version"`
	Name            string         `json:"name"`
	DisplayName     string         `json:"display_name,omitempty"`
	Version         string         `json:"version"`
	Description     string         `json:"description"`
	LongDescription string         `json:"long_description,omitempty"`
	Author          Author         `json:"author"`
	Repository      *Repository    `json:"repository,omitempty"`
	Homepage        string         `json:"homepage,omitempty"`
	Icon            string         `json:"icon,omitempty"`
	Server          Server         `json:"server"`
	Tools           []Tool         `json:"tools,omitempty"`
	Keywords        []string       `json:"keywords,omitempty"`
	License         string         `json:"license,omitempty"`
	PrivacyPolicies []string       `json:"privacy_policies,omitempty"`
	Compatibility   *Compatibility `json:"compatibility,omitempty"`
	UserConfig      UserConfig     `json:"user_config,omitempty"`
}

type Author struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

type Repository struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Server says how to start the server: Type "binary" for a native executable.
type Server struct {
	Type       string    `json:"type"`
	EntryPoint string    `json:"entry_point"`
	MCPConfig  MCPConfig `json:"mcp_config"`
}

// MCPConfig is the command a host runs, with ${...} variables in it; PlatformOverrides
// replaces command, args or env (each whole) on one platform: "darwin", "win32" or "linux",
// Node's process.platform. Hosts choose by platform alone, never by processor.
type MCPConfig struct {
	Command           string                `json:"command"`
	Args              []string              `json:"args,omitempty"`
	Env               map[string]string     `json:"env,omitempty"`
	PlatformOverrides map[string]MCPCommand `json:"platform_overrides,omitempty"`
}

// MCPCommand is a platform's override: what it leaves empty stays as in MCPConfig.
type MCPCommand struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type Compatibility struct {
	ClaudeDesktop string   `json:"claude_desktop,omitempty"`
	Platforms     []string `json:"platforms,omitempty"`
}

// Option is one thing the person is asked at install. Type is "string", "number",
// "boolean", "directory" or "file"; Default is what a host uses when the person gives
// nothing (a host leaves ${user_config.KEY} as it is when there is neither).
type Option struct {
	Key         string `json:"-"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required,omitempty"`
	Default     any    `json:"default,omitempty"`
	Sensitive   bool   `json:"sensitive,omitempty"`
}

// UserConfig is the install form's options, in the order the form shows them: a JSON object
// keeps its keys' order, a Go map would sort them.
type UserConfig []Option

func (uc UserConfig) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, o := range uc {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(o.Key)
		v, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (uc *UserConfig) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("user_config: want an object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		o := Option{Key: t.(string)}
		if err := dec.Decode(&o); err != nil {
			return fmt.Errorf("user_config.%s: %w", o.Key, err)
		}
		*uc = append(*uc, o)
	}
	return nil
}

// Launch is a started server's command line and the environment it adds.
type Launch struct {
	Command string
	Args    []string
	Env     map[string]string
}

// Launch is what a host on platform runs for the bundle unpacked in dir, with values the
// person gave at install (keys of UserConfig) and system holding the folders a host names
// (HOME, DESKTOP, DOCUMENTS, DOWNLOADS). It does what Claude Desktop's loader does
// (src/shared/config.ts of the mcpb repository): the platform's override replaces command,
// args or env whole; a required option left empty is refused; each ${NAME} is replaced
// once, __dirname first, then pathSeparator and /, then system's, then user_config.KEY
// (what was given, else the default); a variable with no value stays as written, and so
// does an argument that is one option alone whose value is "" (so options that may be
// empty belong in env).
func (m *Manifest) Launch(dir, platform string, values, system map[string]string) (Launch, error) {
	c := m.Server.MCPConfig
	l := Launch{Command: c.Command, Args: c.Args, Env: c.Env}
	if o, ok := c.PlatformOverrides[platform]; ok {
		if o.Command != "" {
			l.Command = o.Command
		}
		if o.Args != nil {
			l.Args = o.Args
		}
		if o.Env != nil {
			l.Env = o.Env
		}
	}
	sep := "/"
	if platform == "win32" {
		sep = `\`
	}
	type variable struct{ name, value string }
	vars := []variable{{"__dirname", dir}, {"pathSeparator", sep}, {"/", sep}}
	names := make([]string, 0, len(system))
	for k := range system {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		vars = append(vars, variable{k, system[k]})
	}
	for _, o := range m.UserConfig {
		v, given := values[o.Key]
		if o.Required && (!given || v == "") {
			return Launch{}, fmt.Errorf("user_config.%s (%s) is required: a host starts nothing without it", o.Key, o.Title)
		}
		if !given {
			if o.Default == nil {
				continue
			}
			v = fmt.Sprint(o.Default)
		}
		vars = append(vars, variable{"user_config." + o.Key, v})
	}
	subst := func(s string) string {
		for _, v := range vars {
			s = strings.ReplaceAll(s, "${"+v.name+"}", v.value)
		}
		return s
	}
	l.Command = subst(l.Command)
	args := make([]string, len(l.Args))
	for i, a := range l.Args {
		args[i] = subst(a)
		// An argument that is one option alone, given as "", stays as written: the
		// loader tests the value for truth there. In env, "" is substituted.
		if strings.HasPrefix(a, "${user_config.") && strings.Index(a, "}") == len(a)-1 && args[i] == "" {
			args[i] = a
		}
	}
	l.Args = args
	env := make(map[string]string, len(l.Env))
	for k, v := range l.Env {
		env[k] = subst(v)
	}
	l.Env = env
	return l, nil
}
