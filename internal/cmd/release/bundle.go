package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/compass-mcp/compass-mcp/internal/icon"
	"github.com/compass-mcp/compass-mcp/internal/mcpb"
)

// The words and addresses the bundle's manifest and the registry's server.json share.
const (
	repository = "https://github.com/compass-mcp/compass-mcp"
	// description is at most 100 characters, the registry's limit.
	description = "Shared, versioned Markdown documents for you and your agents, and the conversations you share."
	privacyURL  = repository + "/blob/main/docs/PRIVACY.md"
)

// One bundle carries every desktop. Claude Desktop chooses a bundle's command by operating
// system alone (mcp_config.platform_overrides is keyed by Node's process.platform, and
// compatibility.platforms names only darwin, win32 and linux): no field says arm64 or
// x86-64. So a bundle a platform would make the person choose their processor, and an
// Apple-silicon Mac given the Intel bundle runs it only if Rosetta is installed. Instead:
// macOS gets one universal binary (arm64 and amd64, the Mac runs its own), Windows the amd64
// binary (Windows 11 on Arm runs it emulated), Linux the amd64 one. People on linux/arm64
// or wanting windows/arm64 natively take the archives.
var bundlePlatforms = []struct {
	platform string   // Node's process.platform
	targets  []string // the builds its binary is made of
	path     string   // in the bundle
}{
	{"darwin", []string{"darwin/amd64", "darwin/arm64"}, "server/darwin/compass-mcp"},
	{"win32", []string{"windows/amd64"}, "server/win32/compass-mcp.exe"},
	{"linux", []string{"linux/amd64"}, "server/linux/compass-mcp"},
}

// manifest is the bundle's manifest.json for the platforms given (each a bundlePlatforms
// entry's platform), the first of them the default command.
func manifest(version string, platforms []string) mcpb.Manifest {
	paths := map[string]string{}
	for _, p := range bundlePlatforms {
		paths[p.platform] = p.path
	}
	overrides := map[string]mcpb.MCPCommand{}
	for _, p := range platforms[1:] {
		overrides[p] = mcpb.MCPCommand{Command: command(p, paths[p])}
	}
	return mcpb.Manifest{
		ManifestVersion: mcpb.Version,
		Name:            "compass-mcp",
		DisplayName:     "Compass",
		Version:         version,
		Description:     description,
		LongDescription: "Compass keeps a space's documents as Markdown, every change a version that says what was done, by which agent, for whom. " +
			"Claude reads, edits and comments on them with eight tools, and reads the conversations you shared into the space so that nobody repeats themselves. " +
			"Everything lives in one file on this computer, sent nowhere; the same file is open to other compass-mcp clients and to its command line. " +
			"What is kept, who can read it and how to delete it: " + privacyURL,
		Author:     mcpb.Author{Name: "The compass-mcp authors", URL: repository},
		Repository: &mcpb.Repository{Type: "git", URL: repository},
		Homepage:   repository,
		Icon:       "icon.png",
		Server: mcpb.Server{
			Type:       "binary",
			EntryPoint: paths[platforms[0]],
			MCPConfig: mcpb.MCPConfig{
				Command: command(platforms[0], paths[platforms[0]]),
				Args:    []string{"serve"},
				// Options go in env, not args: an empty one then means the server's default
				// (the flags take COMPASS_* only when not empty), where an empty argument
				// would be passed as written.
				Env: map[string]string{
					"COMPASS_ME":    "${user_config.me}",
					"COMPASS_SPACE": "${user_config.space}",
					"COMPASS_DATA":  "${user_config.data}",
					"COMPASS_WEB":   "${user_config.web}",
				},
				PlatformOverrides: overrides,
			},
		},
		Tools: []mcpb.Tool{
			{Name: "list_documents", Description: "List the space's documents, latest saved first."},
			{Name: "read_document", Description: "Read a document, an older version of it, or what changed since a version."},
			{Name: "write_document", Description: "Make a new document, or replace one's whole text, merged with changes made since."},
			{Name: "append_document", Description: "Add text at the end of a document."},
			{Name: "edit_document", Description: "Replace a passage that occurs exactly once in a document."},
			{Name: "comment_document", Description: "Comment on lines of a document, reply to a comment, or resolve one."},
			{Name: "list_conversations", Description: "List the other conversations people shared into the space, latest first."},
			{Name: "read_conversation", Description: "Read a conversation's messages, a page at a time."},
		},
		Keywords:        []string{"documents", "markdown", "versions", "notes", "conversations"},
		License:         "MIT",
		PrivacyPolicies: []string{privacyURL},
		Compatibility:   &mcpb.Compatibility{Platforms: platforms},
		UserConfig: mcpb.UserConfig{
			{Key: "me", Type: "string", Title: "Your name", Required: true,
				Description: "Your id in the space, like ana (one word): versions made for you say so."},
			{Key: "space", Type: "string", Title: "Space", Default: "personal",
				Description: "The space Claude works in: letters, digits, - _ and ."},
			{Key: "data", Type: "file", Title: "Data file", Default: "",
				Description: "The file holding your documents. Empty: .local/share/compass/compass.db in your home folder, made on first use. Choose an existing one to share it with your other compass-mcp clients."},
			{Key: "web", Type: "string", Title: "Your page", Default: "",
				Description: "Where your documents' page is served, as host:port, or off for none. Empty: 127.0.0.1:7411."},
		},
	}
}

