// Command pos-extract reads the session histories AI coding agents leave on
// disk and writes them as canonical pos NDJSON on stdout: one record per
// native line or row, with its raw JSON and where it came from.
package main

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/extractcfg"
	"github.com/pos-lake/pos/extract"
	_ "github.com/pos-lake/pos/extract/all" // every platform adapter
	"github.com/pos-lake/pos/schema"
	"github.com/urfave/cli/v2"
)

// The long texts of --help, one file a command.
//
//go:embed help/*.txt
var helpFiles embed.FS

func main() { os.Exit(cmdio.Main(newApp())) }

// stuckAfter is how long an interrupted run may take to end (see run).
const stuckAfter = 3 * time.Second

func newApp() *cli.App {
	return cmdio.Stage(helpFiles, &cli.App{
		Name:        "pos-extract",
		Usage:       "read agent session histories into canonical NDJSON",
		UsageText:   "pos-extract [--platform NAME] [--root DIR]... [--since WHEN] [--state DIR | --full] > records.ndjson",
		Description: cmdio.Help(helpFiles, "pos-extract", "{{platforms}}", strings.Join(extract.PlatformNames(), ", ")),
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "platform", Aliases: []string{"p"}, Value: cli.NewStringSlice("all"), Usage: "platform(s) to read, or all"},
			&cli.StringSliceFlag{Name: "root", Usage: "read this directory or file instead of the default locations and $POS_ROOTS (repeatable)"},
			&cli.StringFlag{Name: "since", Usage: "only records newer than this: 7d, 36h, 2026-01-31, RFC 3339"},
			cmdio.LakeFlag(),
			&cli.StringFlag{Name: "state", Usage: "watermark directory (default: LAKE/_state)"},
			&cli.BoolFlag{Name: "full", Usage: "ignore watermarks: read every file from the start"},
			&cli.BoolFlag{Name: "commit-state", Usage: "write the new watermarks to --state at the end of a successful run"},
			&cli.BoolFlag{Name: "follow-links", Usage: "read what symbolic links below the folders searched point to (files, and directories that do not loop)"},
			cmdio.OutputFlag,
			&cli.IntFlag{Name: "workers", Usage: "files read at once (default: one per CPU); the output order does not depend on it"},
			&cli.StringFlag{Name: "user", Usage: "user name stamped on records (default: the login name)"},
			&cli.StringFlag{Name: "machine", Usage: "machine name stamped on records (default: the host name)"},
			&cli.BoolFlag{Name: "list", Usage: "list where each platform's history is looked for ($POS_ROOTS too), and how many files each place holds or \"not found\", then exit"},
			&cli.BoolFlag{Name: "capabilities", Usage: "print what each platform's data supports (the capability matrix), then exit"},
			&cli.StringFlag{Name: "format", Value: "markdown", Usage: "with --capabilities: markdown or json"},
		},
		Action: run,
	})
}

func run(c *cli.Context) error {
	if c.NArg() > 0 {
		return cmdio.Usagef("unexpected argument %q (files to read go in --root)", c.Args().First())
	}
	skips := cmdio.NewSkips(c)
	opt, err := extractcfg.Options(c, cmdio.LocalLake(c.String("lake")), skips)
	if err != nil {
		return err
	}
	opt.Commit, opt.Workers = c.Bool("commit-state"), c.Int("workers")
	chosen := opt.Adapters
	if c.Bool("list") {
		return extract.List(c.App.Writer, chosen, opt)
	}
	if c.Bool("capabilities") {
		err := extract.WriteCapabilities(c.App.Writer, chosen, c.String("format"))
		if errors.Is(err, extract.ErrFormat) {
			return cmdio.Usagef("--format: %w", err)
		}
		return err
	}
	out, err := schema.Create(c.String("output"), c.App.Writer)
	if err != nil {
		return err
	}
	opt.FlushEach = c.String("output") == "-" && cmdio.IsTerminal(c.App.Writer)
	if !c.Bool("quiet") {
		opt.Note = func(msg string) { fmt.Fprintf(c.App.ErrWriter, "pos-extract: %s\n", msg) }
	}
	// Every wait of the run (walking, opening, reading, a cancelled database
	// read) ends at a signal, and the output then ends at a record's end. A
	// write to a reader that stopped reading does not: after stuckAfter the
	// process exits (130) all the same.
	defer cmdio.ExitWhenStuck(c, stuckAfter)()
	start := time.Now()
	stopProgress := cmdio.Progress(c, "pos-extract: reading", opt.Stats.Bytes.Load)
	err = extract.Run(c.Context, out, opt)
	stopProgress()
	cmdio.Summary(c, "%s", opt.Stats.Summary(skips.N(), skips.Warnings(), time.Since(start)))
	if err != nil {
		return err
	}
	return skips.Err()
}
