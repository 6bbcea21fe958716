// Package tools serves the MCP tools: thin adapters from a call's arguments to
// docstore and threads, and from what they return to the short Markdown a model reads.
//
// A handler binds its arguments into a typed struct (see bind), calls one store method and
// renders the answer. Mistakes a model can fix come back as results with isError and words
// that say what to do next; only real faults (the disk, a corrupt record) become JSON-RPC
// errors, and those are logged, never shown with paths or stack traces.
package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/charter"
	"github.com/compass-mcp/compass-mcp/internal/inflight"
	"github.com/compass-mcp/compass-mcp/internal/version"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/semantic"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Version is the release this source is (version.Release). The server tells clients
// version.Number(): the same, or what the binary was built as (a pseudo-version, +devel).
const Version = version.Release

// Config is what every call is scoped to and signed with, unless the request carries an
// access.Principal (its person and agent) and an access space (see Server.in).
type Config struct {
	Space    string // the space every call is scoped to
	Agent    string // who versions say made them; "" takes the client's name from initialize
	For      string // the person (id) the agent works for
	Thread   string // the conversation the agent is in, left out of list_conversations
	LinkBase string // prefix of document links
	// LinkBaseFunc, if set, gives the prefix of document links at each answer instead of
	// LinkBase: the person's page may start or stop while the server runs.
	LinkBaseFunc func() string
	// SignIn, if set, makes a one-time link that signs For's browser in to their page,
	// leading to next (a path of the page), for list_documents' sign_in; it returns
	// ErrNoSignIn when this server may not hand one out now. Never used in review mode
	// (Review, or a token's): the tools refuse sign_in there. Set only where that is safe: a
	// one-person server whose page is on this machine (cmd/compass-mcp; docs/PAGE.md says why).
	SignIn func(ctx context.Context, next string) (string, error)
	Logger *slog.Logger
	// Review makes every agent's change a proposal, for the person to accept or decline
	// (docstore.Store.Proposing); a token can ask for it too (access.Principal.Review).
	Review bool
	// Budget is the memory for work in flight every call holds room in while it runs
	// (inflight.go); nil: the process's, inflight.Process.
	Budget *inflight.Budget
	// Semantic, if set, is the semantic tier (--embeddings): list_documents' query is
	// fused with its documents' meaning (semantic.Fused), and each change nudges it.
	Semantic *semantic.Tier
}

// Server holds what the tools work on.
type Server struct {
	cfg     Config
	db      kv.DB
	docs    *docstore.Store
	threads *threads.Store
	log     *slog.Logger
	pages   *sync.Map          // pageKey -> preparedPage: resources/list pages made for requests (resources.go)
	info    mcp.Implementation // serverInfo without icons (plainServerInfo)
	runs    *runs              // the sessions its changes are recorded in (origin.go)
	hints   *inflight.Hints    // the sizes of documents calls were weighed by lately (inflight.go)
}

// New returns an MCP server offering the tools, the charter prompt and instructions, on the
// space cfg names in db.
func New(db kv.DB, cfg Config) (*server.MCPServer, error) {
	if err := spaces.Valid(cfg.Space); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, db: db, docs: docstore.New(db, cfg.Space), threads: threads.New(db, cfg.Space), log: cfg.Logger, pages: new(sync.Map),
		info: mcp.Implementation{Name: "compass-mcp", Version: version.Number(), Title: "Compass"}, runs: newRuns(), hints: newHints()}
	srv := server.NewMCPServer(s.info.Name, s.info.Version,
		server.WithTitle(s.info.Title),
		server.WithIcons(serverIcons...),
		server.WithWebsiteURL(Website),
		server.WithInstructions(charter.Instructions),
		server.WithToolCapabilities(false),
		server.WithPromptCapabilities(false),
		server.WithRecovery(),
		server.WithLogger(Quieter(cfg.Logger)),
		// logging/setLevel is accepted; no tool has anything to log to the client during a
		// call (mcp-go v1.6.0 would deliver it; v1.2.1 could lose it).
		server.WithLogging(),
		server.WithResourceCapabilities(false, false),
		server.WithResourceRecovery(),
		server.WithHooks(s.hooks()),
		server.WithToolFilter(inOrder),
		server.WithCompletions(),
		server.WithToolFilter(readOnlyFilter),
		server.WithToolFilter(s.withIcons),
		server.WithToolFilter(oneTitle),
		server.WithToolFilter(s.forApps),
		server.WithPromptCompletionProvider(completer{s}),
		server.WithResourceCompletionProvider(completer{s}),
	)
	s.addResources(srv)
	s.addView(srv)
	for _, t := range s.tools() {
		srv.AddTool(t.def, t.handler)
	}
	srv.AddPrompt(mcp.NewPrompt(charter.PromptName, mcp.WithPromptDescription(charter.PromptDescription)),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult(charter.PromptDescription, []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(charter.Instructions)),
			}), nil
		})
	return srv, nil
}

