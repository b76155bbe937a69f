// Command pos-mcp serves the pos lake to agents over MCP (stdio): the tools
// search, recent_turns, session_summary, context_pack, timeline, stats and
// capabilities.
package main

import (
	"context"
	"embed"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/embedcfg"
	"github.com/pos-lake/pos/cmd/internal/llmcfg"
	"github.com/pos-lake/pos/mcpserver"
	"github.com/pos-lake/pos/pricing"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

// The long texts of --help, and the exit codes that end them.
//
//go:embed help/*.txt
var helpFiles embed.FS

func main() { os.Exit(cmdio.Main(newApp())) }

func newApp() *cli.App {
	return cmdio.App(helpFiles, &cli.App{
		Name:      "pos-mcp",
		Usage:     "serve the pos lake to agents as MCP tools, over stdio",
		UsageText: "pos-mcp [--lake DIR] [--llm-model MODEL --llm-base-url URL] [--base-url URL]",
		Flags: append(append([]cli.Flag{
			cmdio.LakeFlag(), cmdio.CatalogFlag(),
			&cli.BoolFlag{Name: "verbose", Usage: "log the server's activity on stderr"},
			&cli.StringFlag{Name: "pricing", EnvVars: []string{pricing.EnvVar}, Usage: "JSON file of model prices that override or extend the table in use (the stats tool)"},
		}, llmcfg.Flags()...), embedcfg.QueryEndpointFlags()...),
		Action: run,
	})
}

func run(c *cli.Context) error {
	if c.NArg() > 0 {
		return cmdio.Usagef("unexpected argument %q", c.Args().First())
	}
	if err := cmdio.ReadShared(c); err != nil {
		return err
	}
	var logger *slog.Logger
	if c.Bool("verbose") {
		logger = slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// The client shows the server's stderr in its logs: a lake that may
	// hold secrets in clear is said there once (the capabilities tool
	// says it to the agent).
	if st, err := query.LakeScrubStatus(c.String("lake")); err == nil && st.Warning != "" {
		fmt.Fprintf(c.App.ErrWriter, "%s: warning: %s\n%s: hint: %s\n", c.App.Name, st.Warning, c.App.Name, st.Hint)
	}
	endpoint := embedcfg.ReadEndpoint(c)
	s := mcpserver.New(mcpserver.Options{
		Lake: c.String("lake"),
		LLM:  llmcfg.Options(c),
		Embedder: func(ctx context.Context, lake string) (query.Embedder, error) {
			return embedcfg.QueryEmbedder(ctx, lake, endpoint)
		},
		ParseTime: cmdio.ParseTimeIn,
		Pricing:   c.String("pricing"),
		Location:  time.Local, // the machine's zone ($TZ), as pos-query's --timezone default
		Version:   cmdio.Version,
		Logger:    logger,
	})
	defer s.Close()
	err := s.Run(c.Context, &mcpserver.StdioTransport{Reader: c.App.Reader, Writer: c.App.Writer, Logger: logger})
	if c.Context.Err() != nil {
		return c.Context.Err()
	}
	return err
}
