package tools

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// refusal is an answer that tells the model what to do next: a tool result with isError.
type refusal string

func (r refusal) Error() string { return string(r) }

func refusef(format string, a ...any) error { return refusal(fmt.Sprintf(format, a...)) }

// TimeLayout is how times are shown: minutes, the server's local time.
const TimeLayout = "2006-01-02 15:04"

func when(t time.Time) string { return t.Local().Format(TimeLayout) }

// link is how a document is named in answers: [Title](<base>/document/<id>).
func (s *Server) link(d docstore.Document) string {
	title := strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(d.Title)
	return fmt.Sprintf("[%s](%s/document/%s)", title, s.linkBase(), d.ID)
}

// by says who saved a version: "Ana", or "north for Ana".
func by(names spaces.Names, a docstore.Author) string {
	return a.Show(names)
}

// lines is a diff's size as answers give it: "+1 −1 lines" (U+2212 for removed).
func lines(added, removed int) string {
	return fmt.Sprintf("+%d \u2212%d lines", added, removed)
}

// gist folds white space in s and cuts it at about n characters with "…".
func gist(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := 0
	for i := range s {
		if cut == n {
			s = s[:i]
			break
		}
		cut++
	}
	if sp := strings.LastIndexByte(s, ' '); sp > n*3/4 {
		s = s[:sp]
	}
	return strings.TrimRight(s, " ,;:") + "…"
}

// short is a name the model gave, as answers quote it back: cut past 100 characters, so a
// huge one doesn't come back whole.
func short(name string) string {
	if utf8.RuneCountInString(name) <= 100 {
		return name
	}
	return string([]rune(name)[:100]) + "…"
}

// quoteBlock fences text as Markdown code, with a fence longer than any run of backticks in it.
func quoteBlock(text string) string {
	// One more backtick than the longest run in text, found in one pass (growing the fence
	// until text doesn't contain it would be quadratic on a text of many runs).
	longest, run := 0, 0
	for i := range len(text) {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "\n" + text + "\n" + fence
}

// explain turns the store's errors about a named document into what the model reads
// (docstore.Explain tells them apart); other errors are returned as they are.
func (s *Server) explain(err error, name string) error {
	p := docstore.Explain(err)
	switch p.Kind {
	case docstore.ProblemNotFound:
		return s.notFound(p.NotFound, name)
	case docstore.ProblemAmbiguous:
		amb := p.Ambiguous
		links := make([]string, len(amb.Matches))
		for i, d := range amb.Matches {
			links[i] = s.link(d)
		}
		more := ""
		if amb.More > 0 {
			more = fmt.Sprintf(" and %d more", amb.More)
		}
		return refusef("%q could be any of %d documents: %s%s. Give the whole title or the id.", short(name), len(amb.Matches)+amb.More, strings.Join(links, ", "), more)
	case docstore.ProblemTaken:
		taken := p.Taken
		if taken.Alike {
			return refusef("The title %q looks the same as another document's here, %q: %s (id %s). Titles that differ only in spaces, letter widths or invisible characters can't be told apart: to replace its text, name it (document: %q); or pick a title that reads differently.", short(taken.Title), short(taken.Other.Title), s.link(taken.Other), taken.Other.ID, taken.Other.ID)
		}
		return refusef("Another document here is already titled %q: %s (id %s). To replace its text, name it (document: %q); or pick another title.", taken.Title, s.link(taken.Other), taken.Other.ID, taken.Other.ID)
	case docstore.ProblemNoVersion:
		nover := p.NoVersion
		if nover.Document.Version == 1 {
			return refusef("%s has only version 1: there's no version %d.", nover.Document.Title, nover.Asked)
		}
		return refusef("%s has versions 1 to %d: there's no version %d.", nover.Document.Title, nover.Document.Version, nover.Asked)
	case docstore.ProblemBadTitle:
		return refusef("That title won't do: %s.", p.Reason)
	case docstore.ProblemBadText:
		return refusef("That text won't do: %s. Nothing was saved.", p.Reason)
	}
	return err
}

// notFound refuses a name that names nothing, with the titles close to it (see
// docstore.NotFoundError) as links: "Close: [Launch plan](...)."
func (s *Server) notFound(nf *docstore.NotFoundError, name string) error {
	answer := fmt.Sprintf("No document %q in this space: list_documents shows what's here.", short(name))
	if len(nf.Close) > 0 {
		links := make([]string, len(nf.Close))
		for i, d := range nf.Close {
			links[i] = s.link(d)
		}
		answer += " Close: " + strings.Join(links, ", ") + "."
	}
	return refusal(answer)
}
