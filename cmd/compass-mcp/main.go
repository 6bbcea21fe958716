// Command compass-mcp serves a space's shared, versioned Markdown documents and its
// conversations to an AI agent over MCP, and gives the person the same store on the
// command line. Run "compass-mcp help" for the commands; package command has them.
package main

import "github.com/compass-mcp/compass-mcp/cmd/compass-mcp/command"

func main() { command.Main() }
