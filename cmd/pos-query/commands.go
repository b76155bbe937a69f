package main

import (
	"io"
	"strings"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/llmcfg"
	"github.com/pos-lake/pos/cmd/internal/lookup"
	"github.com/pos-lake/pos/internal/term"
	"github.com/pos-lake/pos/pricing"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

// Each command's description in --help is help/NAME.txt.

func sqlCmd() *cli.Command {
	return command(&cli.Command{Name: "sql", Usage: "run a SQL query on the lake's views",
		UsageText: "pos-query sql [OPTIONS] QUERY|-",
		Flags:     lookup.TableFlags(),
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
			return lookup.WithLake(c, true, func(e *lookup.Env) error {
				w := e.Out.Writer(nil, nil)
				if err := e.DB.ReadStream(c.Context, w, q); err != nil {
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
		Flags:     lookup.TableFlags(lookup.SinceFlag(), lookup.UntilFlag(), lookup.TimezoneFlag(), lookup.PlatformFlag(), lookup.ProjectFlag(), lookup.LimitFlag(20, "sessions")),
		Action: lookup.Show(false, func(e *lookup.Env) ([]query.Session, error) {
			return e.DB.Sessions(e.C.Context, query.SessionFilter{Platform: e.Platform, Project: e.C.String("project"),
				Since: e.Since, Until: e.Until, Limit: e.C.Int("limit")})
		}, (*query.Output).Sessions, func(e *lookup.Env, ss []query.Session) {
			e.LimitNote(len(ss), "showing the %d most recently active sessions; --limit 0 shows all")
		}),
	})
}

func recentCmd() *cli.Command {
	return command(&cli.Command{Name: "recent", Usage: "show the last turns of a session",
		UsageText: "pos-query recent [--session ID] [-n 10] [OPTIONS]",
		Flags: append(lookup.TableFlags(
			lookup.SessionFlag("session id or a unique prefix of one (default: the most recently active)"),
			&cli.IntFlag{Name: "n", Aliases: []string{"limit"}, Value: 10, Usage: "how many turns"},
			&cli.BoolFlag{Name: "tools", Usage: "include each turn's tool calls (input, start of output, errors)"},
			&cli.BoolFlag{Name: "subagents", Usage: "include the turns of the session's subagents"},
			lookup.PlatformFlag(), lookup.ProjectFlag(), lookup.TimezoneFlag(),
			&cli.BoolFlag{Name: "summarize", Usage: "add a short summary of the session above the turns"},
			strategyFlag()), llmcfg.Flags()...),
		Action: func(c *cli.Context) error {
			return lookup.WithLake(c, false, func(e *lookup.Env) error {
				r, err := e.DB.Recent(c.Context, query.RecentOptions{Session: c.String("session"), N: c.Int("n"),
					Platform: e.Platform, Project: c.String("project"),
					IncludeTools: c.Bool("tools"), Subagents: c.Bool("subagents")})
				if err != nil {
					return err
				}
				var summary func() (*query.Summary, error)
				if c.Bool("summarize") {
					summary = func() (*query.Summary, error) {
						return e.DB.Summarize(c.Context, query.SummarizeOptions{Session: r.Session.SessionID, Platform: r.Session.Platform,
							Strategy: c.String("strategy"), LLM: llmcfg.Options(c), Sentences: 5, Words: 120})
					}
				}
				return e.Out.Recent(r, c.Bool("tools"), summary)
			})
		},
	})
}

func timelineCmd() *cli.Command {
	return command(&cli.Command{Name: "timeline", Usage: "list session starts and exchanges in time order",
		UsageText: "pos-query timeline [--since TIME] [--until TIME] [OPTIONS]",
		Flags: lookup.TableFlags(lookup.SinceFlag(), lookup.UntilFlag(), lookup.TimezoneFlag(), lookup.PlatformFlag(), lookup.ProjectFlag(), lookup.LimitFlag(50, "entries"),
			lookup.SessionFlag("only this session (id or unique prefix)"),
			&cli.BoolFlag{Name: "subagents", Usage: "include subagents' exchanges"}),
		Action: lookup.Show(false, func(e *lookup.Env) ([]query.TimelineEntry, error) {
			return e.DB.Timeline(e.C.Context, query.TimelineOptions{Since: e.Since, Until: e.Until, Platform: e.Platform,
				Project: e.C.String("project"), Session: e.C.String("session"), Limit: e.C.Int("limit"), Subagents: e.C.Bool("subagents")})
		}, (*query.Output).Timeline, func(e *lookup.Env, tl []query.TimelineEntry) {
			e.LimitNote(len(tl), "showing the latest %d entries; --limit 0 shows all")
		}),
	})
}

func statsCmd() *cli.Command {
	return command(&cli.Command{Name: "stats", Usage: "count assistant messages, sum their tokens and cost, grouped",
		UsageText: "pos-query stats [--by KEY[,KEY...]] [OPTIONS]",
		Flags: lookup.TableFlags(lookup.SinceFlag(), lookup.UntilFlag(), lookup.TimezoneFlag(), lookup.PlatformFlag(), lookup.ProjectFlag(), lookup.LimitFlag(0, "rows"),
			&cli.StringFlag{Name: "by", Value: "day", Usage: "grouping keys, comma-separated; \"\" for totals"},
			&cli.StringFlag{Name: "start-of-week", Value: "sunday", Usage: "the day a week of --by week starts on (sunday, as ccusage weekly; monday for ISO weeks)"},
			&cli.StringFlag{Name: "pricing", EnvVars: []string{pricing.EnvVar}, Usage: "JSON file of model prices that override or extend the built-in table"},
			&cli.BoolFlag{Name: "prices", Usage: "print the price table in use (USD per million tokens) instead of stats"}),
		Action: func(c *cli.Context) error {
			by, err := query.ParseBy(c.String("by"))
			if err != nil {
				return cmdio.Usagef("--by: %w", err)
			}
			weekStart, err := query.ParseWeekday(c.String("start-of-week"))
			if err != nil {
				return cmdio.Usagef("--start-of-week: %w", err)
			}
			prices, err := pricing.LoadLake(c.String("lake"), c.String("pricing"))
			if err != nil {
				return err
			}
			if c.Bool("prices") {
				format, err := lookup.OutputFormat(c)
				if err != nil {
					return err
				}
				out := lookup.Output(c, format, time.Now())
				out.Width = c.Int("width") // a terminal's width is no limit here
				return out.Prices(prices)
			}
			return lookup.Show(false, func(e *lookup.Env) (*query.StatsResult, error) {
				return e.DB.Stats(c.Context, query.StatsOptions{By: by, Since: e.Since, Until: e.Until,
					Platform: e.Platform, Project: c.String("project"), Limit: c.Int("limit"), Prices: prices,
					Location: e.Zone, WeekStart: weekStart})
			}, func(o *query.Output, st *query.StatsResult) error { return o.Stats(st, by) })(c)
		},
	})
}

func filesCmd() *cli.Command {
	files := lookup.Show(true, func(e *lookup.Env) ([]query.FileSession, error) {
		return e.DB.Files(e.C.Context, query.FilesOptions{Path: e.C.Args().First(), Since: e.Since, Until: e.Until,
			Platform: e.Platform, Project: e.C.String("project"), Limit: e.C.Int("limit")})
	}, (*query.Output).Files)
	return command(&cli.Command{Name: "files", Usage: "the sessions whose tools read, wrote, edited or searched a file",
		UsageText: "pos-query files PATH [OPTIONS]",
		Flags:     lookup.TableFlags(lookup.SinceFlag(), lookup.UntilFlag(), lookup.PlatformFlag(), lookup.ProjectFlag(), lookup.LimitFlag(20, "sessions")),
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
		Flags: lookup.TableFlags(lookup.SinceFlag(), lookup.UntilFlag(), lookup.PlatformFlag(), lookup.ProjectFlag(), lookup.LimitFlag(20, "decisions"),
			lookup.SessionFlag("only this session (an id or a unique prefix)"),
			&cli.Float64Flag{Name: "min-confidence", Value: 0.8, Usage: "keep decisions at least this sure (0.5 includes candidates)"}),
		Action: lookup.Show(false, func(e *lookup.Env) ([]query.Decision, error) {
			session, err := e.Resolve()
			if err != nil {
				return nil, err
			}
			return e.DB.Decisions(e.C.Context, query.DecisionsOptions{Since: e.Since, Until: e.Until, Platform: e.Platform,
				Project: e.C.String("project"), Session: session, MinConfidence: e.C.Float64("min-confidence"), Limit: e.C.Int("limit")})
		}, (*query.Output).Decisions),
	})
}

func capabilitiesCmd() *cli.Command {
	return command(&cli.Command{Name: "capabilities", Usage: "what each platform's data supports, beside what the lake holds for it",
		UsageText: "pos-query capabilities [OPTIONS]",
		Flags:     lookup.TableFlags(),
		Action: lookup.Show(false, func(e *lookup.Env) ([]query.PlatformCapabilities, error) { return e.DB.Capabilities(e.C.Context) },
			(*query.Output).Capabilities),
	})
}

func statusCmd() *cli.Command {
	return command(&cli.Command{Name: "status", Usage: "whether the lake's rows were scrubbed of secrets, table by table",
		UsageText: "pos-query status [OPTIONS]",
		Flags:     lookup.TableFlags(),
		Action: lookup.Show(false, func(e *lookup.Env) (*query.ScrubStatus, error) { return e.DB.ScrubStatus() },
			(*query.Output).Status),
	})
}

func restoreCmd() *cli.Command {
	return command(&cli.Command{Name: "restore", Usage: "rebuild the native JSONL files of sessions from the raw layer",
		UsageText: "pos-query restore SESSION|--project P|--before DATE -o DIR [OPTIONS]",
		Flags: []cli.Flag{cmdio.LakeFlag(), lookup.PlatformFlag(), lookup.ProjectFlag(),
			&cli.StringFlag{Name: "before", Usage: "the sessions last active before this time (a date, RFC 3339, or a duration back from now: 30d)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the folder to write under, laid out as the platform's own (~/.claude for Claude Code, ~/.codex for Codex)"},
			&cli.BoolFlag{Name: "force", Usage: "replace files that exist"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no summary on stderr"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return cmdio.Usagef("give at most one SESSION (got %d arguments)", c.NArg())
			}
			if c.String("output") == "" {
				return cmdio.Usagef("-o DIR is required: the folder to write the files under")
			}
			before, err := cmdio.ParseTime(c.String("before"), time.Now())
			if err != nil {
				return cmdio.Usagef("--before: %v", err)
			}
			return lookup.WithLake(c, true, func(e *lookup.Env) error {
				return restore(c, e, query.RestoreOptions{Session: c.Args().First(), Platform: e.Platform,
					Project: c.String("project"), Before: before, Dir: c.String("output"), Force: c.Bool("force")})
			})
		},
	})
}
