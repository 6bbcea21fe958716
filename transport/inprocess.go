package transport

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// CallInProcess calls tool with arguments on srv through an in-process session, as the
// client named client (of version) would over a transport, and returns the answer's texts
// and whether it is an error result (a refusal the model would read).
func CallInProcess(ctx context.Context, srv *server.MCPServer, clientName, version, tool string, arguments map[string]any) (texts []string, isError bool, err error) {
	cl, err := client.NewInProcessClient(srv)
	if err != nil {
		return nil, false, err
	}
	defer cl.Close()
	if err := cl.Start(ctx); err != nil {
		return nil, false, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: clientName, Version: version}
	if _, err := cl.Initialize(ctx, init); err != nil {
		return nil, false, fmt.Errorf("starting an in-process session: %w", err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = arguments
	res, err := cl.CallTool(ctx, req)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", tool, err)
	}
	for _, content := range res.Content {
		if t, ok := content.(mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	return texts, res.IsError, nil
}
