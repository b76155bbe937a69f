// Command pos-mcp serves the pos lake to agents over MCP (stdio): the tools
// search, recent_turns, session_summary, context_pack, timeline, stats and
// capabilities.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/embedcfg"
	"github.com/pos-lake/pos/cmd/internal/llmcfg"
	"github.com/pos-lake/pos/mcpserver"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

func main() { os.Exit(cmdio.Main(newApp())) }

const exitCodes = `EXIT CODES:
   0    the client closed the connection (stdin reached its end)
   1    failure: the connection broke
   2    usage error: bad flags or arguments
   130  interrupted (Ctrl-C, SIGTERM)`

func newApp() *cli.App {
	return &cli.App{
		Name:      "pos-mcp",
		Metadata:  map[string]any{"exitCodes": exitCodes},
		Usage:     "serve the pos lake to agents as MCP tools, over stdio",
		UsageText: "pos-mcp [--lake DIR] [--llm-model MODEL --llm-base-url URL] [--base-url URL]",
		Description: `An MCP server on stdin/stdout for agents (Claude Code, Cursor, Cline …). Tools:

   search           exchanges, reports, summaries, labels and plans that match
                    a query (hybrid: vectors and BM25), or whole sessions
   recent_turns     the last turns of a session
   session_summary  a summary of a session (extractive by default; stored in
                    the lake and reused until the session grows)
   context_pack     a token-budgeted pack of earlier sessions to resume work
   timeline         session starts and exchanges in a time window
   stats            tokens and cost by day, week, month, model, project …
   capabilities     what each platform's data supports and the lake holds

Each tool has a JSON schema for its arguments; a bad argument is a tool error
that says what is accepted. The lake (--lake or $POS_LAKE) is opened on the
first call and again after a pos-load changed it. session_summary's LLM
strategies use --llm-base-url, --llm-model and --llm-key ($POS_LLM_BASE_URL,
$POS_LLM_MODEL, $POS_LLM_API_KEY). A lake embedded with an OpenAI-compatible
model embeds search queries at the endpoint recorded with its chunks
(--base-url or $POS_EMBED_BASE_URL names another; --api-key or
$POS_EMBED_API_KEY its key); when it fails, search answers lexically with a
warning in its result. $OPENAI_API_KEY is sent to OpenAI's own API only.
Diagnostics go to stderr; stdout carries the protocol only.

REGISTER:
   claude mcp add pos -- pos-mcp --lake ~/.local/share/pos/lake
   ~/.cursor/mcp.json, cline_mcp_settings.json:
     {"mcpServers": {"pos": {"command": "pos-mcp", "args": [], "env": {"POS_LAKE": "/home/me/.local/share/pos/lake"}}}}`,
		Flags: append(append([]cli.Flag{
			cmdio.LakeFlag(),
			&cli.BoolFlag{Name: "verbose", Usage: "log the server's activity on stderr"},
		}, llmcfg.Flags()...), embedcfg.QueryEndpointFlags()...),
		Action: run,
	}
}

func run(c *cli.Context) error {
	if c.NArg() > 0 {
		return cmdio.Usagef("unexpected argument %q", c.Args().First())
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
		ParseTime: cmdio.ParseTime,
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
