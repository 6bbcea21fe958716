package clientconfig

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Portable is s as a project's file should hold it: a file a team commits, read on every
// member's machine. The command is named as it is on PATH (compass-mcp) when the one PATH
// finds here is s.Command itself; a data file inside the project is written from the
// project's folder, with the client's variable for it (VS Code's and Cursor's
// ${workspaceFolder}). What stays this machine's (a command not on PATH, a data file
// outside the project, or inside it for a client with no such variable) is said in notes,
// for install to print.
func (c *Client) Portable(s Server, e Env) (Server, []string) {
	var notes []string
	out := s
	out.Env = map[string]string{}
	for k, v := range s.Env {
		out.Env[k] = v
	}
	if name, ok := onPath(s.Command); ok {
		out.Command = name
	} else {
		notes = append(notes, fmt.Sprintf("%s is not on PATH here, so the project's file names it by its path on this machine (%s), which the others' machines may not have. Put compass-mcp on PATH (go install github.com/compass-mcp/compass-mcp/cmd/compass-mcp@latest) and install again with --force, or give --command compass-mcp", filepath.Base(s.Command), s.Command))
	}
	if data, ok := s.Env["COMPASS_DATA"]; ok && !strings.Contains(data, "://") {
		rel, err := filepath.Rel(e.Dir, data)
		inside := err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
		switch {
		case inside && c.workspace != "":
			out.Env["COMPASS_DATA"] = c.workspace + "/" + filepath.ToSlash(rel)
		case inside:
			notes = append(notes, fmt.Sprintf("%s has no variable for the project's folder, so the data file is named by its path on this machine (%s)", c.Title, data))
		default:
			notes = append(notes, fmt.Sprintf("the data file %s is outside the project, named by its path on this machine: each member needs it there, or their own --data", data))
		}
	}
	if me, ok := s.Env["COMPASS_ME"]; ok {
		notes = append(notes, fmt.Sprintf("--for %s puts one person in a file the whole team reads: everyone's agent would work for %s. Leave --for out of a project's file (each server then works for its own $USER)", me, me))
	}
	return out, notes
}

// onPath is the name PATH finds command by, when it finds command itself (links
// resolved): compass-mcp, without .exe on Windows.
func onPath(command string) (string, bool) {
	name := strings.TrimSuffix(filepath.Base(command), ".exe")
	found, err := exec.LookPath(name)
	if err != nil {
		return "", false
	}
	a, errA := filepath.EvalSymlinks(found)
	b, errB := filepath.EvalSymlinks(command)
	if errA != nil || errB != nil {
		return "", false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return name, errA == nil && errB == nil && os.SameFile(fa, fb)
}
