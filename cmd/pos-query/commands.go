package main

import (
	"io"
	"strings"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/llmcfg"
	"github.com/pos-lake/pos/internal/term"
	"github.com/pos-lake/pos/pricing"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

// Each command's description in --help is help/NAME.txt.

func sqlCmd() *cli.Command {
	return command(&cli.Command{Name: "sql", Usage: "run a SQL query on the lake's views",
		UsageText: "pos-query sql [OPTIONS] QUERY|-",
		Flags:     tableFlags(),
		Action: func(c *cli.Context) error {
			q := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if q == "" || q == "-" {
				if c.NArg() == 0 && term.IsTerminal(c.App.Reader) {
					return cmdio.Usagef("no query given (pass it as an argument, or \"-\" to read it from stdin)")
				}
				b, err := io.ReadAll(c.App.Reader)
				if err != nil {
					return err
				}
				q = strings.TrimSpace(string(b))
			}
			if q == "" {
				return cmdio.Usagef("the query is empty")
			}
			return withLake(c, true, func(e *env) error {
				w := e.out.Writer(nil, nil)
				if err := e.db.ReadStream(c.Context, w, q); err != nil {
					return err
				}
				return w.Close()
			})
		},
	})
}

func sessionsCmd() *cli.Command {
	return command(&cli.Command{Name: "sessions", Usage: "list sessions, the most recently active first",
		UsageText: "pos-query sessions [OPTIONS]",
		Flags:     tableFlags(sinceFlag(), untilFlag(), platformFlag(), projectFlag(), limitFlag(20, "sessions")),
		Action: show(false, func(e *env) ([]query.Session, error) {
			return e.db.Sessions(e.c.Context, query.SessionFilter{Platform: e.platform, Project: e.c.String("project"),
				Since: e.since, Until: e.until, Limit: e.c.Int("limit")})
		}, (*query.Output).Sessions, func(e *env, ss []query.Session) {
			e.limitNote(len(ss), "showing the %d most recently active sessions; --limit 0 shows all")
		}),
	})
}

func recentCmd() *cli.Command {
	return command(&cli.Command{Name: "recent", Usage: "show the last turns of a session",
		UsageText: "pos-query recent [--session ID] [-n 10] [OPTIONS]",
		Flags: append(tableFlags(
			sessionFlag("session id or a unique prefix of one (default: the most recently active)"),
			&cli.IntFlag{Name: "n", Aliases: []string{"limit"}, Value: 10, Usage: "how many turns"},
			&cli.BoolFlag{Name: "tools", Usage: "include each turn's tool calls (input, start of output, errors)"},
			&cli.BoolFlag{Name: "subagents", Usage: "include the turns of the session's subagents"},
			platformFlag(), projectFlag(),
			&cli.BoolFlag{Name: "summarize", Usage: "add a short summary of the session above the turns"},
			strategyFlag()), llmcfg.Flags()...),
		Action: func(c *cli.Context) error {
			return withLake(c, false, func(e *env) error {
				r, err := e.db.Recent(c.Context, query.RecentOptions{Session: c.String("session"), N: c.Int("n"),
					Platform: e.platform, Project: c.String("project"),
					IncludeTools: c.Bool("tools"), Subagents: c.Bool("subagents")})
				if err != nil {
					return err
				}
				var summary func() (*query.Summary, error)
				if c.Bool("summarize") {
					summary = func() (*query.Summary, error) {
						return e.db.Summarize(c.Context, query.SummarizeOptions{Session: r.Session.SessionID, Platform: r.Session.Platform,
							Strategy: c.String("strategy"), LLM: llmcfg.Options(c), Sentences: 5, Words: 120})
					}
				}
				return e.out.Recent(r, c.Bool("tools"), summary)
			})
		},
	})
}

func timelineCmd() *cli.Command {
	return command(&cli.Command{Name: "timeline", Usage: "list session starts and exchanges in time order",
		UsageText: "pos-query timeline [--since TIME] [--until TIME] [OPTIONS]",
		Flags: tableFlags(sinceFlag(), untilFlag(), platformFlag(), projectFlag(), limitFlag(50, "entries"),
			sessionFlag("only this session (id or unique prefix)"),
			&cli.BoolFlag{Name: "subagents", Usage: "include subagents' exchanges"}),
		Action: show(false, func(e *env) ([]query.TimelineEntry, error) {
			return e.db.Timeline(e.c.Context, query.TimelineOptions{Since: e.since, Until: e.until, Platform: e.platform,
				Project: e.c.String("project"), Session: e.c.String("session"), Limit: e.c.Int("limit"), Subagents: e.c.Bool("subagents")})
		}, (*query.Output).Timeline, func(e *env, tl []query.TimelineEntry) {
			e.limitNote(len(tl), "showing the latest %d entries; --limit 0 shows all")
		}),
	})
}

func statsCmd() *cli.Command {
	return command(&cli.Command{Name: "stats", Usage: "count assistant messages, sum their tokens and cost, grouped",
		UsageText: "pos-query stats [--by KEY[,KEY...]] [OPTIONS]",
		Flags: tableFlags(sinceFlag(), untilFlag(), platformFlag(), projectFlag(), limitFlag(0, "rows"),
			&cli.StringFlag{Name: "by", Value: "day", Usage: "grouping keys, comma-separated; \"\" for totals"},
			&cli.StringFlag{Name: "pricing", EnvVars: []string{pricing.EnvVar}, Usage: "JSON file of model prices that override or extend the built-in table"},
			&cli.BoolFlag{Name: "prices", Usage: "print the price table in use (USD per million tokens) instead of stats"}),
		Action: func(c *cli.Context) error {
			by, err := query.ParseBy(c.String("by"))
			if err != nil {
				return cmdio.Usagef("--by: %w", err)
			}
			prices, err := pricing.Load(c.String("pricing"))
			if err != nil {
				return err
			}
			if c.Bool("prices") {
				format, err := outputFormat(c)
				if err != nil {
					return err
				}
				out := output(c, format, time.Now())
				out.Width = c.Int("width") // a terminal's width is no limit here
				return out.Prices(prices)
			}
			return show(false, func(e *env) (*query.StatsResult, error) {
				return e.db.Stats(c.Context, query.StatsOptions{By: by, Since: e.since, Until: e.until,
					Platform: e.platform, Project: c.String("project"), Limit: c.Int("limit"), Prices: prices})
			}, func(o *query.Output, st *query.StatsResult) error { return o.Stats(st, by) })(c)
		},
	})
}

func filesCmd() *cli.Command {
	files := show(true, func(e *env) ([]query.FileSession, error) {
		return e.db.Files(e.c.Context, query.FilesOptions{Path: e.c.Args().First(), Since: e.since, Until: e.until,
			Platform: e.platform, Project: e.c.String("project"), Limit: e.c.Int("limit")})
	}, (*query.Output).Files)
	return command(&cli.Command{Name: "files", Usage: "the sessions whose tools read, wrote, edited or searched a file",
		UsageText: "pos-query files PATH [OPTIONS]",
		Flags:     tableFlags(sinceFlag(), untilFlag(), platformFlag(), projectFlag(), limitFlag(20, "sessions")),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cmdio.Usagef("give one PATH (got %d arguments)", c.NArg())
			}
			return files(c)
		},
	})
}

