package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/mdscan"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// MaxListLimit is the most documents (or conversations) one listing shows.
const MaxListLimit = 500

// read runs fn on one snapshot of the space's documents (docstore.Store.View), and gives
// its answer: everything one call shows, it reads there, names included.
func (s *Server) read(ctx context.Context, fn func(r *docstore.Reader) (string, error)) (string, error) {
	return docstore.ReadIn(ctx, s.docs, fn)
}

// limitOf checks an optional limit, giving def when it is absent.
func limitOf(tool string, limit *int, def int) (int, error) {
	if limit == nil {
		return def, nil
	}
	if *limit < 1 || *limit > MaxListLimit {
		return 0, refusef("%s's limit is 1 to %d; it got %d.", tool, MaxListLimit, *limit)
	}
	return *limit, nil
}

type listDocumentsArgs struct {
	Limit      *int   `arg:"limit" about:"Default 50, at most 500."`
	Query      string `arg:"query" about:"A question or words; \"quoted phrases\" must match."`
	SignIn     string `arg:"sign_in" when:"sign-in" about:"Instead: a one-time sign-in link for the person's page (DOC or /)."`
	LinkedFrom string `arg:"linked_from" about:"A document: those it links to."`
	LinksTo    string `arg:"links_to" about:"A document: those linking to it."`
	Links      string `arg:"links" about:"none (nothing links to them) or broken."`
}

func (s *Server) listDocuments(ctx context.Context, a *listDocumentsArgs) (string, error) {
	if a.SignIn != "" {
		return s.signInLink(ctx, a.SignIn)
	}
	limit, err := limitOf("list_documents", a.Limit, 50)
	if err != nil {
		return "", err
	}
	var sim map[string]float32
	if strings.TrimSpace(a.Query) != "" && a.LinkedFrom == "" && a.LinksTo == "" && a.Links == "" {
		sim = s.meaning(ctx, a.Query)
	}
	return s.read(ctx, func(r *docstore.Reader) (string, error) {
		if a.LinkedFrom != "" || a.LinksTo != "" || a.Links != "" {
			return s.linkedDocuments(r, a, limit)
		}
		if strings.TrimSpace(a.Query) != "" {
			return s.searchDocuments(r, a.Query, limit, sim)
		}
		return s.listed(r, limit)
	})
}

