package filesync

import (
	"path"
	"strings"
	"unicode"
)

// FileFor is where a document titled title lives in a folder, as a slash-separated path
// relative to it: the title's "/" are folders, and ".md" is added. A part of the title a
// file system would refuse or the sync would ignore (empty, "." or "..", starting with a
// dot, or holding \ : * ? " < > | or control characters, which Windows refuses) has those
// characters replaced by "-" and a leading dot by "_", so that every title has a file, on
// every system; TitleFor of that file is then another title, which is why the sync keeps
// the document's id by path (State) rather than read titles back from names.
func FileFor(title string) string {
	parts := strings.Split(title, "/")
	for i, p := range parts {
		p = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || strings.ContainsRune(`\:*?"<>|`, r) {
				return '-'
			}
			return r
		}, p)
		p = strings.TrimRight(strings.TrimSpace(p), ".")
		if strings.HasPrefix(p, ".") {
			p = "_" + p[1:]
		}
		if p == "" {
			p = "_"
		}
		if len(p) > 200 { // a file name is at most 255 bytes on most systems, ".md" and a suffix with it
			cut := 200
			for cut > 0 && (p[cut]&0xC0) == 0x80 {
				cut--
			}
			p = p[:cut]
		}
		parts[i] = p
	}
	return strings.Join(parts, "/") + ".md"
}

// TitleFor is the title a file at rel (slash-separated, relative to the folder) gives a
// new document: its path without ".md", folders and all ("Projects/Launch plan.md" is
// "Projects/Launch plan").
func TitleFor(rel string) string {
	return strings.TrimSuffix(path.Clean(rel), ".md")
}

// withID is name (a file's path ending in .md) with id put before the extension: the file
// of a document whose title's file is another document's already.
func withID(name, id string) string {
	return strings.TrimSuffix(name, ".md") + " (" + id + ").md"
}

// fileFor is FileFor as the sync writes it: a part the scan would skip (an editor's temp or
// backup name: starting with "#", ending in "~", vim's "4913", a file ending in ".tmp.md")
// is changed so that the scan reads it: "#" first becomes "_", "~" last "-", and "_" is
// added to "4913" and to a ".tmp" before ".md". Written as it was, the file would read as
// gone at the next pass, and its document be deleted. And a part a file system reads as
// .git (NTFS's "GIT~1", HFS+'s ".git" with ignored code points) or Windows as a device
// ("CON", "aux.md") gets "_" before it, as export --git's paths do (gitpath.go), and
// loses trailing dots and spaces: a folder synced to Windows, or put in git, must not
// write into a .git or fail on a name. (export --git keeps FileFor, and maps those parts
// itself: git ignores nothing.)
func fileFor(title string) string {
	parts := strings.Split(strings.TrimSuffix(FileFor(title), ".md"), "/")
	last := len(parts) - 1
	for i, p := range parts {
		if strings.HasPrefix(p, "#") {
			p = "_" + p[1:]
		}
		if strings.HasSuffix(p, "~") {
			p = p[:len(p)-1] + "-"
		}
		if p == "4913" || i == last && strings.HasSuffix(strings.ToLower(p), ".tmp") {
			p += "_"
		}
		if i < last {
			if p = strings.TrimRight(p, ". "); p == "" {
				p = "_"
			}
		}
		name := p
		if i == last {
			name += ".md"
		}
		if ntfsDotGit(name) || hfsDotGit(name) || windowsDevice(name) {
			p = "_" + p
		}
		parts[i] = p
	}
	return strings.Join(parts, "/") + ".md"
}