type tool struct {
	def     mcp.Tool
	handler server.ToolHandlerFunc
}

// Hints for a tool's annotations: every tool works only on this space, a closed world.
type hints struct {
	readOnly, destructive, idempotent bool
}

// define makes a tool whose input schema comes from the arg tags of A, and whose handler
// binds A and calls run on the server of the request's space (see in). run returns the
// answer, or a refusal for the model, or a fault.
func define[A any](s *Server, name, description string, h hints, run func(*Server, context.Context, *A) (string, error)) tool {
	opts := []mcp.ToolOption{
		mcp.WithToolTitle(titles[name]),
		mcp.WithTitleAnnotation(titles[name]),
		mcp.WithDescription(description),
		mcp.WithReadOnlyHintAnnotation(h.readOnly),
		mcp.WithDestructiveHintAnnotation(h.destructive),
		mcp.WithIdempotentHintAnnotation(h.idempotent),
		mcp.WithOpenWorldHintAnnotation(false),
	}
	t := reflect.TypeFor[A]()
	for _, f := range fieldsOf(t) {
		sf := t.Field(f.index)
		if when := sf.Tag.Get("when"); when != "" && !s.offers(when) {
			continue // an argument this server can't honour is not shown (it is still refused with why)
		}
		prop := []mcp.PropertyOption{mcp.Description(sf.Tag.Get("about"))}
		if f.required {
			prop = append(prop, mcp.Required())
		}
		if sf.Type == reflect.TypeFor[*int]() {
			opts = append(opts, mcp.WithInteger(f.name, prop...))
		} else {
			opts = append(opts, mcp.WithString(f.name, prop...))
		}
	}
	handler := func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("tool panicked", "tool", name, "panic", r, "stack", string(debug.Stack()))
				res, err = nil, fmt.Errorf("%s failed inside the server (it was logged there); try again, and tell the person if it keeps failing", name)
			}
		}()
		var args A
		if err := bind(name, req, &args); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		documentByLink(&args)
		var sink *changeSink // the view's data, for a client that renders apps (apps.go)
		if slices.Contains(viewed, name) && rendersApps(ctx) {
			sink = new(changeSink)
			ctx = context.WithValue(ctx, sinkKey{}, sink)
		}
		in := s.in(ctx)
		if refused := in.mayNot(ctx, h.readOnly); refused != "" {
			return mcp.NewToolResultError(refused), nil
		}
		release, busy := in.hold(ctx, &args, h.readOnly)
		if busy != "" {
			return mcp.NewToolResultError(busy), nil
		}
		defer release()
		answer, err := run(in, ctx, &args)
		if err == nil && !h.readOnly {
			in.nudgeMeaning()
		}
		var r refusal
		switch {
		case errors.As(err, &r):
			return mcp.NewToolResultError(string(r)), nil
		case errors.Is(err, kv.ErrCanceled):
			// The client canceled the call (notifications/cancelled), its connection ended,
			// or its deadline passed: the store was told to stop, and this answer is for a
			// client that may no longer wait for it.
			s.log.Debug("tool canceled", "tool", name, "err", err)
			return mcp.NewToolResultError(canceled(h.readOnly)), nil
		case errors.Is(err, kv.ErrBusy):
			return mcp.NewToolResultError("The data file is busy: another compass-mcp process has held it longer than this one waits. Try again in a moment; if it stays busy, tell the person."), nil
		case errors.Is(err, kv.ErrDamaged):
			s.log.Error("tool failed: the store is damaged", "tool", name, "err", err)
			return mcp.NewToolResultError("The data is damaged (the server's log says where): tell the person to restore it from a backup (compass-mcp backup makes one of a data file, pg_dump of a PostgreSQL database). Nothing was saved."), nil
		case errors.Is(err, kv.ErrUnavailable):
			s.log.Error("tool failed: the database is unavailable", "tool", name, "err", err)
			return mcp.NewToolResultError(unavailable(err, h.readOnly)), nil
		case err != nil:
			s.log.Error("tool failed", "tool", name, "err", err)
			return nil, fmt.Errorf("%s failed inside the server (it was logged there); try again, and tell the person if it keeps failing", name)
		}
		if p := presenderOf(ctx); p != nil && len(answer) >= presendMin {
			if token, err := p.hold(answer); err == nil {
				return withView(mcp.NewToolResultText(token), sink), nil
			}
		}
		return withView(mcp.NewToolResultText(answer), sink), nil
	}
	return tool{def: mcp.NewTool(name, opts...), handler: handler}
}