func decisionsCmd() *cli.Command {
	return command(&cli.Command{Name: "decisions", Usage: "decisions stated in the conversations, the most recent first",
		UsageText: "pos-query decisions [--since WHEN] [--min-confidence X] [OPTIONS]",
		Flags: tableFlags(sinceFlag(), untilFlag(), platformFlag(), projectFlag(), limitFlag(20, "decisions"),
			sessionFlag("only this session (an id or a unique prefix)"),
			&cli.Float64Flag{Name: "min-confidence", Value: 0.8, Usage: "keep decisions at least this sure (0.5 includes candidates)"}),
		Action: show(false, func(e *env) ([]query.Decision, error) {
			session, err := e.resolve()
			if err != nil {
				return nil, err
			}
			return e.db.Decisions(e.c.Context, query.DecisionsOptions{Since: e.since, Until: e.until, Platform: e.platform,
				Project: e.c.String("project"), Session: session, MinConfidence: e.c.Float64("min-confidence"), Limit: e.c.Int("limit")})
		}, (*query.Output).Decisions),
	})
}

func capabilitiesCmd() *cli.Command {
	return command(&cli.Command{Name: "capabilities", Usage: "what each platform's data supports, beside what the lake holds for it",
		UsageText: "pos-query capabilities [OPTIONS]",
		Flags:     tableFlags(),
		Action: show(false, func(e *env) ([]query.PlatformCapabilities, error) { return e.db.Capabilities(e.c.Context) },
			(*query.Output).Capabilities),
	})
}

func statusCmd() *cli.Command {
	return command(&cli.Command{Name: "status", Usage: "whether the lake's rows were scrubbed of secrets, table by table",
		UsageText: "pos-query status [OPTIONS]",
		Flags:     tableFlags(),
		Action: show(false, func(e *env) (*query.ScrubStatus, error) { return e.db.ScrubStatus() },
			(*query.Output).Status),
	})
}
