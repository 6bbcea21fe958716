package style

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// Every relative link in the README and docs/*.md leads somewhere: to a file or folder of the
// repository, and, for a #fragment into a Markdown file (or into the file itself), to one of
// its headings as GitHub names them. A moved file or a renamed heading fails here, not in a
// reader's browser.
func TestDocsLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	links := 0
	for _, f := range files {
		n, problems := checkLinks(root, f)
		links += n
		for _, p := range problems {
			t.Error(p)
		}
	}
	if links == 0 {
		t.Fatal("no relative links found in README.md and docs/*.md: the link reader is broken")
	}
}

// The checker itself fails on what it must catch: a missing file, a missing heading in
// another file and in the same one, a link out of the repository; and passes what GitHub
// resolves (images, folders, code files, anchors of headings with code, punctuation and
// repeats), ignoring links in code.
func TestDocsLinkCheckerCatchesBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/shot.png", "")
	write("kv/kv.go", "package kv\n")
	write("docs/B.md", "# B\n\n## The `kv` boundary: why?\n\n## Repeat\n\n## Repeat\n\n## 1b. stdio, server side: read_document\n")
	write("README.md", strings.Join([]string{
		"# Top",
		"",
		"[ok](docs/B.md) [ok](docs/B.md#the-kv-boundary-why) [ok](<docs/B.md#repeat-1>)",
		"![ok](docs/shot.png \"a title\") [ok](kv/) [ok](kv/kv.go#L1) [ok](#top) [ok](https://example.com/x)",
		"[ok](docs/B.md#1b-stdio-server-side-read_document) [ok][ref]",
		"",
		"`[code](nowhere.md)` and ``[code `x`](nowhere.md)``",
		"",
		"```",
		"[fenced](nowhere.md)",
		"```",
		"",
		"[bad](missing.md) [bad](docs/B.md#no-such-heading) [bad](#nowhere) [bad](../outside.md)",
		"[bad](docs/B.md#repeat-2) ![bad](docs/missing.png) [bad][badref]",
		"",
		"[ref]: docs/B.md#repeat",
		"[badref]: docs/gone.md",
	}, "\n"))
	n, problems := checkLinks(root, "README.md")
	want := []string{"missing.md", "#no-such-heading", "#nowhere", "../outside.md", "#repeat-2", "docs/missing.png", "docs/gone.md"}
	if len(problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
	for _, w := range want {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, w) }) {
			t.Errorf("no problem reported for %s; got:\n%s", w, strings.Join(problems, "\n"))
		}
	}
	if n != 16 {
		t.Errorf("%d relative links read, want 16 (the fenced and code ones left out)", n)
	}
}

// checkLinks reads the Markdown file name (slash-separated, relative to root) and returns how
// many relative links it holds and what is wrong with them, each problem naming the file,
// its line and the link.
func checkLinks(root, name string) (int, []string) {
	text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		return 0, []string{err.Error()}
	}
	var problems []string
	links := 0
	for _, l := range markdownLinks(string(text)) {
		target := l.target
		if target == "" || hasScheme(target) {
			continue
		}
		links++
		bad := func(why string) {
			problems = append(problems, fmt.Sprintf("%s:%d: link %q: %s", name, l.line, l.target, why))
		}
		file, fragment, _ := strings.Cut(target, "#")
		file, err := url.PathUnescape(file)
		if err != nil {
			bad("not a valid path")
			continue
		}
		if strings.HasPrefix(file, "/") {
			bad("starts with /: give the path relative to the file, as GitHub and an unpacked archive both resolve it")
			continue
		}
		resolved := name
		if file != "" {
			resolved = path.Clean(path.Join(path.Dir(name), file))
		}
		if resolved == ".." || strings.HasPrefix(resolved, "../") {
			bad("leads out of the repository")
			continue
		}
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(resolved)))
		if err != nil {
			bad(fmt.Sprintf("%s doesn't exist", resolved))
			continue
		}
		if fragment == "" || !strings.HasSuffix(resolved, ".md") || info.IsDir() {
			continue // GitHub's #L10 line anchors in code files are not checked
		}
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(resolved)))
		if err != nil {
			bad(err.Error())
			continue
		}
		if !slices.Contains(headingSlugs(string(md)), fragment) {
			bad(fmt.Sprintf("%s has no heading #%s", resolved, fragment))
		}
	}
	return links, problems
}

type link struct {
	line   int
	target string
}

