// Command pos-normalize turns pos-extract's records into the indexed units:
// merged messages, exchanges, subagent reports and session rollups, with
// each native record split off for the raw layer.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/schema"
	_ "github.com/pos-lake/pos/schema/fastjson" // sonic for bulk decoding
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
	"github.com/urfave/cli/v2"
)

func main() {
	cmdio.Batch = true // a stage of the pipeline
	os.Exit(cmdio.Main(newApp()))
}

func newApp() *cli.App {
	return &cli.App{
		Name:      "pos-normalize",
		Usage:     "merge, dedupe and derive exchanges and sessions from pos records",
		UsageText: "pos-extract | pos-normalize [FILE...] | pos-scrub | pos-load",
		Description: `Reads pos NDJSON (stdin, or files; .zst is decompressed) and writes:
  raw        each message's native record, split off for the raw layer
  message    one per logical message: assistant lines sharing message.id are
             merged (final usage kept); exact replays of earlier lines dropped
  exchange   a user prompt and everything until the next prompt
  document   subagent final reports (and plans, passed through)
  session    one rollup per session: times, counts, tokens per model, labels
  file_ref   a file a tool read, wrote, edited, deleted or searched
  decision   a sentence that states a decision (confidence >= 0.8) or may
             (0.5 to 0.8); exchanges also get tags and the commits their
             tools reported
Other records (checkpoints, unknown kinds) pass through unchanged.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "write to this file (.zst: compressed) instead of stdout"},
			&cli.BoolFlag{Name: "keep-raw", Usage: "leave the native record on each message instead of splitting it off"},
			&cli.BoolFlag{Name: "no-enrich", Usage: "no file references, commits, tags or decisions"},
			&cli.BoolFlag{Name: "no-files", Usage: "no file_ref records"},
			&cli.BoolFlag{Name: "no-commits", Usage: "no commit SHAs on exchanges"},
			&cli.BoolFlag{Name: "no-tags", Usage: "no tags on exchanges"},
			&cli.BoolFlag{Name: "no-decisions", Usage: "no decision records"},
			cmdio.StrictFlag,
			cmdio.QuietFlag,
		},
		Action: run,
	}
}

func run(c *cli.Context) error {
	skips := cmdio.NewSkips(c)
	out, err := schema.Create(c.String("output"), c.App.Writer)
	if err != nil {
		return err
	}
	start := time.Now()
	var total normalize.Stats
	for _, in := range cmdio.Inputs(c) {
		r, err := schema.Open(in, c.App.Reader)
		if err != nil {
			out.Close()
			return err
		}
		st, err := normalize.Normalize(c.Context, r, out, normalize.Options{
			Name: in, KeepRaw: c.Bool("keep-raw"), OnSkip: skips.Skip, Enrich: enrichOptions(c),
		})
		r.Close()
		add(&total, st)
		if err != nil {
			out.Close()
			return err
		}
	}
	if err := out.Close(); err != nil {
		return err
	}
	advisor := ""
	if total.Advisor > 0 {
		advisor = fmt.Sprintf(", %d advisor calls", total.Advisor)
	}
	cmdio.Summary(c, "%d records in, %d out: %d messages (%d lines merged, %d replays dropped, %d context lines of earlier runs%s), %d exchanges, %d sessions, %d documents, %d file refs, %d decisions, %d raw; %d skipped (%.1fs)",
		total.In, total.Out, total.Messages, total.Merged, total.Replays, total.Context, advisor, total.Exchanges, total.Sessions, total.Documents,
		total.FileRefs, total.Decisions, total.Raw, skips.N(), time.Since(start).Seconds())
	return skips.Err()
}

func enrichOptions(c *cli.Context) enrich.Options {
	if c.Bool("no-enrich") {
		return enrich.Options{}
	}
	return enrich.Options{
		Files: !c.Bool("no-files"), Commits: !c.Bool("no-commits"),
		Tags: !c.Bool("no-tags"), Decisions: !c.Bool("no-decisions"),
	}
}

func add(t *normalize.Stats, s normalize.Stats) {
	t.In += s.In
	t.Out += s.Out
	t.Skipped += s.Skipped
	t.Messages += s.Messages
	t.Merged += s.Merged
	t.Replays += s.Replays
	t.Context += s.Context
	t.Advisor += s.Advisor
	t.Raw += s.Raw
	t.Exchanges += s.Exchanges
	t.Sessions += s.Sessions
	t.Documents += s.Documents
	t.FileRefs += s.FileRefs
	t.Decisions += s.Decisions
}
