package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/clientconfig/jsonc"
)

// MaxFile bounds the configuration file install reads: a settings file is kilobytes, and
// a larger one is refused rather than read.
const MaxFile = 8 << 20

var (
	// ErrChanged is returned by Write when the file changed after Prepare read it (the
	// client saved it meanwhile): nothing is written, and preparing again sees the change.
	ErrChanged = errors.New("the file changed while install was writing it (is the client saving it?): nothing was written; run install again")
	// ErrNoProjectFile is returned by Prepare for a project's file of a client that has none.
	ErrNoProjectFile = errors.New("this client has no file of a project's own: install it for the person instead (without --project)")
)

// An ExistsError is returned by Prepare when the file already has a server of the name
// and force is not set: Entry is what is there, at Line.
type ExistsError struct {
	File  string
	Name  string
	Line  int
	Entry string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already has a server named %q (line %d):\n%s", e.File, e.Name, e.Line, e.Entry)
}

// A ParseError is a file Prepare can't read in its client's format: Err (often a
// *jsonc.SyntaxError) names the line. The file is not touched.
type ParseError struct {
	File   string
	Client string
	Err    error
}

// Error says what install can't read, and no more: whether the client itself reads the
// file is not known here (Codex reads TOML this reader may not; Cursor's docs don't say
// comments are refused).
func (e *ParseError) Error() string {
	return fmt.Sprintf("%s: %v: install can't add a server to the file as it is", e.File, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// A format is how one kind of file holds its servers.
type format interface {
	// set returns old (empty: no file yet) with s in it, replacing an entry of s.Name
	// only with force; an entry there without force is an *ExistsError without File.
	set(old []byte, s Server, force bool) (out []byte, replaced bool, err error)
}

// jsonFormat is a JSON (or JSONC) file with the servers in the top-level object's key.
type jsonFormat struct {
	dialect jsonc.Dialect
	key     string
	entry   func(Server) jsonc.Obj
}

func (f jsonFormat) set(old []byte, s Server, force bool) ([]byte, bool, error) {
	path := []string{f.key, s.Name}
	replaced := false
	if len(bytes.TrimSpace(bytes.TrimPrefix(old, []byte("\xef\xbb\xbf")))) > 0 {
		v, err := jsonc.Lookup(old, f.dialect, path)
		if err != nil {
			return nil, false, err
		}
		if v != nil {
			if same, err := sameJSON(old, v, f.entry(s)); err == nil && same {
				return old, false, nil // already set up: the file stays as it is
			}
			if !force {
				line, _ := jsonc.Position(old, v.Start)
				return nil, false, &ExistsError{Name: s.Name, Line: line, Entry: string(old[v.Start:v.End])}
			}
			replaced = true
		}
	}
	out, err := jsonc.Set(old, f.dialect, path, f.entry(s))
	return out, replaced, err
}

// sameJSON says whether v, in src, is entry as JSON reads both (layout aside).
func sameJSON(src []byte, v *jsonc.Value, entry jsonc.Obj) (bool, error) {
	have, err := jsonc.Decode(src, v)
	if err != nil {
		return false, err
	}
	b, err := json.Marshal(entry)
	if err != nil {
		return false, err
	}
	var want any
	if err := json.Unmarshal(b, &want); err != nil {
		return false, err
	}
	return reflect.DeepEqual(have, want), nil
}

// A Change is a client's file as it is and as install leaves it.
type Change struct {
	File     string // where the client reads it
	Old      []byte // nil when there is no file yet
	New      []byte
	Replaced bool // a server of the name was there, and New replaces it
	Shared   bool // a project's file, which a team commits: a new one is made 0644 in folders 0755
}

// Prepare reads c's file, the person's or with project the project's in e.Dir, and works
// out the Change that puts s in it; nothing is written. It returns an *ExistsError when a
// server of s.Name is there and force is not set, a *ParseError for a file c could not
// read, and ErrNoProjectFile.
func (c *Client) Prepare(e Env, project bool, s Server, force bool) (*Change, error) {
	if c.format == nil {
		return nil, fmt.Errorf("%s adds servers with its own command (Commands), not a file install writes", c.Title)
	}
	if project && !c.HasProject() {
		return nil, ErrNoProjectFile
	}
	file := c.File(e, project)
	old, err := readFile(file)
	if err != nil {
		return nil, err
	}
	out, replaced, err := c.format.set(old, s, force)
	var exists *ExistsError
	switch {
	case errors.As(err, &exists):
		exists.File = file
		return nil, exists
	case err != nil:
		return nil, &ParseError{File: file, Client: c.Title, Err: err}
	}
	return &Change{File: file, Old: old, New: out, Replaced: replaced, Shared: project}, nil
}

// readFile is the file's bytes, nil when there is none.
func readFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	if fi.Size() > MaxFile {
		return nil, fmt.Errorf("%s is %d bytes, larger than any settings file (the limit is %d): not read", file, fi.Size(), MaxFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFile {
		return nil, fmt.Errorf("%s grew past %d bytes while being read: not read", file, MaxFile)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// Unchanged says whether the file already is as install would write it.
func (ch *Change) Unchanged() bool { return ch.Old != nil && bytes.Equal(ch.Old, ch.New) }

// Write writes ch.New to ch.File, through a symbolic link to the file it names (settings
// kept in a dotfiles repository stay there). The old file is kept beside it as
// FILE.bak-YYYYMMDD-HHMMSS (at now, with -2, -3... when that name is taken), which Write
// returns ("" when there was no file). The new file replaces the old in one rename, with
// the old one's permissions (a new file is the person's alone, 0600, or for a project's
// file, Shared, 0644). It returns ErrChanged when the file is no longer ch.Old.
func (ch *Change) Write(now time.Time) (backup string, err error) {
	target := ch.File
	if fi, err := os.Lstat(target); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(target); err != nil {
			return "", fmt.Errorf("following the link %s: %w", ch.File, err)
		}
	}
	cur, err := readFile(target)
	if err != nil {
		return "", err
	}
	if (cur == nil) != (ch.Old == nil) || !bytes.Equal(cur, ch.Old) {
		return "", ErrChanged
	}
	mode, dirMode := fs.FileMode(0o600), fs.FileMode(0o700)
	if ch.Shared { // the team's file, in the project's folder: the usual modes, as git checks it out
		mode, dirMode = 0o644, 0o755
	}
	if ch.Old != nil {
		fi, err := os.Stat(target)
		if err != nil {
			return "", err
		}
		mode = fi.Mode().Perm()
		if backup, err = writeBackup(target, ch.Old, mode, now); err != nil {
			return "", err
		}
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return backup, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return backup, err
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing of this name left
	if _, err := tmp.Write(ch.New); err != nil {
		tmp.Close()
		return backup, err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return backup, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return backup, err
	}
	if err := tmp.Close(); err != nil {
		return backup, err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return backup, fmt.Errorf("replacing %s: %w", target, err)
	}
	return backup, nil
}

func writeBackup(target string, old []byte, mode fs.FileMode, now time.Time) (string, error) {
	base := target + ".bak-" + now.Format("20060102-150405")
	for i := 1; i <= 100; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("keeping the old file: %w", err)
		}
		if _, err := f.Write(old); err != nil {
			f.Close()
			return "", fmt.Errorf("keeping the old file as %s: %w", name, err)
		}
		if err := f.Close(); err != nil {
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("keeping the old file: %s-2 to -100 are all taken", base)
}

// Servers reads src as c does and returns the servers in it that a command starts, by
// name: what the client would run. A server of another kind (a URL) has no Command.
func (c *Client) Servers(src []byte) (map[string]Server, error) {
	var all map[string]any
	switch f := c.format.(type) {
	case jsonFormat:
		v, err := jsonc.Lookup(src, f.dialect, []string{f.key})
		if err != nil || v == nil {
			return nil, err
		}
		d, err := jsonc.Decode(src, v)
		if err != nil {
			return nil, err
		}
		if all, _ = d.(map[string]any); all == nil {
			return nil, fmt.Errorf("%s is not an object of servers", f.key)
		}
	case tomlFormat:
		doc, err := parseTOML(src)
		if err != nil {
			return nil, err
		}
		all, _ = doc.root["mcp_servers"].(map[string]any)
	default:
		return nil, fmt.Errorf("%s keeps its servers itself", c.Title)
	}
	out := map[string]Server{}
	for name, v := range all {
		m, _ := v.(map[string]any)
		s := Server{Name: name, Env: map[string]string{}}
		s.Command, _ = m["command"].(string)
		args, _ := m["args"].([]any)
		for _, a := range args {
			if a, ok := a.(string); ok {
				s.Args = append(s.Args, a)
			}
		}
		env, _ := m["env"].(map[string]any)
		for k, v := range env {
			if v, ok := v.(string); ok {
				s.Env[k] = v
			}
		}
		out[name] = s
	}
	return out, nil
}
