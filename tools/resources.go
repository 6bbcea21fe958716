package tools

// Documents are offered as MCP resources as well as through the tools, for clients that show
// resources to the person (a picker, an attachment menu): compass://document/{id} is a
// document's latest version, compass://document/{id}/v/{n} version n, each as text/markdown.
// resources/list gives the space's documents, newest made first, a page at a time (see
// prepareResources for why that order, and how the page gets past mcp-go).
//
// Completions help a person fill in what names a document or a conversation: the resource
// templates' id (document ids) and n (that document's versions), and any prompt argument
// called document (titles) or conversation (conversation ids).

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"

	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/jsonargs"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

const (
	// DocumentURIPrefix begins every document's resource URI: compass://document/<id>.
	DocumentURIPrefix = "compass://document/"
	// ResourcePage is how many documents one resources/list page holds.
	ResourcePage = 100

	markdownType    = "text/markdown"
	latestTemplate  = DocumentURIPrefix + "{id}"
	versionTemplate = DocumentURIPrefix + "{id}/v/{n}"
	// anyURI is an unlisted template that matches every URI no other resource does, so
	// that a URI naming nothing here is answered by readResource (resource not found, with
	// its URI: SEP-2164) rather than by mcp-go, whose answer has no data.uri.
	anyURI = "{+uri}"
	// cursorPrefix marks the cursors this server gives, so that another's is refused.
	cursorPrefix = "compass-documents:"
	// mostCompletions is the spec's limit on the values of one completion.
	mostCompletions = 100
	// completionScan bounds how many documents or conversations a completion looks through,
	// the latest first: a completion answers every keystroke.
	completionScan = 2000
)

// DocumentURI is the resource URI of a document's latest version.
func DocumentURI(id string) string { return DocumentURIPrefix + id }

// hooks list the space's documents as resources (see prepareResources), declare MCP Apps
// back to a client that declared it (declareApps), and keep icons out of results that
// don't need them (plainServerInfo).
func (s *Server) hooks() *server.Hooks {
	hooks := &server.Hooks{}
	hooks.AddOnSuccess(s.plainServerInfo)
	hooks.AddOnRequestInitialization(s.prepareResources)
	hooks.AddAfterListResources(s.fillResources)
	hooks.AddAfterListResourceTemplates(hideAnyURI)
	hooks.AddAfterInitialize(declareApps)
	return hooks
}

// pageKey names a request whose page prepareResources made and fillResources gives.
type pageKey struct{ session, id string }

type preparedPage struct {
	resources []mcp.Resource
	next      mcp.Cursor
}