// listed is list_documents without a query: the latest saved first.
func (s *Server) listed(r *docstore.Reader, limit int) (string, error) {
	docs, total, err := r.List(limit)
	if err != nil {
		return "", err
	}
	if total == 0 {
		return "No documents in this space yet.", nil
	}
	var b strings.Builder
	if len(docs) < total {
		fmt.Fprintf(&b, "Documents here (%d of %d), latest saved first:\n", len(docs), total)
	} else {
		fmt.Fprintf(&b, "Documents here (%d), latest saved first:\n", total)
	}
	s.rows(&b, r.Names(), docs)
	if len(docs) < total {
		fmt.Fprintf(&b, "%d more: call list_documents with a larger limit (at most %d), or name a document by its title.\n", total-len(docs), MaxListLimit)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// ErrNoSignIn is returned by Config.SignIn when this server may not hand out sign-in
// links (see Config.SignIn).
var ErrNoSignIn = errors.New("this server hands out no sign-in links")

// signInLink is list_documents' sign_in: a one-time link that signs the person's browser
// in to their page, opening the document named (or the list, for "/").
//
// In review mode it hands out nothing, whatever Config.SignIn says: a link signs in as the
// person, and a reviewed agent holding one could accept its own proposals (issue 34).
func (s *Server) signInLink(ctx context.Context, name string) (string, error) {
	if s.reviewed(ctx) {
		return "", refusal(reviewedSignIn)
	}
	next := "/"
	if name = strings.TrimSpace(name); name != "/" {
		id, ok := mdscan.DocumentID(name)
		if !ok {
			d, err := docstore.ReadIn(ctx, s.docs, func(r *docstore.Reader) (docstore.Document, error) { return r.Find(name) })
			if err != nil {
				return "", s.explain(err, name)
			}
			id = d.ID
		}
		next = "/document/" + id
	}
	if s.cfg.SignIn == nil {
		return "", refusal(noSignIn)
	}
	link, err := s.cfg.SignIn(ctx, next)
	if errors.Is(err, ErrNoSignIn) {
		return "", refusal(noSignIn)
	}
	if err != nil {
		return "", err
	}
	return "A sign-in link to the person's page (it works once, within 15 minutes, on this computer): " + link + "\nGive it to them as it is.", nil
}

// reviewedSignIn is the answer to sign_in in review mode.
const reviewedSignIn = "In review mode this server hands you no sign-in link: a link signs in as the person, and the person decides on your proposals themselves. " +
	"Ask the person to run `compass-mcp open` in a terminal (with the server's --data); it prints their sign-in link and opens their page."

const noSignIn = "This server hands out no sign-in links: it serves a team (it has tokens), or no page of it is on this computer. " +
	"The person signs in with the link that `compass-mcp open` prints, run in a terminal where the server runs (with its --data)."

type readDocumentArgs struct {
	Document string `arg:"document,required" about:"Title, id or link."`
	Version  *int   `arg:"version" about:"An older version."`
	Since    *int   `arg:"since" about:"A version: what changed after it."`
	Lines    string `arg:"lines" about:"120-180, 120- or -40."`
	Proposal *int   `arg:"proposal" about:"A proposal's number."`
	Section  string `arg:"section" about:"A heading: FAQ, Launch/Pricing."`
}

func (s *Server) readDocument(ctx context.Context, a *readDocumentArgs) (string, error) {
	if a.Proposal != nil {
		if a.Version != nil || a.Since != nil || a.Lines != "" {
			return "", refusef("read_document takes proposal alone (with document): it shows that proposed change as a diff against the version it was made on.")
		}
		return s.showProposal(ctx, a.Document, *a.Proposal)
	}
	if a.Since != nil {
		if a.Version != nil {
			return "", refusef("read_document takes version or since, not both: version reads one version whole, since shows what changed after it.")
		}
		if a.Lines != "" {
			return "", refusef("read_document takes lines or since, not both: since shows what changed as a diff; read the lines it names with lines.")
		}
		if a.Section != "" {
			return "", refusef("read_document takes section or since, not both: since shows what changed as a diff; section reads a heading's part of a version.")
		}
		return s.read(ctx, func(r *docstore.Reader) (string, error) { return s.changesSince(r, a.Document, *a.Since) })
	}
	if a.Lines != "" && a.Section != "" {
		return "", refusef("read_document takes lines or section, not both: section reads a heading's lines, numbered; lines reads the lines given.")
	}
	version := 0
	if a.Version != nil {
		version = *a.Version
		if version < 1 {
			return "", refusef("read_document's version is a version number, 1 or more; it got %d. Leave it out to read the latest.", version)
		}
	}
	reader := s.author(ctx)
	return s.read(ctx, func(r *docstore.Reader) (string, error) {
		if a.Lines != "" {
			return s.someLines(r, a.Document, version, a.Lines)
		}
		if strings.TrimSpace(a.Section) != "" {
			return s.section(r, a.Document, version, a.Section)
		}
		return s.readWhole(r, a.Document, version, reader)
	})
}

// readWhole is read_document of a whole version: its header, its text, and after it the
// document's links (of the latest version), the open proposals and comments.
func (s *Server) readWhole(r *docstore.Reader, name string, version int, reader docstore.Author) (string, error) {
	d, v, err := r.Read(name, version)
	if err != nil {
		return "", s.explain(err, name)
	}
	notes, err := r.Notes(d.ID, v.Number, reader, NotesShown)
	if err != nil {
		return "", err
	}
	var links string
	if v.Number == d.Version {
		ls, err := r.Links(d, MaxLinksShown)
		if err != nil {
			return "", err
		}
		links = strings.Join(s.afterText(d, ls), "\n")
	}
	names := r.Names()
	return s.versionHead(names, d, v) + "\n\n" + afterText(v.Text, links, s.proposalNotes(names, notes), s.commentNotes(names, notes)), nil
}

// versionHead is the line read_document puts above a version.
func (s *Server) versionHead(names spaces.Names, d docstore.Document, v docstore.Version) string {
	head := fmt.Sprintf("%s · version %d of %d · saved by %s %s", s.link(d), v.Number, d.Version, by(names, v.Author), when(v.At))
	if v.Title != d.Title {
		head += fmt.Sprintf(" · titled %q then", v.Title)
	}
	return head
}

type writeDocumentArgs struct {
	Title    string `arg:"title" about:"Needed for a new document."`
	Text     string `arg:"text,required" about:"The whole Markdown text."`
	Document string `arg:"document" about:"To replace: its title, id or link."`
	Version  *int   `arg:"version" about:"What your text was based on."`
}

func (s *Server) writeDocument(ctx context.Context, a *writeDocumentArgs) (string, error) {
	if a.Document == "" {
		if a.Version != nil {
			return "", refusef("write_document's version goes with document (the one your text replaces); a new document has no version yet.")
		}
		if strings.TrimSpace(a.Title) == "" {
			return "", refusef("write_document needs a title to make a new document; to replace an existing one's text, name it (document).")
		}
		saved, err := s.docs.Create(ctx, a.Title, a.Text, docstore.KindWrite, s.author(ctx))
		if err != nil {
			return "", s.explain(err, a.Title)
		}
		s.noteSaved(ctx, saved)
		return s.savedAnswer(saved), nil
	}
	base := 0
	if a.Version != nil {
		if base = *a.Version; base < 1 {
			return "", refusef("write_document's version is the version your text was based on, 1 or more; it got %d.", base)
		}
	}
	saved, err := s.writer(ctx).Write(ctx, a.Document, a.Title, a.Text, base, s.author(ctx))
	var clash *docstore.ClashError
	if errors.As(err, &clash) {
		return "", s.clashAnswer(clash)
	}
	if err != nil {
		return "", s.explain(err, a.Document)
	}
	s.noteSaved(ctx, saved)
	return s.savedAnswer(saved), nil
}

type appendDocumentArgs struct {
	Document string `arg:"document,required" about:"Title, id or link."`
	Text     string `arg:"text,required" about:"The Markdown to add."`
}

func (s *Server) appendDocument(ctx context.Context, a *appendDocumentArgs) (string, error) {
	if strings.TrimSpace(a.Text) == "" {
		return "", refusef("append_document needs some text to add; it got only white space.")
	}
	saved, err := s.writer(ctx).Append(ctx, a.Document, a.Text, s.author(ctx))
	if err != nil {
		return "", s.explain(err, a.Document)
	}
	s.noteSaved(ctx, saved)
	return s.savedAnswer(saved), nil
}

type editDocumentArgs struct {
	Document string  `arg:"document,required" about:"Title, id or link."`
	Old      string  `arg:"old,required" about:"The text to replace, exactly; it must occur once."`
	New      *string `arg:"new,required" about:"Its replacement (empty deletes it)."`
}

func (s *Server) editDocument(ctx context.Context, a *editDocumentArgs) (string, error) {
	saved, err := s.writer(ctx).Edit(ctx, a.Document, a.Old, *a.New, s.author(ctx))
	var (
		miss *docstore.EditMissError
		many *docstore.EditManyError
	)
	switch {
	case errors.As(err, &miss):
		return "", s.missAnswer(miss)
	case errors.As(err, &many):
		return "", refusal(manyAnswer(many, s.link(many.Document)))
	case err != nil:
		return "", s.explain(err, a.Document)
	}
	s.noteSaved(ctx, saved)
	return s.savedAnswer(saved), nil
}

// manyAnswer says where the text to replace occurs, each line once and at most
// docstore.MaxManyLines of them, however often it occurs.
func manyAnswer(many *docstore.EditManyError, link string) string {
	nums := make([]string, len(many.Lines))
	for i, n := range many.Lines {
		nums[i] = fmt.Sprint(n)
	}
	where := "line " + nums[0]
	if len(nums) > 1 {
		where = "lines " + strings.Join(nums, ", ")
	}
	if many.More {
		where += " and more"
	}
	times := fmt.Sprintf("%d times", many.Count)
	if many.Count < 2 {
		times = "more than once (its occurrences overlap)"
	}
	return fmt.Sprintf("The text to replace occurs %s in %s (%s): give more of what's around it.", times, link, where)
}

func (s *Server) missAnswer(miss *docstore.EditMissError) error {
	if len(miss.Near) == 0 {
		return refusef("The text to replace isn't in %s: read it again (read_document) and copy it exactly.", s.link(miss.Document))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The text to replace isn't in %s as given, but it is there with different white space (indentation, line ends or blanks):", s.link(miss.Document))
	for _, n := range miss.Near {
		if n.Cut {
			fmt.Fprintf(&b, "\n\nAt line %d (its first %d bytes; more of it follows):\n%s", n.Line, len(n.Text), quoteBlock(n.Text))
			continue
		}
		fmt.Fprintf(&b, "\n\nAt line %d:\n%s", n.Line, quoteBlock(n.Text))
	}
	b.WriteString("\n\nCopy old exactly from the text above and try again.")
	return refusal(b.String())
}

func (s *Server) savedAnswer(saved docstore.Saved) string {
	if saved.Proposal != nil {
		return s.proposedAnswer(saved)
	}
	if saved.Unchanged {
		return fmt.Sprintf("%s already says that: nothing changed, so no new version (it stays at version %d).", s.link(saved.Document), saved.Document.Version)
	}
	merged := ""
	if saved.Kind == docstore.KindMerge {
		merged = ", merged with the changes made since your version"
	}
	return fmt.Sprintf("Saved %s as version %d%s: %s%s.", s.link(saved.Document), saved.Document.Version, merged, lines(saved.Added, saved.Removed), Relinked(saved))
}

// Relinked is what a change of title did to the [[links]] to the document (docstore's
// Saved.Relinked): ", and updated links in 3 documents", or "" when it did nothing.
func Relinked(saved docstore.Saved) string {
	out := ""
	if saved.Relinked > 0 {
		out = ", and updated links in " + count(saved.Relinked, "document")
	}
	if saved.RelinkLeft > 0 {
		out += fmt.Sprintf("; the links in %s more still say its old title (their rewrite failed; they still lead to it here)", count(saved.RelinkLeft, "document"))
	}
	return out
}