var (
	// A link reference definition: [label]: destination.
	refDefinition = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	// An ATX heading: up to three spaces, 1 to 6 #, its text, optional closing #s.
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	scheme     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

func hasScheme(target string) bool { return scheme.MatchString(target) }

// markdownLinks finds the destinations of inline links and images, [text](dest) and
// ![alt](dest), and of reference definitions, outside fenced code blocks and code spans.
// It reads paragraph by paragraph, since a code span may run over a line break.
func markdownLinks(text string) []link {
	var links []link
	var para []string
	paraStart := 0
	flush := func() {
		if len(para) == 0 {
			return
		}
		links = append(links, inlineLinks(strings.Join(para, "\n"), paraStart)...)
		para = nil
	}
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOpening(trimmed); f != "" {
			flush()
			fence = f
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if m := refDefinition.FindStringSubmatch(line); m != nil {
			flush()
			links = append(links, link{line: i + 1, target: strings.Trim(m[1], "<>")})
			continue
		}
		if len(para) == 0 {
			paraStart = i + 1
		}
		para = append(para, line)
	}
	flush()
	return links
}

// fenceOpening is the fence (``` or ~~~, as long as given) that line opens, or "".
func fenceOpening(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// inlineLinks finds the destinations of [text](dest) in a paragraph that starts at line
// first, leaving out code spans (a run of backticks to the next run of the same length).
func inlineLinks(para string, first int) []link {
	var links []link
	line := first
	for i := 0; i < len(para); i++ {
		switch {
		case para[i] == '\n':
			line++
		case para[i] == '`':
			n := 1
			for i+n < len(para) && para[i+n] == '`' {
				n++
			}
			end := closingBackticks(para, i+n, n)
			if end < 0 { // no closing run: literal backticks
				i += n - 1
				continue
			}
			line += strings.Count(para[i:end], "\n")
			i = end - 1
		case para[i] == ']' && i+1 < len(para) && para[i+1] == '(':
			if dest, ok := destination(para[i+2:]); ok {
				links = append(links, link{line: line, target: dest})
			}
		}
	}
	return links
}

// closingBackticks is the end of the first run of exactly n backticks at or after from, or -1.
func closingBackticks(s string, from, n int) int {
	for j := from; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		k := j
		for k < len(s) && s[k] == '`' {
			k++
		}
		if k-j == n {
			return k
		}
		j = k
	}
	return -1
}

// destination reads a link's destination from just after its "(": <dest> or dest up to
// white space (a title may follow) or the ")" that balances the opening one.
func destination(s string) (string, bool) {
	s = strings.TrimLeft(s, " \t\n")
	if strings.HasPrefix(s, "<") {
		end := strings.IndexAny(s, ">\n")
		if end < 0 || s[end] != '>' {
			return "", false
		}
		return s[1:end], true
	}
	depth := 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth == 0:
			return s[:i], true
		case r == ')':
			depth--
		case unicode.IsSpace(r):
			return s[:i], true
		}
	}
	return "", false
}

// headingSlugs are the anchors GitHub gives a Markdown file's headings: each heading's text
// as it reads (code spans, emphasis and links reduced to their text), lower-cased, with
// every character but letters, digits, marks, "-", "_" and spaces removed and each space
// made "-"; a repeated slug gets "-1", "-2", ... in order.
func headingSlugs(text string) []string {
	var slugs []string
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOpening(trimmed); f != "" {
			fence = f
			continue
		}
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		base := slugify(headingText(m[1]))
		slug := base
		for {
			if _, taken := seen[slug]; !taken {
				break
			}
			seen[base]++
			slug = fmt.Sprintf("%s-%d", base, seen[base])
		}
		seen[slug] = 0 // a slug made by a suffix is taken too, as in GitHub's slugger
		slugs = append(slugs, slug)
	}
	return slugs
}

var (
	mdLink   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag  = regexp.MustCompile(`<[^>]+>`)
	emphasis = strings.NewReplacer("`", "", "*", "", "~~", "")
)

// headingText is a heading as it reads: links and images are their text, and code-span
// backticks, emphasis stars, strikethrough and HTML tags are gone. Underscores stay, since
// they are more often in names (read_document) than emphasis in these files.
func headingText(s string) string {
	s = mdLink.ReplaceAllString(s, "$1")
	s = htmlTag.ReplaceAllString(s, "")
	return emphasis.Replace(s)
}

func slugify(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
