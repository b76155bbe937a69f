package main

import (
	"slices"
	"strings"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/embedcfg"
	"github.com/pos-lake/pos/cmd/internal/llmcfg"
	"github.com/pos-lake/pos/cmd/internal/lookup"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

func searchCmd() *cli.Command {
	return command(&cli.Command{Name: "search", Usage: "find the exchanges, reports, summaries and plans that match a query",
		UsageText: `pos-query search "TEXT" [--mode hybrid|vector|lexical] [-k 10] [--group-by session] [OPTIONS]`,
		Flags: append(lookup.TableFlags(lookup.SinceFlag(), lookup.UntilFlag(), lookup.PlatformFlag(), lookup.ProjectFlag(),
			lookup.SessionFlag("only this session (an id or a unique prefix)"),
			&cli.StringFlag{Name: "type", Aliases: []string{"t"}, Usage: "only these content types, comma-separated"},
			&cli.StringFlag{Name: "user", Usage: "only this user's records"},
			&cli.StringFlag{Name: "machine", Usage: "only this machine's records"},
			&cli.IntFlag{Name: "k", Aliases: []string{"n", "limit"}, Value: 10, Usage: "how many results"},
			&cli.StringFlag{Name: "mode", Aliases: []string{"m"}, Value: query.SearchHybrid, Usage: "hybrid, vector or lexical"},
			&cli.StringFlag{Name: "group-by", Usage: "session: rank sessions instead of single results"},
			&cli.IntFlag{Name: "per-session", Value: 3, Usage: "with --group-by session: the best hits shown of each session"},
			&cli.Float64Flag{Name: "min-similarity", Usage: "the least cosine similarity a vector match needs (default: the lake model's own, 0.255 for pos-hash-v3; -1: none)"},
			&cli.BoolFlag{Name: "no-expand", Usage: "search the query's own words only: no expansion by the best results' words and WordNet synonyms"},
			&cli.Float64Flag{Name: "bm25-k1", Usage: "BM25's term frequency saturation, > 0 (default: " + query.BM25Defaults + ")"},
			&cli.Float64Flag{Name: "bm25-b", Usage: "BM25's length normalization, in [0, 1] (default: " + query.BM25Defaults + ")"},
			&cli.IntFlag{Name: embedcfg.DimensionsFlag, Usage: "the dimensions the lake's OpenAI-compatible model was asked for, if any"},
		), embedcfg.QueryEndpointFlags()...),
		Action: runSearch,
	})
}

func runSearch(c *cli.Context) error {
	opt, err := searchOptions(c)
	if err != nil {
		return err
	}
	return lookup.WithLake(c, true, func(e *lookup.Env) error {
		if opt.Session, err = e.Resolve(); err != nil {
			return err
		}
		opt.Platform, opt.Since, opt.Until = e.Platform, e.Since, e.Until
		if opt.Mode != query.SearchLexical {
			if opt.Embed, err = embedcfg.QueryEmbedder(c.Context, e.DB.Lake(), embedcfg.ReadEndpoint(c)); err != nil {
				return err
			}
		}
		res, err := e.DB.Search(c.Context, opt)
		if err != nil {
			return err
		}
		return e.Out.Search(res, opt.GroupBy, opt.Query)
	})
}

// searchOptions checks the search flags; the lake fills in the rest.
func searchOptions(c *cli.Context) (query.SearchOptions, error) {
	opt := query.SearchOptions{Query: strings.TrimSpace(strings.Join(c.Args().Slice(), " ")),
		Mode: c.String("mode"), K: c.Int("k"), GroupBy: c.String("group-by"), PerSession: c.Int("per-session"),
		Project: c.String("project"), User: c.String("user"), Machine: c.String("machine"),
		MinSimilarity: c.Float64("min-similarity"), BM25K1: c.Float64("bm25-k1"), BM25B: c.Float64("bm25-b"),
		NoExpand: c.Bool("no-expand")}
	if opt.Query == "" {
		return opt, cmdio.Usagef("no query given")
	}
	var err error
	if s := c.String("type"); s != "" {
		if opt.Types, err = query.ParseSearchTypes(s); err != nil {
			return opt, cmdio.Usagef("--type: %w", err)
		}
	}
	if opt.K <= 0 {
		return opt, cmdio.Usagef("-k must be at least 1")
	}
	// Unset is 0, the lake model's own minimum; a negative value is none.
	k1, b := opt.BM25K1, opt.BM25B
	if c.IsSet("bm25-k1") && k1 <= 0 || c.IsSet("bm25-b") && (b < 0 || b > 1) {
		return opt, cmdio.Usagef("--bm25-k1 must be > 0 and --bm25-b in [0, 1] (got %g, %g)", k1, b)
	}
	if c.IsSet("bm25-b") && b == 0 {
		opt.BM25B = -1 // none
	}
	if m := opt.MinSimilarity; c.IsSet("min-similarity") && (m == 0 || m > 1) {
		return opt, cmdio.Usagef("--min-similarity must be in (0, 1], or negative for none (got %g)", m)
	}
	if opt.PerSession <= 0 {
		return opt, cmdio.Usagef("--per-session must be at least 1")
	}
	if opt.GroupBy != "" && opt.GroupBy != "session" {
		return opt, cmdio.Usagef("--group-by: only session is known (got %q)", opt.GroupBy)
	}
	return opt, nil
}

func contextCmd() *cli.Command {
	return command(&cli.Command{Name: "context", Usage: "a token-budgeted context pack from past sessions, for an agent to resume work",
		UsageText: "pos-query context [SESSION... | --query TEXT] [--mode smart|labels|agents|plan|full] [--max-tokens N] [OPTIONS]",
		Flags: append([]cli.Flag{cmdio.LakeFlag(), lookup.PlatformFlag(), lookup.ProjectFlag(),
			&cli.StringFlag{Name: "mode", Value: query.ModeSmart, Usage: "smart, labels, agents, plan or full"},
			&cli.IntFlag{Name: "max-tokens", Value: query.DefaultContextTokens, Usage: "the pack's token budget"},
			&cli.StringFlag{Name: "query", Aliases: []string{"q"}, Usage: "pick the sessions by searching for `TEXT`"},
			&cli.IntFlag{Name: "sessions", Value: 3, Usage: "with --query, how many sessions to take"},
			&cli.BoolFlag{Name: "dry-run", Usage: "list what would be included, without the texts"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "markdown (default) or json; with --dry-run, a table format"},
			lookup.WidthFlag(), lookup.UntilFlag(),
		}, embedcfg.QueryEndpointFlags()...),
		Action: runContext,
	})
}

func runContext(c *cli.Context) error {
	format := c.String("format")
	if format == "markdown" || format == "md" {
		c.Set("format", "")
		format = ""
	}
	if format != "" && format != "json" && !c.Bool("dry-run") {
		return cmdio.Usagef("--format: a pack is markdown or json")
	}
	return lookup.WithLake(c, true, func(e *lookup.Env) error {
		// Each id costs a lookup: repeats are dropped and the count capped
		// before any is resolved.
		var ids []string
		for _, id := range c.Args().Slice() {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		if len(ids) > query.MaxContextSessions {
			return cmdio.Usagef("a pack takes at most %d sessions (got %d)", query.MaxContextSessions, len(ids))
		}
		pick := query.SearchOptions{Query: strings.TrimSpace(c.String("query")), K: c.Int("sessions"),
			Platform: e.Platform, Project: c.String("project"), Until: e.Until}
		switch {
		case pick.Query != "" && len(ids) > 0:
			return cmdio.Usagef("give sessions or --query, not both")
		case len(ids) == 0 && pick.Query == "":
			ids = []string{""} // the most recently active session
		case pick.Query != "" && pick.K < 1:
			return cmdio.Usagef("--sessions must be at least 1")
		case pick.Query != "":
			var err error
			if pick.Embed, err = embedcfg.QueryEmbedder(c.Context, e.DB.Lake(), embedcfg.ReadEndpoint(c)); err != nil {
				return err
			}
		}
		refs, err := e.DB.ContextSessions(c.Context, e.Out, ids, pick)
		if err != nil {
			return err
		}
		pack, err := e.DB.Context(c.Context, query.ContextOptions{Sessions: refs, Mode: c.String("mode"),
			MaxTokens: c.Int("max-tokens"), Until: e.Until, Now: e.Out.Now})
		if err != nil {
			return err
		}
		return e.Out.Context(pack, c.Bool("dry-run"), format == "json")
	})
}

func strategyFlag() cli.Flag {
	return &cli.StringFlag{Name: "strategy", Value: query.StrategyExtractive,
		Usage: "extractive (local), abstractive, rolling, map-reduce, hierarchical or auto"}
}

func summarizeCmd() *cli.Command {
	return command(&cli.Command{Name: "summarize", Usage: "summarize a session, locally or with an LLM; summaries are kept in the lake",
		UsageText: "pos-query summarize [SESSION] [--strategy extractive|abstractive|rolling|map-reduce|hierarchical|auto] [OPTIONS]",
		Flags: append([]cli.Flag{cmdio.LakeFlag(), lookup.PlatformFlag(), lookup.ProjectFlag(), strategyFlag(),
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "markdown (default) or json"},
			&cli.IntFlag{Name: "chunk-tokens", Value: query.DefaultChunkTokens, Usage: "the most session text in one LLM request, in tokens"},
			&cli.IntFlag{Name: "words", Value: query.DefaultSummaryWords, Usage: "the length asked of an LLM summary (chunk summaries: half)"},
			&cli.IntFlag{Name: "sentences", Value: query.DefaultSentences, Usage: "extractive: how many sentences to pick"},
			&cli.BoolFlag{Name: "refresh", Usage: "make a new summary even if the lake holds one for the session as it is"},
			&cli.BoolFlag{Name: "no-store", Usage: "do not store a new summary in the lake"},
		}, llmcfg.Flags()...),
		Action: func(c *cli.Context) error {
			format := c.String("format")
			if !slices.Contains([]string{"", "markdown", "md", "json"}, format) {
				return cmdio.Usagef("--format: a summary is markdown or json")
			}
			if c.NArg() > 1 {
				return cmdio.Usagef("give at most one SESSION (got %d arguments)", c.NArg())
			}
			c.Set("format", "")
			return lookup.WithLake(c, true, func(e *lookup.Env) error {
				s, err := e.DB.Summarize(c.Context, query.SummarizeOptions{
					Session: c.Args().First(), Platform: e.Platform, Project: c.String("project"),
					Strategy: c.String("strategy"), LLM: llmcfg.Options(c),
					ChunkTokens: c.Int("chunk-tokens"), Words: c.Int("words"), Sentences: c.Int("sentences"),
					Refresh: c.Bool("refresh"), NoStore: c.Bool("no-store"),
				})
				if err != nil {
					return err
				}
				return e.Out.Summary(s, format == "json")
			})
		},
	})
}