// prepareResources makes the page a resources/list asks for. mcp-go (v1.6.0) lists only
// resources registered ahead of time, and the documents change with every save, so the page
// is made here, in the hook that runs before any handler and whose error fails the request
// (JSON-RPC -32600, mcp-go's code for these): a cursor this server didn't give is refused,
// and so is a listing the store can't make, rather than answered with an empty page.
// fillResources, after mcp-go's (empty) listing, only puts the page in the result.
//
// Pages follow docstore.Store.Page: newest made first, the cursor the id of the last document
// given. Documents saved between two pages don't move in that order (they would in "latest
// saved first", and an offset or a saved-time cursor would then skip or repeat them).
func (s *Server) prepareResources(ctx context.Context, id any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	// Every request comes here, a whole document in a write's: its method is looked up
	// without decoding the message (mcp-go has decoded it four times already).
	if method, _ := jsonargs.String(jsonargs.FieldOf(raw, "method")); method != string(mcp.MethodResourcesList) {
		return nil // not a listing
	}
	var req struct {
		Params struct {
			Cursor string `json:"cursor"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &req) != nil {
		return nil // a listing mcp-go can't read is its to refuse
	}
	after, ok := parseCursor(req.Params.Cursor)
	if !ok {
		return fmt.Errorf("resources/list: the cursor %q is not one this server gave; list again without a cursor", short(req.Params.Cursor))
	}
	s = s.in(ctx)
	var page preparedPage
	var next string
	err := s.docs.View(ctx, func(r *docstore.Reader) error {
		docs, n, err := r.Page(after, ResourcePage)
		if err != nil {
			return err
		}
		page, next = preparedPage{resources: []mcp.Resource{}}, n
		if after == "" && rendersApps(ctx) {
			page.resources = append(page.resources, viewResource())
		}
		names := r.Names()
		for _, d := range docs {
			page.resources = append(page.resources, s.resource(names, d))
		}
		return nil
	})
	if errors.Is(err, kv.ErrCanceled) {
		// The client canceled the listing or went: nothing failed, nothing to log above debug.
		s.log.Debug("resources/list canceled", "err", err)
		return fmt.Errorf("resources/list was canceled: %w", err)
	}
	if err != nil {
		s.log.Error("listing documents as resources", "err", err)
		return errors.New("resources/list failed inside the server (it was logged there); try again")
	}
	if next != "" {
		page.next = makeCursor(next)
	}
	s.pages.Store(keyOf(ctx, id), page)
	return nil
}

// fillResources gives the page prepareResources made for this request.
func (s *Server) fillResources(ctx context.Context, id any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
	v, ok := s.pages.LoadAndDelete(keyOf(ctx, id))
	if !ok || res == nil {
		return
	}
	page := v.(preparedPage)
	res.Resources, res.NextCursor = page.resources, page.next
}

// keyOf names a request: its session and its JSON-RPC id.
func keyOf(ctx context.Context, id any) pageKey {
	var k pageKey
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		k.session = sess.SessionID()
	}
	raw, _ := json.Marshal(id)
	k.id = string(raw)
	return k
}

// addResources registers the two document templates, and anyURI.
func (s *Server) addResources(srv *server.MCPServer) {
	// Registered first or last makes no difference: mcp-go keeps templates in a map and
	// tries them in any order, and anyURI's handler is the documents' too.
	srv.AddResourceTemplate(mcp.NewResourceTemplate(anyURI, "any"), s.readResource)
	srv.AddResourceTemplate(mcp.NewResourceTemplate(latestTemplate, "document",
		mcp.WithTemplateTitle("Document"),
		mcp.WithTemplateDescription("A document of this space, as Markdown: its latest version. id is the document's id (list_documents gives it)."),
		mcp.WithTemplateMIMEType(markdownType),
	), s.readResource)
	srv.AddResourceTemplate(mcp.NewResourceTemplate(versionTemplate, "document-version",
		mcp.WithTemplateTitle("Document version"),
		mcp.WithTemplateDescription("One version of a document of this space, as Markdown: n is the version's number, 1 for the first."),
		mcp.WithTemplateMIMEType(markdownType),
	), s.readResource)
}

func (s *Server) resource(names spaces.Names, d docstore.Document) mcp.Resource {
	desc := fmt.Sprintf("Version %d, saved by %s %s.", d.Version, by(names, d.Author), when(d.Saved))
	if opens := gist(d.Opens, 100); opens != "" {
		desc += " Opens: " + opens
	}
	return mcp.NewResource(DocumentURI(d.ID), d.Title,
		mcp.WithResourceTitle(d.Title),
		mcp.WithResourceDescription(desc),
		mcp.WithMIMEType(markdownType),
		mcp.WithResourceSize(int64(d.Bytes)),
		mcp.WithLastModified(d.Saved.UTC().Format(time.RFC3339)),
	)
}

// makeCursor and parseCursor carry the id of the last document a page gave.
func makeCursor(after string) mcp.Cursor {
	return mcp.Cursor(base64.StdEncoding.EncodeToString([]byte(cursorPrefix + after)))
}

func parseCursor(cursor string) (string, bool) {
	if cursor == "" {
		return "", true
	}
	raw, err := base64.StdEncoding.DecodeString(cursor)
	if err != nil {
		return "", false
	}
	after, ok := strings.CutPrefix(string(raw), cursorPrefix)
	if !ok || after == "" {
		return "", false
	}
	return after, true
}

// hideAnyURI takes anyURI out of resources/templates/list: it names no resource.
func hideAnyURI(_ context.Context, _ any, _ *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
	if res == nil {
		return
	}
	res.ResourceTemplates = slices.DeleteFunc(res.ResourceTemplates, func(t mcp.ResourceTemplate) bool {
		return t.URITemplate != nil && t.URITemplate.Raw() == anyURI
	})
}

// resourceNotFound is a resources/read of a URI that names nothing here, as SEP-2164 asks
// in both protocol eras: the requested URI in data.uri, and the era's code (-32002 before
// 2026-07-28, -32602 from it on, as mcp-go answers a URI no template matches). The
// message says what to do instead.
type resourceNotFound struct {
	uri, message string
	modern       bool
}

func (e resourceNotFound) Error() string { return e.message }

func (e resourceNotFound) JSONRPCError() mcp.JSONRPCError {
	code := mcp.RESOURCE_NOT_FOUND
	if e.modern {
		code = mcp.INVALID_PARAMS
	}
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, Error: mcp.NewJSONRPCErrorDetails(code, e.message, map[string]any{"uri": e.uri})}
}

// readResource reads compass://document/{id} or compass://document/{id}/v/{n}. A document
// is named by its id only (a URI is an identifier, not a search), in this space only. Any
// other URI, or one naming no document or version here, is a resource not found
// (resourceNotFound).
func (s *Server) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	contents, err := s.readDocumentResource(ctx, req.Params.URI)
	if errors.Is(err, server.ErrResourceNotFound) {
		msg := strings.TrimSuffix(err.Error(), ": "+server.ErrResourceNotFound.Error())
		return nil, server.NewHandlerError(resourceNotFound{uri: req.Params.URI, message: msg, modern: mcp.IsModernProtocol(server.RequestProtocolVersion(ctx))})
	}
	return contents, err
}

func (s *Server) readDocumentResource(ctx context.Context, uri string) ([]mcp.ResourceContents, error) {
	s = s.in(ctx)
	id, version, err := parseDocumentURI(uri)
	if err != nil {
		return nil, err
	}
	var (
		d docstore.Document
		v docstore.Version
	)
	err = s.docs.View(ctx, func(r *docstore.Reader) (err error) { d, v, err = r.Read(id, version); return err })
	var nover *docstore.NoVersionError
	if errors.As(err, &nover) {
		d = nover.Document
	}
	switch {
	case errors.Is(err, docstore.ErrNotFound), isAmbiguous(err), (err == nil || nover != nil) && d.ID != id:
		// Read also finds documents by title; a URI names one by its id only.
		return nil, fmt.Errorf("no document %q in this space (resources/list shows what's here): %w", short(id), server.ErrResourceNotFound)
	case nover != nil:
		return nil, fmt.Errorf("%s: %w", strings.TrimSuffix(s.explain(err, id).Error(), "."), server.ErrResourceNotFound)
	case errors.Is(err, kv.ErrCanceled): // as a tool's (define): the client's doing, no failure
		s.log.Debug("resources/read canceled", "uri", uri, "err", err)
		return nil, fmt.Errorf("reading %s was canceled: %w", uri, err)
	case err != nil:
		s.log.Error("reading a document resource", "uri", uri, "err", err)
		return nil, fmt.Errorf("reading %s failed inside the server (it was logged there); try again", uri)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{
		URI:      uri,
		MIMEType: markdownType,
		Text:     v.Text,
	}}, nil
}

func isAmbiguous(err error) bool {
	var amb *docstore.AmbiguousError
	return errors.As(err, &amb)
}

// parseDocumentURI takes the id (and the version, 0 for the latest) from a document URI.
func parseDocumentURI(uri string) (id string, version int, err error) {
	rest, ok := strings.CutPrefix(uri, DocumentURIPrefix)
	if !ok {
		return "", 0, fmt.Errorf("no resource %q here: documents are %s<id> (resources/list shows them): %w", short(uri), DocumentURIPrefix, server.ErrResourceNotFound)
	}
	rawID, n, versioned := strings.Cut(rest, "/v/")
	if id, err = url.PathUnescape(rawID); err != nil || id == "" {
		return "", 0, fmt.Errorf("%q names no document: give %s<id>, with an id from resources/list: %w", short(uri), DocumentURIPrefix, server.ErrResourceNotFound)
	}
	if versioned {
		version, err = strconv.Atoi(n)
		if err != nil || version < 1 {
			return "", 0, fmt.Errorf("%q names no version: n is a version number, 1 or more: %w", short(uri), server.ErrResourceNotFound)
		}
	}
	return id, version, nil
}

// completer offers completions of what names documents and conversations.
type completer struct{ s *Server }

// CompletePromptArgument completes an argument called document with titles, and one
// called conversation with conversation ids; other arguments get none.
func (c completer) CompletePromptArgument(ctx context.Context, _ string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	c = completer{c.s.in(ctx)}
	switch arg.Name {
	case "document":
		return c.documents(ctx, arg.Value, func(d docstore.Document) string { return d.Title })
	case "conversation":
		return c.conversations(ctx, arg.Value)
	}
	return &mcp.Completion{Values: []string{}}, nil
}

// CompleteResourceArgument completes the document templates' id with document ids (matching
// the start of an id or words of a title) and n with the versions of the document id names.
func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	c = completer{c.s.in(ctx)}
	if uri != latestTemplate && uri != versionTemplate {
		return &mcp.Completion{Values: []string{}}, nil
	}
	switch arg.Name {
	case "id":
		return c.documents(ctx, arg.Value, func(d docstore.Document) string { return d.ID })
	case "n":
		return c.versions(ctx, cc.Arguments["id"], arg.Value)
	}
	return &mcp.Completion{Values: []string{}}, nil
}

// documents completes typed with the documents whose id starts with it or whose title
// starts with it (these first) or contains its words, latest saved first.
func (c completer) documents(ctx context.Context, typed string, value func(docstore.Document) string) (*mcp.Completion, error) {
	if tooLongToName(typed) {
		return &mcp.Completion{Values: []string{}}, nil
	}
	docs, err := docstore.ReadIn(ctx, c.s.docs, func(r *docstore.Reader) ([]docstore.Document, error) {
		docs, _, err := r.List(completionScan)
		return docs, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing documents to complete %q: %w", short(typed), err)
	}
	var m matches
	for _, d := range docs {
		m.add(value(d), rank(typed, d.ID, d.Title))
	}
	return m.completion(), nil
}

func (c completer) conversations(ctx context.Context, typed string) (*mcp.Completion, error) {
	if tooLongToName(typed) {
		return &mcp.Completion{Values: []string{}}, nil
	}
	convs, err := threads.ReadIn(ctx, c.s.threads, func(r *threads.Reader) ([]threads.Conversation, error) {
		return r.Recent(completionScan, c.s.cfg.Thread)
	})
	if err != nil {
		return nil, fmt.Errorf("listing conversations to complete %q: %w", short(typed), err)
	}
	var m matches
	for _, conv := range convs {
		m.add(conv.ID, rank(typed, conv.ID, conv.Title))
	}
	return m.completion(), nil
}

// versions completes n with the version numbers of document id that start with typed,
// latest first.
func (c completer) versions(ctx context.Context, id, typed string) (*mcp.Completion, error) {
	typed = strings.TrimSpace(typed)
	if len(typed) > 20 { // no version number is that long
		return &mcp.Completion{Values: []string{}}, nil
	}
	d, err := docstore.ReadIn(ctx, c.s.docs, func(r *docstore.Reader) (docstore.Document, error) { return r.Find(id) })
	if err != nil || d.ID != id {
		return &mcp.Completion{Values: []string{}}, nil
	}
	var m matches
	for n := d.Version; n >= 1; n-- {
		if v := strconv.Itoa(n); strings.HasPrefix(v, typed) {
			m.add(v, 1)
		}
	}
	return m.completion(), nil
}

// tooLongToName reports whether typed is longer than any title or id can be: it completes
// to nothing, and isn't compared with every title (which would cost typed × titles).
func tooLongToName(typed string) bool { return len(typed) > 4*docstore.MaxTitle }

// rank says how well typed names something with this id and title: 2 when the id or the
// title starts with it, 1 when the title has all its words, 0 when neither.
func rank(typed, id, title string) int {
	typed = strings.ToLower(strings.TrimSpace(typed))
	title = strings.ToLower(title)
	switch {
	case typed == "" || strings.HasPrefix(strings.ToLower(id), typed) || strings.HasPrefix(title, typed):
		return 2
	case hasAllWords(title, strings.Fields(typed)):
		return 1
	}
	return 0
}

func hasAllWords(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return len(words) > 0
}

// matches gathers completion values by rank, keeping the order they were added in.
type matches struct{ best, rest []string }

func (m *matches) add(v string, rank int) {
	switch rank {
	case 2:
		m.best = append(m.best, v)
	case 1:
		m.rest = append(m.rest, v)
	}
}

func (m *matches) completion() *mcp.Completion {
	all := append(m.best, m.rest...)
	c := &mcp.Completion{Values: all, Total: len(all)}
	if len(all) > mostCompletions {
		c.Values, c.HasMore = all[:mostCompletions], true
	}
	if c.Values == nil {
		c.Values = []string{}
	}
	return c
}
