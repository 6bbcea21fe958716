package command

import (
	"context"
	"fmt"
	"io"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
)

var exportHelp = subcommand{name: "export", args: "--git DIR",
	does: "the space's history as a git repository in DIR: one commit a version; run again, it adds only the new ones",
	more: `One commit a version, oldest first across the space's documents, on the branch named after
the space: the author is who saved the version (the agent, or the person), the committer the
person it was saved for, the time the version's, the message its kind and number. A document is
the file its title names (folders for "/"), so a rename moves the file (git log --follow finds
it); a delete removes it. DIR is made with git init if it is missing or empty; a repository
the export didn't make (no refs/compass/SPACE) is refused unless --into-existing. What was
exported is kept in the repository (refs/compass/SPACE), so a run again adds only what is new;
exports into one repository take turns (a lock in its git directory).
Needs the git program. (docs export DIR writes the documents and their histories as files.)`}

// exportCmd runs "compass-mcp export --git DIR".
func exportCmd(ctx context.Context, args []string, stdout io.Writer) error {
	var c config
	fs := flags(exportHelp, &c)
	dir := fs.String("git", "", "the git repository to write the space's history into (made if missing or empty)")
	existing := fs.Bool("into-existing", false, "if set, write into a git repository the export didn't make (one without refs/compass/SPACE): the space's branch is added beside its own")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *dir == "" && len(pos) == 1 {
		return usageError{fmt.Sprintf("export writes a git repository: export --git %s", pos[0])}
	}
	if *dir == "" || len(pos) > 0 {
		return usageError{"export takes --git DIR and nothing else (docs export DIR writes the documents as files)"}
	}
	file, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer file.Close()
	ex, err := filesync.ExportGit(ctx, docstore.New(file, c.space), *dir, filesync.GitOptions{IntoExisting: *existing})
	if err != nil {
		return err
	}
	if ex.Versions+ex.Deletes+ex.Restores+ex.Moves == 0 {
		fmt.Fprintf(stdout, "Nothing new since the last export: %s in %s is up to date.\n", ex.Branch, *dir)
		return nil
	}
	fmt.Fprintf(stdout, "Exported %s to %s in %s", Plural(ex.Versions, "version"), ex.Branch, *dir)
	if ex.Deletes > 0 {
		fmt.Fprintf(stdout, ", %s", Plural(ex.Deletes, "delete"))
	}
	if ex.Restores > 0 {
		fmt.Fprintf(stdout, ", %s", Plural(ex.Restores, "restore"))
	}
	if ex.Moves > 0 {
		fmt.Fprintf(stdout, ", %s moved to paths every git checks out", Plural(ex.Moves, "file"))
	}
	fmt.Fprintln(stdout, ".")
	return nil
}