// tools are listed in the order a model should meet them (see inOrder). idempotent is true
// where the same call again changes nothing more: write_document's same text makes no version
// (and a second new document of that title is refused); append_document adds the text again;
// edit_document's new text may hold old again, so a repeat can change it again.
func (s *Server) tools() []tool {
	return []tool{
		define(s, "list_documents", charter.ListDocuments, hints{readOnly: true, idempotent: true}, (*Server).listDocuments),
		define(s, "read_document", charter.ReadDocument, hints{readOnly: true, idempotent: true}, (*Server).readDocument),
		define(s, "write_document", charter.WriteDocument, hints{destructive: true, idempotent: true}, (*Server).writeDocument),
		define(s, "append_document", charter.AppendDocument, hints{}, (*Server).appendDocument),
		define(s, "edit_document", charter.EditDocument, hints{destructive: true}, (*Server).editDocument),
		define(s, "comment_document", charter.CommentDocument, hints{}, (*Server).commentDocument),
		define(s, "list_conversations", charter.ListConversations, hints{readOnly: true, idempotent: true}, (*Server).listConversations),
		define(s, "read_conversation", charter.ReadConversation, hints{readOnly: true, idempotent: true}, (*Server).readConversation),
		// Only for the change view (visibility app): forApps lists it for a client that
		// renders apps, outside review mode, and no other client can call it.
		define(s, UndoTool, undoDescription, hints{destructive: true}, (*Server).undoChange),
	}
}

// toolOrder is the order tools/list gives: documents first (list, read, write, append, edit,
// comment), then the conversations.
var toolOrder = []string{"list_documents", "read_document", "write_document", "append_document", "edit_document", "comment_document", "list_conversations", "read_conversation"}

// titles are the tools' names for people (a client's list, a directory's review): short,
// since tools/list repeats each in the tool and in its annotations.
var titles = map[string]string{
	"list_documents":     "List documents",
	"read_document":      "Read document",
	"write_document":     "Write document",
	"append_document":    "Append to document",
	"edit_document":      "Edit document",
	"comment_document":   "Comment on document",
	"list_conversations": "List conversations",
	"read_conversation":  "Read conversation",
	UndoTool:             "Undo this change",
}

// Names are the tools' names, in the order tools/list gives them.
func Names() []string { return slices.Clone(toolOrder) }

// inOrder puts tools in toolOrder. mcp-go (v1.6.0) sorts tools by name and then applies the
// tool filters (server.go, filteredTools), so a filter is where the order can be chosen. Its
// tools/list pagination would assume the name order, but this server sets no pagination
// limit, so every tool comes in one page. Tools not in toolOrder keep their place after.
func inOrder(_ context.Context, ts []mcp.Tool) []mcp.Tool {
	rank := func(t mcp.Tool) int {
		if i := slices.Index(toolOrder, t.Name); i >= 0 {
			return i
		}
		return len(toolOrder)
	}
	out := slices.Clone(ts)
	slices.SortStableFunc(out, func(a, b mcp.Tool) int { return rank(a) - rank(b) })
	return out
}

// author is who the versions an agent makes say made them, and for whom: the request's
// principal (a token's person and agent), else the configured ones.
func (s *Server) author(ctx context.Context) docstore.Author {
	a := docstore.Author{By: spaces.Agent(s.agent(ctx)).String()}
	person := s.cfg.For
	if p, ok := access.FromContext(ctx); ok {
		person = p.Person
	}
	if person != "" {
		a.For = spaces.Person(person).String()
	}
	s.origin(ctx, &a)
	return a
}

// agent is the token's agent, else --agent (for a request without a token's principal),
// else the name the client gave in initialize, else "agent".
func (s *Server) agent(ctx context.Context) string {
	if p, ok := access.FromContext(ctx); ok {
		if p.Agent != "" {
			return p.Agent
		}
	} else if s.cfg.Agent != "" {
		return s.cfg.Agent
	}
	// The stateless protocol (2026-07-28) names the client on each request; older ones once, in initialize.
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientInfo != nil {
		if name := cleanName(info.ClientInfo.Name); name != "" {
			return name
		}
	}
	if sess, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		if name := cleanName(sess.GetClientInfo().Name); name != "" {
			return name
		}
	}
	return "agent"
}

