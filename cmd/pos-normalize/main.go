// Command pos-normalize turns pos-extract's records into the indexed units:
// merged messages, exchanges, subagent reports and session rollups, with
// each native record split off for the raw layer.
package main

import (
	"context"
	"embed"
	"io"
	"os"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/schema/fastjson"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
	"github.com/urfave/cli/v2"
)

// The long texts of --help, one file a command.
//
//go:embed help/*.txt
var helpFiles embed.FS

func main() {
	cmdio.Batch = true // a stage of the pipeline
	os.Exit(cmdio.Main(newApp()))
}

func newApp() *cli.App {
	return &cli.App{
		Name:        "pos-normalize",
		Usage:       "merge, dedupe and derive exchanges and sessions from pos records",
		UsageText:   "pos-extract | pos-normalize [FILE...] | pos-scrub | pos-load",
		Description: cmdio.Help(helpFiles, "pos-normalize"),
		Flags: cmdio.StageFlags(
			cmdio.OutputFlag,
			&cli.BoolFlag{Name: "keep-raw", Usage: "leave the native record on each message instead of splitting it off"},
			&cli.BoolFlag{Name: "no-enrich", Usage: "no file references, commits, tags or decisions"},
			&cli.BoolFlag{Name: "no-files", Usage: "no file_ref records"},
			&cli.BoolFlag{Name: "no-commits", Usage: "no commit SHAs on exchanges"},
			&cli.BoolFlag{Name: "no-tags", Usage: "no tags on exchanges"},
			&cli.BoolFlag{Name: "no-decisions", Usage: "no decision records"},
		),
		Action: run,
	}
}

func run(c *cli.Context) error {
	skips := cmdio.NewSkips(c)
	en := !c.Bool("no-enrich")
	opt := normalize.Options{KeepRaw: c.Bool("keep-raw"), OnSkip: skips.Skip, Fast: fastjson.New(), Enrich: enrich.Options{
		Files: en && !c.Bool("no-files"), Commits: en && !c.Bool("no-commits"),
		Tags: en && !c.Bool("no-tags"), Decisions: en && !c.Bool("no-decisions"),
	}}
	start := time.Now()
	var total normalize.Stats
	if err := cmdio.FirstErr(cmdio.Filter(c, func(ctx context.Context, r io.Reader, w io.Writer, name string) error {
		opt.Name = name
		st, err := normalize.Normalize(ctx, r, w, opt)
		total.Add(st)
		return err
	})); err != nil {
		return err
	}
	cmdio.Summary(c, "%s; %d skipped (%.1fs)", total.Summary(), skips.N(), time.Since(start).Seconds())
	return skips.Err()
}
