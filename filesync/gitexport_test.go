package filesync_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testtool"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// clock is a test's time: each call a second after the one before.
func clock() func() time.Time {
	t := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// check fails t on an error, and returns v: check(t)(f()).
func check[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestExportGit writes a space's history into a new repository and checks it with git
// itself: fsck clean, a commit a version (and one for the delete), authors and times as the
// versions', a rename followed by git log --follow, the work tree as the space is; then a
// run again adds only the versions made since.
func TestExportGit(t *testing.T) {
	testtool.Find(t, "git", "apt-get install -y git")
	ctx := context.Background()
	s := docstore.New(kvtest.Open(t), "personal").WithClock(clock())
	north := docstore.Author{By: "agent:north", For: "person:ana"}
	ana := docstore.Author{By: "person:ana"}

	plan := check[docstore.Saved](t)(s.Create(ctx, "Launch plan", "# Launch\n\n- date\n", docstore.KindWrite, north))
	check[docstore.Saved](t)(s.Append(ctx, plan.Document.ID, "- price", north))
	notes := check[docstore.Saved](t)(s.Create(ctx, "Projects/Notes", "notes\n", docstore.KindSave, ana))
	check[docstore.Saved](t)(s.Save(ctx, plan.Document.ID, 0, "# Launch\n\n- date: May\n\n- price\n", ana, 0))
	check[docstore.Saved](t)(s.Rename(ctx, plan.Document.ID, "Plans/Launch", ana))
	check[docstore.Saved](t)(s.Append(ctx, plan.Document.ID, "- venue", north))
	check[docstore.Saved](t)(s.Create(ctx, "Odd \"quoted\" \\ wide\u00b7dot é", "odd\n", docstore.KindWrite, north))
	gone := check[docstore.Saved](t)(s.Create(ctx, "Scratch: a? b", "x\n", docstore.KindWrite, north))
	check[docstore.Document](t)(s.Delete(ctx, gone.Document.ID, ana))

	dir := filepath.Join(t.TempDir(), "history")
	ex := check[filesync.Exported](t)(filesync.ExportGit(ctx, s, dir, filesync.GitOptions{}))
	if ex.Versions != 8 || ex.Deletes != 1 {
		t.Fatalf("exported %+v, want 8 versions and 1 delete", ex)
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
	if n := gitOut(t, dir, "rev-list", "--count", "refs/heads/personal"); n != "9" {
		t.Fatalf("%s commits, want 9 (8 versions, 1 delete)", n)
	}
	// Oldest first, each with its author, committer and time.
	log := gitOut(t, dir, "log", "--reverse", "--format=%an|%cn|%at|%s", "personal")
	lines := strings.Split(log, "\n")
	// The times are the versions' own: a write's clock is read again when its function runs
	// again (kv.DB's Batch), so they are read back rather than counted.
	at := func(n int) int64 {
		v := check[docstore.Version](t)(docstore.ReadIn(ctx, s, func(r *docstore.Reader) (docstore.Version, error) {
			_, v, err := r.Read(plan.Document.ID, n)
			return v, err
		}))
		return v.At.Unix()
	}
	if want := fmt.Sprintf("north|ana|%d|write Launch plan (version 1)", at(1)); lines[0] != want {
		t.Errorf("first commit %q, want %q", lines[0], want)
	}
	if want := fmt.Sprintf("ana|ana|%d|save Launch plan (version 3)", at(3)); lines[3] != want {
		t.Errorf("fourth commit %q, want %q", lines[3], want)
	}
	// The rename is a rename: --follow finds all five versions from the new name.
	follow := gitOut(t, dir, "log", "--follow", "--format=%s", "--", "Plans/Launch.md")
	if n := len(strings.Split(follow, "\n")); n != 5 {
		t.Errorf("git log --follow Plans/Launch.md shows %d commits, want 5:\n%s", n, follow)
	}
	// The work tree is the space now: the deleted document's file is gone.
	got := check[[]byte](t)(os.ReadFile(filepath.Join(dir, "Plans", "Launch.md")))
	if string(got) != "# Launch\n\n- date: May\n\n- price\n\n- venue\n" {
		t.Errorf("Plans/Launch.md is %q", got)
	}
	check[[]byte](t)(os.ReadFile(filepath.Join(dir, "Projects", "Notes.md")))
	if got := check[[]byte](t)(os.ReadFile(filepath.Join(dir, "Odd -quoted- - wide\u00b7dot é.md"))); string(got) != "odd\n" {
		t.Errorf("the odd title's file: %q", got)
	}
	if files := gitOut(t, dir, "-c", "core.quotePath=false", "ls-files"); files != "Odd -quoted- - wide\u00b7dot é.md\nPlans/Launch.md\nProjects/Notes.md" {
		t.Errorf("tracked files:\n%s", files)
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("the work tree isn't the export:\n%s", st)
	}

	// Again: nothing new.
	if ex := check[filesync.Exported](t)(filesync.ExportGit(ctx, s, dir, filesync.GitOptions{})); ex.Versions+ex.Deletes+ex.Restores != 0 {
		t.Fatalf("a run again exported %+v", ex)
	}
	// Two new versions, a document brought back: only those are added.
	check[docstore.Saved](t)(s.Append(ctx, notes.Document.ID, "more", north))
	check[docstore.Document](t)(s.Undelete(ctx, gone.Document.ID))
	check[docstore.Saved](t)(s.Append(ctx, plan.Document.ID, "- food", north))
	ex = check[filesync.Exported](t)(filesync.ExportGit(ctx, s, dir, filesync.GitOptions{}))
	if ex.Versions != 2 || ex.Restores != 1 || ex.Deletes != 0 {
		t.Fatalf("second export %+v, want 2 versions, 1 restore", ex)
	}
	if n := gitOut(t, dir, "rev-list", "--count", "personal"); n != "12" {
		t.Fatalf("%s commits after the second export, want 12", n)
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
	if got := check[[]byte](t)(os.ReadFile(filepath.Join(dir, "Scratch- a- b.md"))); string(got) != "x\n" {
		t.Errorf("the document brought back is %q", got)
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("the work tree isn't the export:\n%s", st)
	}
}

// TestExportGitRefusesAFolderOfOtherFiles: a folder with files and no repository is not
// written into.
func TestExportGitRefusesAFolderOfOtherFiles(t *testing.T) {
	testtool.Find(t, "git", "apt-get install -y git")
	s := docstore.New(kvtest.Open(t), "personal")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("mine"), 0o644)
	if _, err := filesync.ExportGit(context.Background(), s, dir, filesync.GitOptions{}); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Fatalf("export into a folder of other files: %v", err)
	}
}

// TestExportGitPathsCheckOut: titles that name .git in the ways a file system may read
// them (NTFS's short name GIT~1, trailing dots and spaces, HFS+'s ignored code points,
// case) are exported as files git checks out (the store refuses titles with HFS+'s ignored
// code points: gitPathTests has those): a clone with git's own protections on
// (core.protectNTFS, core.protectHFS) checks every document out, and nothing lands in
// the clone's .git. Before, GIT~1/config was committed as a path every checkout refuses.
func TestExportGitPathsCheckOut(t *testing.T) {
	testtool.Find(t, "git", "apt-get install -y git")
	ctx := context.Background()
	s := docstore.New(kvtest.Open(t), "personal").WithClock(clock())
	north := docstore.Author{By: "agent:north", For: "person:ana"}
	titles := []string{
		"GIT~1/config", "git~1/hooks/post-checkout", "Git~1./HEAD", "git~1 ./x", ".git/config", ".GIT./y",
		"GIT~1::$INDEX_ALLOCATION/u", `a\.git/t`, `a\GIT~1/s`, "..", "../../up", "a/./b", "a//b", "CON/x", "aux",
		"nul.txt", "LPT1/y", "com9", "ends with a space ./q", "Ok/notes",
	}
	for i, title := range titles {
		check[docstore.Saved](t)(s.Create(ctx, title, fmt.Sprintf("text %d\n", i), docstore.KindWrite, north))
	}
	dir := filepath.Join(t.TempDir(), "history")
	ex := check[filesync.Exported](t)(filesync.ExportGit(ctx, s, dir, filesync.GitOptions{}))
	if ex.Versions != len(titles) {
		t.Fatalf("exported %+v, want %d versions", ex, len(titles))
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
	clone := filepath.Join(t.TempDir(), "clone")
	gitOut(t, dir, "-c", "core.protectNTFS=true", "-c", "core.protectHFS=true", "clone", "-q", "--branch", "personal", dir, clone)
	files := strings.Split(gitOut(t, clone, "-c", "core.quotePath=false", "ls-files"), "\n")
	if len(files) != len(titles) {
		t.Fatalf("the clone tracks %d files, want %d:\n%s", len(files), len(titles), strings.Join(files, "\n"))
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(clone, filepath.FromSlash(f))); err != nil {
			t.Errorf("%s is tracked but not checked out: %v", f, err)
		}
	}
	if st := gitOut(t, clone, "status", "--porcelain"); st != "" {
		t.Errorf("the clone's work tree isn't its branch:\n%s", st)
	}
	// Nothing of the export went into the clone's own .git.
	filepath.WalkDir(filepath.Join(clone, ".git"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".md") {
			t.Errorf("the export wrote %s into the clone's .git", p)
		}
		return nil
	})
}

// TestExportGitIntoARepositoryItDidntMake: a repository with commits of its own and no
// refs/compass/SPACE is refused, the error naming the flag, and nothing is written; with
// IntoExisting the space's branch goes beside the repository's own, which is untouched.
// An empty repository (git init, nothing in it) is written into.
func TestExportGitIntoARepositoryItDidntMake(t *testing.T) {
	testtool.Find(t, "git", "apt-get install -y git")
	ctx := context.Background()
	s := docstore.New(kvtest.Open(t), "main").WithClock(clock())
	check[docstore.Saved](t)(s.Create(ctx, "Plan", "plan\n", docstore.KindWrite, docstore.Author{By: "person:ana"}))

	dir := t.TempDir()
	gitOut(t, dir, "init", "-q", "--initial-branch=main")
	os.WriteFile(filepath.Join(dir, "code.go"), []byte("package main\n"), 0o644)
	gitOut(t, dir, "add", "code.go")
	gitOut(t, dir, "-c", "user.name=ana", "-c", "user.email=ana@example.com", "commit", "-q", "-m", "mine")
	mine := gitOut(t, dir, "rev-parse", "main")

	_, err := filesync.ExportGit(ctx, s, dir, filesync.GitOptions{})
	if !errors.Is(err, filesync.ErrNotExported) || !strings.Contains(err.Error(), "--into-existing") {
		t.Fatalf("export into a repository it didn't make: %v", err)
	}
	if refs := gitOut(t, dir, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/main" {
		t.Errorf("a refused export left refs:\n%s", refs)
	}
	if got := gitOut(t, dir, "rev-parse", "main"); got != mine {
		t.Errorf("main moved from %s to %s", mine, got)
	}

	// Into another branch's name: a space "notes" in the same repository, with the flag.
	notes := docstore.New(kvtest.Open(t), "notes").WithClock(clock())
	check[docstore.Saved](t)(notes.Create(ctx, "Idea", "idea\n", docstore.KindWrite, docstore.Author{By: "person:ana"}))
	ex := check[filesync.Exported](t)(filesync.ExportGit(ctx, notes, dir, filesync.GitOptions{IntoExisting: true}))
	if ex.Versions != 1 || gitOut(t, dir, "rev-parse", "main") != mine {
		t.Errorf("export with IntoExisting: %+v; main %s", ex, gitOut(t, dir, "rev-parse", "main"))
	}
	// Made by it now: a run again needs no flag.
	check[docstore.Saved](t)(notes.Append(ctx, "Idea", "more", docstore.Author{By: "person:ana"}))
	if ex := check[filesync.Exported](t)(filesync.ExportGit(ctx, notes, dir, filesync.GitOptions{})); ex.Versions != 1 {
		t.Errorf("a run again exported %+v", ex)
	}

	empty := t.TempDir()
	gitOut(t, empty, "init", "-q")
	if ex := check[filesync.Exported](t)(filesync.ExportGit(ctx, s, empty, filesync.GitOptions{})); ex.Versions != 1 {
		t.Errorf("export into an empty repository: %+v", ex)
	}
}

// TestExportGitTakesTurns: four exports into one new folder at once make one repository
// with each version committed once (before, they raced to git init, fast-import and the
// index, and some failed or committed the history twice).
func TestExportGitTakesTurns(t *testing.T) {
	testtool.Find(t, "git", "apt-get install -y git")
	ctx := context.Background()
	s := docstore.New(kvtest.Open(t), "personal").WithClock(clock())
	north := docstore.Author{By: "agent:north", For: "person:ana"}
	for i := range 20 {
		check[docstore.Saved](t)(s.Create(ctx, fmt.Sprintf("Doc %d", i), "text\n", docstore.KindWrite, north))
	}
	dir := filepath.Join(t.TempDir(), "history")
	var wg sync.WaitGroup
	results := make([]filesync.Exported, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Go(func() {
			results[i], errs[i] = filesync.ExportGit(ctx, s, dir, filesync.GitOptions{LockWait: time.Minute})
		})
	}
	wg.Wait()
	total := 0
	for i, err := range errs {
		if err != nil {
			t.Errorf("export %d: %v", i, err)
		}
		total += results[i].Versions
	}
	if total != 20 {
		t.Errorf("the four exports committed %d versions between them, want 20: %+v", total, results)
	}
	if n := gitOut(t, dir, "rev-list", "--count", "personal"); n != "20" {
		t.Errorf("%s commits, want 20", n)
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("the work tree isn't the export:\n%s", st)
	}
}