// in returns the server for the request: s, or, when the request came through another
// space's endpoint (access.SpaceOf, already checked by access), a copy of s on that space.
func (s *Server) in(ctx context.Context) *Server {
	space, ok := access.SpaceOf(ctx)
	if !ok || space == s.cfg.Space {
		return s
	}
	c := *s
	c.cfg.Space = space
	c.docs = docstore.New(s.db, space)
	c.threads = threads.New(s.db, space)
	return &c
}

// mayNot says why the request's principal may not make this call (a write, unless
// readOnly) in s's space, or "" when it may. The gate and readOnlyFilter already keep such
// calls out; this is the tools' own word on it, whatever path a call comes by.
func (s *Server) mayNot(ctx context.Context, readOnly bool) string {
	p, ok := access.FromContext(ctx)
	switch {
	case !ok:
		return ""
	case !p.MaySee(s.cfg.Space):
		return fmt.Sprintf("This connection's token does not reach the space %s: nothing was read or changed.", s.cfg.Space)
	case !readOnly && p.ReadOnly:
		return "This connection's token is read-only: nothing was changed. Read with list_documents and read_document, or ask the person for a token that may write."
	}
	return ""
}

// readOnlyFilter offers a read-only principal's session only the tools that change
// nothing (their readOnlyHint); mcp-go refuses a call of another as an unknown tool.
// oneTitle leaves annotations.title out for a 2026-07-28 client: it repeats the tool's
// title, which that era's clients read (annotations.title is for clients of 2025-03-26),
// and 25 bytes a tool keep tools/list under its 6 KB with the tools' icons.
func oneTitle(ctx context.Context, ts []mcp.Tool) []mcp.Tool {
	if !mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		return ts
	}
	out := make([]mcp.Tool, len(ts))
	for i, t := range ts {
		t.Annotations.Title = ""
		out[i] = t
	}
	return out
}

func readOnlyFilter(ctx context.Context, all []mcp.Tool) []mcp.Tool {
	if p, ok := access.FromContext(ctx); !ok || !p.ReadOnly {
		return all
	}
	var out []mcp.Tool
	for _, t := range all {
		if t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint {
			out = append(out, t)
		}
	}
	return out
}

// cleanName keeps a client's self-given name to one short line.
func cleanName(name string) string {
	name = strings.Join(strings.FieldsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), "-")
	if len([]rune(name)) > 64 {
		name = string([]rune(name)[:64])
	}
	return name
}

// Quieter is the logger to give mcp-go: its lines at info are debug lines here (one a
// request, one a swept session), so they show only with COMPASS_LOG=debug; its warnings and
// errors always show.
func Quieter(l *slog.Logger) *slog.Logger {
	if l.Enabled(context.Background(), slog.LevelDebug) {
		return l
	}
	return slog.New(warnOnly{l.Handler()})
}

type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

func (w warnOnly) WithAttrs(as []slog.Attr) slog.Handler { return warnOnly{w.Handler.WithAttrs(as)} }
func (w warnOnly) WithGroup(g string) slog.Handler       { return warnOnly{w.Handler.WithGroup(g)} }

// canceled is the answer to a call canceled before the store answered it: a read read
// nothing; a write may have been committed just as it was canceled, so the model is told
// to look first.
func canceled(readOnly bool) string {
	if readOnly {
		return "The call was canceled before the store answered: nothing was read."
	}
	return "The call was canceled before the store answered: the change may or may not have been saved; read the document before making it again."
}

// unavailable is the answer to a call that could not reach the database (down, restarting,
// or slower than the transaction's deadline): what happened, and what to do. A write whose
// commit got no answer may or may not have been saved, so the model is told to look first.
func unavailable(err error, readOnly bool) string {
	msg := "The database is unavailable: try again in a moment; if it stays unavailable, tell the person."
	if !readOnly {
		msg += " This change may or may not have been saved: read the document before making it again."
	}
	return msg + " (" + err.Error() + ")"
}

// offers reports whether this server honours the arguments tagged when: "sign-in", the
// sign-in links only a one-person stdio server out of review mode hands out (Config.SignIn).
// tools/list shows only those it does, so that a team's server spends none of the model's
// context on them, and a reviewed agent is not told of them.
func (s *Server) offers(when string) bool {
	switch when {
	case "sign-in":
		return s.cfg.SignIn != nil && !s.cfg.Review
	}
	return true
}
