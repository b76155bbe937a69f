// Command pos-load writes pos records into the lake: hive-partitioned Parquet
// (a raw layer and indexed tables) plus <lake>/pos.duckdb with a view per
// table for ad-hoc SQL.
package main

import (
	"cmp"
	"embed"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/internal/jsontext/fastjson"
	"github.com/pos-lake/pos/load"
	"github.com/urfave/cli/v2"
)

// The long texts of --help, one file a command.
//
//go:embed help/*.txt
var helpFiles embed.FS

func main() {
	cmdio.GCPercent = 100 // row groups are held in memory: collect at the usual pace
	os.Exit(cmdio.Main(newApp()))
}

func newApp() *cli.App {
	return cmdio.Stage(helpFiles, &cli.App{
		Name:      "pos-load",
		Usage:     "write pos records into the Parquet lake",
		UsageText: "pos-extract | pos-normalize | pos-scrub | pos-load [--lake DIR] [--require-scrubbed] [FILE...]",
		Flags: []cli.Flag{
			cmdio.LakeFlag(), cmdio.CatalogFlag(),
			&cli.DurationFlag{Name: "lock-timeout", Value: 10 * time.Minute, Usage: "how long to wait for another pos-load to finish"},
			&cli.BoolFlag{Name: "no-catalog", Usage: "do not refresh LAKE/pos.duckdb"},
			&cli.BoolFlag{Name: "no-compact", Usage: "do not merge the small files of the partitions this run wrote to"},
			&cli.BoolFlag{Name: "compact-all", Usage: "merge the small files of every partition of the lake (e.g. pos-load --compact-all < /dev/null)"},
			&cli.Int64Flag{Name: "file-rows", Value: 2_000_000, Usage: "start a new part file after this many rows"},
			&cli.BoolFlag{Name: "allow-mixed-embeddings", Usage: "load chunks of another embedding model or dimension than the lake's (searches then use the latest model's)"},
			&cli.BoolFlag{Name: "require-scrubbed", Usage: "stop the load at the first record pos-scrub did not scrub (exit 3), committing no watermark"},
			&cli.BoolFlag{Name: "declare-scrubbed", Usage: "record that the rows an older pos loaded, before records said whether pos-scrub saw them, were scrubbed (e.g. pos-load --declare-scrubbed < /dev/null)"},
		},
		Action: run,
	})
}

func run(c *cli.Context) error {
	skips := cmdio.NewSkips(c)
	start := time.Now()
	publish, err := cmdio.LoadShared(c)
	if err != nil {
		return err
	}
	l, err := load.Open(c.Context, load.Options{
		Lake:        c.String("lake"),
		OnSkip:      skips.Skip,
		LockTimeout: c.Duration("lock-timeout"),
		NoCatalog:   c.Bool("no-catalog"),
		NoCompact:   c.Bool("no-compact"),
		CompactAll:  c.Bool("compact-all"),
		FileRows:    c.Int64("file-rows"),

		AllowMixedEmbeddings: c.Bool("allow-mixed-embeddings"),
		RequireScrubbed:      c.Bool("require-scrubbed"),
		DeclareScrubbed:      c.Bool("declare-scrubbed"),
		Fast:                 fastjson.New(),
	})
	if err != nil {
		return err
	}
	if err := cmdio.EachInput(c, l.AddNamedStream); err != nil {
		l.Abort()
		if errors.Is(err, load.ErrMixedEmbeddings) {
			return cmdio.UsageError{Err: err} // the flag that allows it is in --help
		}
		return err
	}
	if err := l.Close(); err != nil {
		return err
	}
	st := l.Stats()
	cmdio.Summary(c, "%s; %d skipped (%.1fs)", st.Summary(), skips.N(), time.Since(start).Seconds())
	for _, w := range st.Warnings() {
		fmt.Fprintf(c.App.ErrWriter, "pos-load: %s\n", w)
	}
	if publish != nil {
		err = publish()
	}
	return cmp.Or(err, skips.Err())
}
