package filesync

import (
	"fmt"
	"strings"
	"unicode"
)

// The paths export --git commits must check out wherever the repository is cloned: git
// refuses, at checkout, a path with a part that a file system reads as .git (so that a
// repository can't write into the clone's own .git), and Git for Windows a part Windows
// can't make. These are git's rules (core.protectNTFS, on by default everywhere, and
// core.protectHFS), written from their documented behaviour:
//
//   - NTFS: ".git" and its 8.3 short name "git~1", any case, followed by nothing but dots
//     and spaces (which NTFS drops), or by ":" and a stream name (".git::$INDEX_ALLOCATION"
//     is .git itself); "\" is a separator there as "/" is;
//   - HFS+: ".git", any case, with any of the code points HFS+ ignores in a name (zero
//     width joiners and non-joiners, direction marks and overrides, U+206A to U+206F,
//     U+FEFF) anywhere in it;
//   - Windows: no part named CON, PRN, AUX, NUL, COM1 to COM9 or LPT1 to LPT9 (whatever
//     follows a dot: "aux.md" is AUX), and none ending in a dot or a space.
//
// The .gitmodules forms (GITMOD~1 and the like) are refused by git only for symbolic links,
// and the export writes regular files only; FileFor already leaves no part starting with a
// dot, so no .gitmodules, .gitattributes or .gitignore can come from a title.

// gitFileFor is the file a document titled title is committed as: FileFor's, with each
// part that a file system would read as .git, or Windows can't make, prefixed with "_" as
// FileFor does to a leading dot (GIT~1/config is _GIT~1/config.md), and trailing dots and
// spaces dropped.
func gitFileFor(title string) string {
	parts := strings.Split(FileFor(title), "/")
	for i, p := range parts {
		p = strings.TrimRight(p, ". ")
		if p == "" {
			p = "_"
		}
		if ntfsDotGit(p) || hfsDotGit(p) || windowsDevice(p) {
			p = "_" + p
		}
		parts[i] = p
	}
	return strings.Join(parts, "/")
}

// checkGitPath says what is wrong with p as a path the export commits, as git's own check
// of a path before it is checked out would (and a little more: no part starts with a dot);
// nil when nothing is.
func checkGitPath(p string) error {
	bad := func(why string) error { return fmt.Errorf("%q can't be committed: %s", p, why) }
	switch {
	case p == "":
		return bad("it is empty")
	case strings.ContainsAny(p, `\:`):
		return bad(`it has \ or : (a separator and a stream on NTFS, a drive on Windows)`)
	case strings.ContainsFunc(p, unicode.IsControl):
		return bad("it has a control character")
	}
	for part := range strings.SplitSeq(p, "/") {
		switch {
		case part == "":
			return bad("it has an empty part (a / at its start or end, or two together)")
		case part == "." || part == "..":
			return bad("it has a . or .. part")
		case strings.HasPrefix(part, "."):
			return bad("a part starts with a dot")
		case ntfsDotGit(part) || hfsDotGit(part):
			return bad(fmt.Sprintf("its part %q is .git to NTFS or HFS+", part))
		case windowsDevice(part):
			return bad(fmt.Sprintf("its part %q is a device's name on Windows", part))
		case strings.HasSuffix(part, ".") || strings.HasSuffix(part, " "):
			return bad(fmt.Sprintf("its part %q ends in a dot or a space, which Windows drops", part))
		}
	}
	return nil
}

// ntfsDotGit tells whether NTFS reads the name part as .git: ".git" or "git~N" (any case),
// then only dots and spaces up to its end, a separator or a ":".
func ntfsDotGit(part string) bool {
	lower := strings.ToLower(part)
	var rest string
	switch {
	case strings.HasPrefix(lower, ".git"):
		rest = lower[4:]
	case strings.HasPrefix(lower, "git~") && len(lower) > 4 && lower[4] >= '0' && lower[4] <= '9':
		// git~1 is the short name NTFS gives .git; a later ~N where git* names came first.
		rest = strings.TrimLeft(lower[4:], "0123456789")
	default:
		return false
	}
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '.', ' ':
		case ':', '/', '\\':
			return true
		default:
			return false
		}
	}
	return true
}

// hfsIgnored are the code points HFS+ leaves out when it compares names.
func hfsIgnored(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff
}

// hfsDotGit tells whether HFS+ reads the name part as .git: without the code points it
// ignores, ".git" in any case.
func hfsDotGit(part string) bool {
	return strings.EqualFold(strings.Map(func(r rune) rune {
		if hfsIgnored(r) {
			return -1
		}
		return r
	}, part), ".git")
}

// windowsDevice tells whether Windows takes the name part for a device: its name before
// the first dot, trailing spaces dropped, is CON, PRN, AUX, NUL, CONIN$, CONOUT$, or COM or
// LPT and a digit (or ¹ ² ³).
func windowsDevice(part string) bool {
	base, _, _ := strings.Cut(part, ".")
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT") {
		switch base[3:] {
		case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
			return true
		}
	}
	return false
}
