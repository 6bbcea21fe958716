package tools

// MCP Apps (the io.modelcontextprotocol/ui extension, SEP-1865, 2026-01-26): for a client
// that declares it, the writing tools link one ui:// view that shows the change as a diff,
// and their results carry what the view needs in the result's _meta (changeKey), which the
// model doesn't read. A client that doesn't declare it gets exactly what it got before: no
// _meta in tools/list or in results, no view resource, no undo tool.
//
// Where the view's data goes: not structuredContent, because Claude Code (2.1.272 and
// later) and VS Code give the model only structuredContent when a result has both it and
// text content, and the model must read the same text answer with or without the view.
// The spec puts "metadata not intended for model context" in _meta; hosts pass the whole
// CallToolResult, _meta included, to the view (ui/notifications/tool-result).

import (
	"context"
	_ "embed"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

const (
	// AppsExtension is the MCP Apps extension's identifier, in capabilities' extensions.
	AppsExtension = "io.modelcontextprotocol/ui"
	// AppMIMEType is the MIME type of an MCP Apps view.
	AppMIMEType = "text/html;profile=mcp-app"
	// ViewURI is the one view: a change to a document, as a diff.
	ViewURI = "ui://compass/change"
	// UndoTool is the view's app-only tool (visibility ["app"]): it restores the version
	// before the one the view shows, if that is still the latest.
	UndoTool = "undo_change"
	// changeKey is the key of a writing tool's result _meta that holds the view's data.
	changeKey = "compass/change"
)

// viewHTML is the view: HTML, CSS and script in one file, nothing from another origin, so
// the host's default CSP (connect-src 'none') is all it needs.
//
//go:embed view/change.html
var viewHTML string

// ViewHTML is the view's HTML as resources/read gives it (for tests and docs).
func ViewHTML() string { return viewHTML }

// viewed are the tools whose results the view shows.
var viewed = []string{"write_document", "append_document", "edit_document", "comment_document"}

// DeclaresApps reports whether a client's capabilities' extensions (initialize's, or the
// 2026-07-28 request _meta's) declare MCP Apps with HTML views: the extension's entry is
// an object (or true), and if it names mimeTypes, ours is one of them.
func DeclaresApps(extensions map[string]any) bool {
	v, ok := extensions[AppsExtension]
	if !ok {
		return false
	}
	switch e := v.(type) {
	case bool:
		return e
	case map[string]any:
		types, named := e["mimeTypes"]
		if !named {
			return true
		}
		list, _ := types.([]any)
		for _, t := range list {
			if t == AppMIMEType {
				return true
			}
		}
	}
	return false
}

// rendersApps reports whether the client of this request declared MCP Apps: in the
// request's _meta (protocol 2026-07-28, which has no initialize), else in its session's
// initialize (transport keeps that with the session in the store, for every replica).
func rendersApps(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil {
		return DeclaresApps(info.ClientCapabilities.Extensions)
	}
	if sess, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return DeclaresApps(sess.GetClientCapabilities().Extensions)
	}
	return false
}

// forApps is the tool filter of MCP Apps: for a client that renders them, the viewed tools
// link the view (visibility model and app) and the undo tool is there, app-only, outside
// review mode; for any other client the list is as it was, and the undo tool is absent
// (mcp-go then refuses a call of it as an unknown tool).
func (s *Server) forApps(ctx context.Context, ts []mcp.Tool) []mcp.Tool {
	apps := rendersApps(ctx)
	out := make([]mcp.Tool, 0, len(ts))
	for _, t := range ts {
		switch {
		case t.Name == UndoTool:
			if !apps || s.in(ctx).reviewed(ctx) {
				continue
			}
			t.Meta = uiMeta([]string{"app"})
		case apps && slices.Contains(viewed, t.Name):
			t.Meta = uiMeta([]string{"model", "app"})
		}
		out = append(out, t)
	}
	return out
}

// declareApps is the hook after initialize that declares the extension back to a client
// that declared it (capabilities.extensions, as both sides of an extension do, SEP-2133), so
// a host that looks for the server's declaration finds it. A client that didn't declare it
// gets initialize's answer as it was. At 2026-07-28 there is no initialize; the tool links
// are all such a client needs.
func declareApps(_ context.Context, _ any, req *mcp.InitializeRequest, res *mcp.InitializeResult) {
	if req == nil || res == nil || !DeclaresApps(req.Params.Capabilities.Extensions) {
		return
	}
	ext := map[string]any{AppsExtension: map[string]any{"mimeTypes": []any{AppMIMEType}}}
	for k, v := range res.Capabilities.Extensions { // a copy: the server's own map is shared
		ext[k] = v
	}
	res.Capabilities.Extensions = ext
}

// uiMeta is a tool's _meta linking the view: ui.resourceUri and ui.visibility, and the
// flat key "ui/resourceUri" that some hosts still read (deprecated by the spec).
func uiMeta(visibility []string) *mcp.Meta {
	return mcp.NewMetaFromMap(map[string]any{
		"ui":             map[string]any{"resourceUri": ViewURI, "visibility": visibility},
		"ui/resourceUri": ViewURI,
	})
}

// viewResource is the view as resources/list shows it to a client that renders apps.
func viewResource() mcp.Resource {
	return mcp.NewResource(ViewURI, "change-view",
		mcp.WithResourceTitle("Change view"),
		mcp.WithResourceDescription("Shows an agent's change to a document as a diff, where the person talks (MCP Apps)."),
		mcp.WithMIMEType(AppMIMEType),
	)
}

// addView registers the view's resource. resources/list lists it only for a client that
// renders apps (prepareResources); resources/read gives it to any client that asks (it is
// the same static page for everyone and holds no data).
func (s *Server) addView(srv *server.MCPServer) {
	srv.AddResource(viewResource(), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI:      ViewURI,
			MIMEType: AppMIMEType,
			Text:     viewHTML,
			// No csp: the host's restrictive default (connect-src 'none', nothing from
			// another origin) is what the view needs.
			Meta: map[string]any{"ui": map[string]any{"prefersBorder": true}},
		}}, nil
	})
}
