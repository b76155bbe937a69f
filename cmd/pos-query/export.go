package main

import (
	"fmt"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/lookup"
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/pricing"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/serve"
	"github.com/urfave/cli/v2"
)

func exportCmd() *cli.Command {
	return command(&cli.Command{Name: "export", Usage: "write a session's transcript as Markdown, HTML or its canonical messages",
		UsageText: "pos-query export SESSION [--format md|html|jsonl] [OPTIONS]",
		Flags: []cli.Flag{cmdio.LakeFlag(), lookup.PlatformFlag(),
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "md", Usage: "md (Markdown), html (one self-contained page) or jsonl (the session's canonical message records)"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cmdio.Usagef("give one SESSION, an id or a unique prefix of one (got %d arguments)", c.NArg())
			}
			format := c.String("format")
			switch format {
			case "md", "markdown", "html", "jsonl", "ndjson":
			default:
				return cmdio.Usagef("--format: md, html or jsonl (got %q)", format)
			}
			// export's --format is its own: the shared table formats do not apply.
			c.Set("format", "")
			return lookup.WithLake(c, true, func(e *lookup.Env) error {
				w := c.App.Writer
				if format == "jsonl" || format == "ndjson" {
					ref, err := e.DB.ResolveSession(c.Context, c.Args().First(), e.Platform, "")
					if err != nil {
						return err
					}
					return e.DB.ExportMessages(c.Context, ref, w)
				}
				t, err := e.DB.Transcript(c.Context, query.TranscriptOptions{Session: c.Args().First(), Platform: e.Platform})
				if err != nil {
					return err
				}
				if format == "html" {
					return query.TranscriptHTML(w, query.TranscriptPage{T: t})
				}
				return query.TranscriptMarkdown(w, t)
			})
		},
	})
}

func serveCmd() *cli.Command {
	return command(&cli.Command{Name: "serve", Usage: "a read-only page on 127.0.0.1: sessions, transcripts, search and charts",
		UsageText: "pos-query serve [--addr 127.0.0.1:PORT] [OPTIONS]",
		Flags: []cli.Flag{cmdio.LakeFlag(),
			&cli.StringFlag{Name: "addr", Value: serve.DefaultAddr, Usage: "where to listen: 127.0.0.1:PORT (port 0: any free one)"},
			pricingFlag(), lookup.TimezoneFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cmdio.Usagef("unexpected argument %q", c.Args().First())
			}
			if err := serve.CheckAddr(c.String("addr")); err != nil {
				return cmdio.UsageError{Err: err}
			}
			loc, _, err := lookup.Zone(c)
			if err != nil {
				return err
			}
			// The prices stats uses: the lake's imported table, then --pricing.
			prices, err := pricing.LoadLake(c.String("lake"), c.String("pricing"))
			if err != nil {
				return err
			}
			return lookup.WithLake(c, false, func(e *lookup.Env) error {
				l, err := serve.Listen(c.String("addr"))
				if err != nil {
					return err
				}
				fmt.Fprintf(c.App.ErrWriter, "%s: serving %s read-only at http://%s/ (Ctrl-C stops)\n", c.App.Name, e.DB.Lake(), l.Addr())
				return serve.Serve(c.Context, l, e.DB, serve.Options{Platforms: platforms.Names(), Prices: prices, Location: loc})
			})
		},
	})
}