// command is the manifest's command for the binary at path in the bundle: on Windows with
// the host's separator (${/}), which the host fills in, so that the path is all backslashes.
func command(platform, path string) string {
	if platform == "win32" {
		return "${__dirname}${/}" + strings.ReplaceAll(path, "/", "${/}")
	}
	return "${__dirname}/" + path
}

// writeBundle writes the bundle of the platforms whose builds are all in binaries: its
// folder (bundle/, for the mcpb CLI to validate and pack) and compass-mcp_VERSION.mcpb,
// whose name it returns, and the registry's server.json (see registryFile).
func writeBundle(cfg config, binaries map[string][]byte) (string, error) {
	files := []file{iconFile}
	var platforms []string
	for _, p := range bundlePlatforms {
		var thin [][]byte
		for _, t := range p.targets {
			if b, ok := binaries[t]; ok {
				thin = append(thin, b)
			}
		}
		if len(thin) == 0 {
			continue
		}
		b := thin[0]
		if len(thin) > 1 {
			var err error
			if b, err = universal(thin...); err != nil {
				return "", err
			}
		}
		files = append(files, file{name: p.path, data: b, mode: 0o755})
		platforms = append(platforms, p.platform)
	}
	if len(platforms) == 0 {
		return "", fmt.Errorf("no bundle: it needs darwin/amd64, darwin/arm64, windows/amd64 or linux/amd64 among the targets")
	}
	m, err := manifestFile(cfg.version, platforms)
	if err != nil {
		return "", err
	}
	files = append(files, m)
	if err := writeFolder(filepath.Join(cfg.out, "bundle"), files); err != nil {
		return "", err
	}
	zipped, err := zipFiles(files, cfg.src.time)
	if err != nil {
		return "", err
	}
	name := "compass-mcp_" + cfg.version + ".mcpb"
	if err := os.WriteFile(filepath.Join(cfg.out, name), zipped, 0o644); err != nil {
		return "", err
	}
	// The registry's server.json beside it, and at cfg.registry too (the repository's root,
	// for a whole release): made from the same manifest, with this bundle's digest.
	paths := []string{filepath.Join(cfg.out, "server.json")}
	if cfg.registry != "" {
		paths = append(paths, cfg.registry)
	}
	return name, writeRegistryFile(cfg.version, platforms, name, zipped, paths...)
}

// iconFile is the bundle's icon: the server's own (package icon), at the 512×512 Claude
// Desktop asks for.
var iconFile = file{name: "icon.png", data: icon.PNG512, mode: 0o644}

// manifestFile is manifest.json for platforms.
func manifestFile(version string, platforms []string) (file, error) {
	m, err := json.MarshalIndent(manifest(version, platforms), "", "  ")
	if err != nil {
		return file{}, err
	}
	return file{name: "manifest.json", data: append(m, '\n'), mode: 0o644}, nil
}

// writeFolder writes files into dir, making the folders they are in.
func writeFolder(dir string, files []file) error {
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// writeReleaseManifest writes into dir the manifest.json (and icon) of the whole release,
// every platform, building nothing: for CI to validate what a release would carry while
// building only this machine's binary.
func writeReleaseManifest(dir, version string) error {
	var platforms []string
	for _, p := range bundlePlatforms {
		platforms = append(platforms, p.platform)
	}
	m, err := manifestFile(version, platforms)
	if err != nil {
		return err
	}
	return writeFolder(dir, []file{iconFile, m})
}
