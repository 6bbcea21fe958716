package filesync

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// file is one Markdown file of the folder as a scan saw it.
type file struct {
	rel   string // slash-separated, relative to the folder
	size  int64
	mtime time.Time
	inode uint64
	hash  string // sha256 of its bytes, hex; "" until read
}

// ignorer says which paths the sync leaves alone: dotfiles and dot folders (.git,
// .obsidian, .compass), editors' swap, backup and temp files, files that aren't Markdown,
// and what the folder's .compassignore lists.
type ignorer struct {
	patterns []string // from .compassignore: a glob on the path or on a name; "dir/" a folder
}

// readIgnore reads dir/.compassignore, if there is one: a pattern a line, # for comments.
// A file of more than 1,000 patterns is read up to there (each is tried on every path), and
// only a regular file's first MiB (a FIFO would hang every pass).
func readIgnore(dir string) ignorer {
	var ig ignorer
	b, err := readRegularUpTo(filepath.Join(dir, ".compassignore"), 1<<20)
	if err != nil {
		return ig
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() && len(ig.patterns) < 1000 {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ig.patterns = append(ig.patterns, strings.TrimPrefix(line, "/"))
	}
	return ig
}

// skipName reports whether a file or folder called name is never the sync's, wherever it is.
func skipName(name string) bool {
	return strings.HasPrefix(name, ".") || // dotfiles, dot folders, vim's .swp, emacs's .#lock
		strings.HasSuffix(name, "~") || // backups (vim, emacs)
		strings.HasPrefix(name, "#") || // emacs's autosave
		name == "4913" // vim's probe that it may write in the folder
}

// ignored reports whether rel (slash-separated) is left alone; dir says it is a folder.
func (ig ignorer) ignored(rel string, dir bool) bool {
	name := path.Base(rel)
	if skipName(name) {
		return true
	}
	if !dir {
		lower := strings.ToLower(name)
		if !strings.HasSuffix(lower, ".md") || strings.HasSuffix(lower, ".tmp.md") {
			return true
		}
	}
	for _, p := range ig.patterns {
		folderOnly := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(p, "/")
		if folderOnly && !dir {
			continue
		}
		if ok, _ := path.Match(p, rel); ok {
			return true
		}
		if !strings.Contains(p, "/") {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
	}
	return false
}

// scan lists the Markdown files under dir that are not ignored, with what stat says of
// them (hashes are left for the caller to take when a file looks changed). Folders are
// listed too, for a watcher. A symlink is not followed. entering, if not nil (a test's:
// Sync.scanning), runs as scan enters each folder, before it reads it.
func scan(dir string, ig ignorer, entering func(rel string)) (files map[string]*file, folders []string, err error) {
	files = map[string]*file{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // a file gone while scanning: the next pass sees it
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if entering != nil && d.IsDir() {
			entering(rel)
		}
		if rel == "." {
			folders = append(folders, p)
			return nil
		}
		if ig.ignored(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			folders = append(folders, p)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		files[rel] = &file{rel: rel, size: info.Size(), mtime: info.ModTime(), inode: inodeOf(info)}
		return nil
	})
	return files, folders, err
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ignoredPath reports whether the file rel is left alone, or a folder on its way is.
func (ig ignorer) ignoredPath(rel string) bool {
	if ig.ignored(rel, false) {
		return true
	}
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if ig.ignored(d, true) {
			return true
		}
	}
	return false
}
