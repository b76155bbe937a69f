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
	"github.com/pos-lake/pos/internal/jsontext/fastjson"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
	"github.com/urfave/cli/v2"
)

// The long texts of --help, one file a command.
//
//go:embed help/*.txt
var helpFiles embed.FS

func main() { os.Exit(cmdio.Main(newApp())) }

func newApp() *cli.App {
	return cmdio.Stage(helpFiles, &cli.App{
		Name:      "pos-normalize",
		Usage:     "merge, dedupe and derive exchanges and sessions from pos records",
		UsageText: "pos-extract | pos-normalize [FILE...] | pos-scrub | pos-load",
		Flags: []cli.Flag{
			cmdio.OutputFlag,
			&cli.BoolFlag{Name: "keep-raw", Usage: "leave the native record on each message instead of splitting it off"},
			&cli.BoolFlag{Name: "no-enrich", Usage: "no file references, commits, tags or decisions"},
			&cli.BoolFlag{Name: "no-files", Usage: "no file_ref records"},
			&cli.BoolFlag{Name: "no-commits", Usage: "no commit SHAs on exchanges"},
			&cli.BoolFlag{Name: "no-tags", Usage: "no tags on exchanges"},
			&cli.BoolFlag{Name: "no-decisions", Usage: "no decision records"},
		},
		Action: run,
	})
}

func run(c *cli.Context) error {
	skips := cmdio.NewSkips(c)
	en := !c.Bool("no-enrich")
	opt := normalize.Options{KeepRaw: c.Bool("keep-raw"), OnSkip: skips.Skip, Fast: fastjson.New(), Enrich: enrich.Options{
		Files: en && !c.Bool("no-files"), Commits: en && !c.Bool("no-commits"),
		Tags: en && !c.Bool("no-tags"), Decisions: en && !c.Bool("no-decisions"),
	}}
	start := time.Now()
	total, err, closeErr := cmdio.Sum(c, func(ctx context.Context, r io.Reader, w io.Writer, name string) (normalize.Stats, error) {
		opt.Name = name
		return normalize.Normalize(ctx, r, w, opt)
	})
	if err := cmdio.FirstErr(err, closeErr); err != nil {
		return err
	}
	cmdio.Summary(c, "%s; %d skipped (%.1fs)", total.Summary(), skips.N(), time.Since(start).Seconds())
	return skips.Err()
}
