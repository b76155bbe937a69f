package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/lookup"
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/pricing"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

// The commands ccusage users know: billing blocks, the status line, and
// the price table. They read the lake's files in Go, without DuckDB.

func usagePlatformFlag() cli.Flag {
	return &cli.StringFlag{Name: "platform", Value: "claude_code", Usage: "the platform whose messages count (\"all\": every platform)"}
}

func pricingFlag() cli.Flag {
	return &cli.StringFlag{Name: "pricing", EnvVars: []string{pricing.EnvVar}, Usage: "JSON file of model prices that override or extend the table in use"}
}

// usagePlatform is --platform's canonical name ("" for all).
func usagePlatform(c *cli.Context) (string, error) {
	p := c.String("platform")
	if p == "all" || p == "" {
		return "", nil
	}
	name, ok := platforms.Canonical(p)
	if !ok {
		return "", cmdio.Usagef("unknown platform %q", p)
	}
	return name, nil
}

func blocksCmd() *cli.Command {
	return command(&cli.Command{Name: "blocks", Usage: "5-hour billing blocks, the active one with its burn rate and projection",
		UsageText: "pos-query blocks [--active] [--json] [OPTIONS]",
		Flags: lookup.TableFlags(lookup.SinceFlag(), lookup.UntilFlag(), usagePlatformFlag(), pricingFlag(),
			&cli.BoolFlag{Name: "active", Aliases: []string{"a"}, Usage: "only the active block"},
			&cli.BoolFlag{Name: "recent", Aliases: []string{"r"}, Usage: "only the blocks of the last 3 days (and the active one)"},
			&cli.Float64Flag{Name: "session-length", Aliases: []string{"n"}, Value: 5, Usage: "a block's length in hours"},
			&cli.BoolFlag{Name: "json", Aliases: []string{"j"}, Usage: "print ccusage's JSON ({\"blocks\": [...]})"}),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cmdio.Usagef("unexpected argument %q", c.Args().First())
			}
			now := time.Now()
			platform, err := usagePlatform(c)
			if err != nil {
				return err
			}
			opt := query.BlocksOptions{Platform: platform, Active: c.Bool("active"), Now: now,
				Length: time.Duration(c.Float64("session-length") * float64(time.Hour))}
			if opt.Length <= 0 {
				return cmdio.Usagef("--session-length must be positive")
			}
			for _, t := range []struct {
				flag string
				dst  *time.Time
			}{{"since", &opt.Since}, {"until", &opt.Until}} {
				if *t.dst, err = cmdio.ParseTime(c.String(t.flag), now); err != nil {
					return cmdio.Usagef("--%s: %v", t.flag, err)
				}
			}
			if c.Bool("recent") && (opt.Since.IsZero() || opt.Since.Before(now.AddDate(0, 0, -3))) {
				opt.Since = now.AddDate(0, 0, -3)
			}
			if opt.Prices, err = pricing.LoadLake(c.String("lake"), c.String("pricing")); err != nil {
				return err
			}
			res, err := query.Blocks(c.Context, c.String("lake"), opt)
			if err != nil {
				return err
			}
			for _, n := range res.Notes {
				fmt.Fprintf(c.App.ErrWriter, "%s: note: %s\n", c.App.Name, n)
			}
			if c.Bool("json") {
				if res.Blocks == nil {
					res.Blocks = []query.BillingBlock{}
				}
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(res)
			}
			format, err := lookup.OutputFormat(c)
			if err != nil {
				return err
			}
			return lookup.Output(c, format, now).BillingBlocks(res)
		},
	})
}

func statuslineCmd() *cli.Command {
	return command(&cli.Command{Name: "statusline", Usage: "the one-line summary for Claude Code's status line, from its JSON on stdin",
		UsageText: "pos-query statusline [OPTIONS] < statusline.json",
		Flags: []cli.Flag{cmdio.LakeFlag(), usagePlatformFlag(), pricingFlag(),
			&cli.StringFlag{Name: "cost-source", Value: query.CostAuto, Usage: "session cost: auto (Claude Code's when given, else the lake's), cc, ccusage (the lake's) or both"},
			&cli.StringFlag{Name: "visual-burn-rate", Aliases: []string{"B"}, Value: "off", Usage: "burn rate status: off, emoji, text or emoji-text"},
			&cli.BoolFlag{Name: "offline", Aliases: []string{"O"}, Value: true, Usage: "accepted for ccusage's command lines: pos never fetches prices"}},
		Action: func(c *cli.Context) error {
			b, err := io.ReadAll(io.LimitReader(c.App.Reader, query.MaxStatuslineInput+1))
			if err != nil {
				return err
			}
			if len(b) > query.MaxStatuslineInput {
				return cmdio.Usagef("the statusline JSON is larger than %d bytes", query.MaxStatuslineInput)
			}
			in, err := query.ParseStatuslineInput(b)
			if err != nil {
				return err
			}
			platform, err := usagePlatform(c)
			if err != nil {
				return err
			}
			prices, err := pricing.LoadLake(c.String("lake"), c.String("pricing"))
			if err != nil {
				return err
			}
			f, err := query.Statusline(c.Context, c.String("lake"), in, query.StatuslineOptions{Platform: platform, Prices: prices})
			if err != nil {
				return err
			}
			line, err := f.Line(query.StatuslineFormat{CostSource: c.String("cost-source"), VisualBurnRate: c.String("visual-burn-rate")})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(c.App.Writer, line)
			return err
		},
	})
}

func pricingCmd() *cli.Command {
	return command(&cli.Command{Name: "pricing", Usage: "the price table in use: its date, source and counts; import a LiteLLM price file",
		UsageText: "pos-query pricing [OPTIONS]\npos-query pricing import FILE [OPTIONS]",
		Flags:     []cli.Flag{cmdio.LakeFlag(), pricingFlag()},
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			switch {
			case len(args) == 0:
				return printPricing(c)
			case args[0] != "import":
				return cmdio.Usagef("unexpected argument %q (pos-query pricing import FILE imports a price file)", args[0])
			case len(args) != 2:
				return cmdio.Usagef("pricing import: give one FILE (got %d arguments)", len(args)-1)
			}
			sum, err := pricing.Import(args[1], c.String("lake"), time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "imported %d models of %s into %s (%d entries skipped: no input or output price)\n",
				sum.Models, sum.Source, pricing.ImportedPath(c.String("lake")), sum.Skipped)
			return nil
		},
	})
}

// printPricing prints the table in use: the embedded table's date, the
// imported table's date, source and counts, and the override files.
func printPricing(c *cli.Context) error {
	prices, err := pricing.LoadLake(c.String("lake"), c.String("pricing"))
	if err != nil {
		return err
	}
	w := c.App.Writer
	fmt.Fprintf(w, "built-in table: %s, %d models\n", pricing.Default().Updated, len(pricing.Default().Models()))
	if info, err := pricing.ReadImported(c.String("lake")); err != nil {
		return err
	} else if info != nil {
		fmt.Fprintf(w, "imported: table of %s, %d models; %s\n", info.Updated, info.Models, info.Source)
	} else {
		fmt.Fprintf(w, "imported: none (pos-query pricing import FILE)\n")
	}
	for _, f := range prices.Files {
		if f != pricing.ImportedPath(c.String("lake")) {
			fmt.Fprintf(w, "override: %s\n", f)
		}
	}
	fmt.Fprintf(w, "in use: %d models (pos-query stats --prices lists them)\n", len(prices.Models()))
	return nil
}
