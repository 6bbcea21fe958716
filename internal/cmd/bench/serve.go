package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/compass-mcp/compass-mcp/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// serveChild is bench -serve stdio|http -data FILE [-cpuprofile FILE] [-allocprofile FILE]:
// a compass-mcp server built as serve builds it (tools.New on a data file held while in
// use, served by package transport as compass-mcp serve serves it: ServeStdio, or
// NewHTTP behind an open gate on loopback), plus a tool noop that does nothing, for
// measuring what the transport and mcp-go cost alone, and for profiling the tools' hot
// paths.
func serveChild(args []string) error {
	fs := flag.NewFlagSet("bench -serve", flag.ContinueOnError)
	data := fs.String("data", "", "the data file")
	cpu := fs.String("cpuprofile", "", "if set, write a CPU profile of the whole session here")
	allocs := fs.String("allocprofile", "", "if set, write an allocation profile here at the end")
	if len(args) == 0 {
		return fmt.Errorf("-serve needs stdio or http")
	}
	mode := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := bolt.OpenFile(*data, bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		return err
	}
	defer db.Close()
	srv, err := tools.New(db, tools.Config{Space: "personal", Agent: "bench", For: "ana", Logger: logger})
	if err != nil {
		return err
	}
	srv.AddTool(mcp.NewTool("noop", mcp.WithDescription("Does nothing."), mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	if *allocs != "" {
		defer func() {
			if f, err := os.Create(*allocs); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	transport.SetLimits(transport.Limits{Text: docstore.MaxText}) // as serve does
	switch mode {
	case "stdio":
		return transport.ServeStdio(ctx, srv, os.Stdin, os.Stdout, 10*time.Second)
	case "http":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		h := transport.NewHTTP(srv, access.NewSessions(db, 30*time.Minute), 30*time.Minute)
		mux := http.NewServeMux()
		transport.Route(mux, &access.Gate{Store: access.New(db).WithOwner("personal", "ana"), Agent: "bench"}, "personal", h.MCP)
		h.Server.Handler = mux
		fmt.Fprintf(os.Stderr, "serving url=http://%s/mcp\n", ln.Addr())
		return h.Serve(ctx, ln)
	}
	return fmt.Errorf("-serve needs stdio or http, not %q", mode)
}
