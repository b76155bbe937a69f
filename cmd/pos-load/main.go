// Command pos-load writes pos records into the lake: hive-partitioned Parquet
// (a raw layer and indexed tables) plus <lake>/pos.duckdb with a view per
// table for ad-hoc SQL.
package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/load"
	_ "github.com/pos-lake/pos/schema/fastjson" // sonic for bulk decoding
	"github.com/urfave/cli/v2"
)

func main() {
	cmdio.GCPercent = 100 // row groups are held in memory: collect at the usual pace
	cmdio.Batch = true    // a stage of the pipeline
	os.Exit(cmdio.Main(newApp()))
}

func newApp() *cli.App {
	return &cli.App{
		Name:      "pos-load",
		Usage:     "write pos records into the Parquet lake",
		UsageText: "pos-extract | pos-normalize | pos-scrub | pos-load [--lake DIR] [--require-scrubbed] [FILE...]",
		Description: `Writes records to LAKE/raw/platform=P/date=D/ (native records) and
LAKE/indexed/{messages,exchanges,sessions,documents,chunks,postings}/platform=P/date=D/,
as zstd Parquet. Chunks (from pos-embed) keep their vectors in a plain float
list (the chunks view casts it to FLOAT[dim] as the column vector); beside
each chunks file goes its postings file, the lexical index pos-query search
reads. A lake holds one embedding model and dimension: chunks of another are
refused unless --allow-mixed-embeddings.

Each file is written under a temporary name and renamed when complete, so
readers never see a partial file; a killed run leaves only
complete files and re-running it completes the lake. Loading the same
records twice adds nothing (records are keyed by id; a changed record is
added as a new version and the views show the latest).

A partition that holds 8 files under 8 MB (each sync adds one to the
partitions it touches) has them merged into one, rows unchanged; the merged
partition takes the old one's place in one atomic directory exchange
(Linux). --no-compact leaves partitions as written; --compact-all merges
those of every partition, not only the ones the run wrote to.

Records say whether pos-scrub saw them ("scrub": "secrets" or "pii"; "off"
with pos-scrub --off); LAKE/_state/scrub.json counts each table's rows by
that mark, "none" for records that never passed pos-scrub, and pos-query
warns of a lake holding secrets in clear. --require-scrubbed refuses a
record without the mark: the load stops there (exit 3), its files not in
place yet are dropped and no watermark of the run is committed, so the
next run reads those records again.

Checkpoint records (watermarks from pos-extract) are committed after every
file of the run is in place, where pos-extract read them: to
LAKE/_state/watermarks.json, or to the directory of pos-extract --state.
Watermarks read from another lake's _state are refused (exit 1, none
committed): give pos-extract and pos-load the same --lake.
LAKE/pos.duckdb is refreshed with the views raw, messages, exchanges,
sessions, documents: duckdb LAKE/pos.duckdb`,
		Flags: []cli.Flag{
			cmdio.LakeFlag(),
			&cli.DurationFlag{Name: "lock-timeout", Value: 10 * time.Minute, Usage: "how long to wait for another pos-load to finish"},
			&cli.BoolFlag{Name: "no-catalog", Usage: "do not refresh LAKE/pos.duckdb"},
			&cli.BoolFlag{Name: "no-compact", Usage: "do not merge the small files of the partitions this run wrote to"},
			&cli.BoolFlag{Name: "compact-all", Usage: "merge the small files of every partition of the lake (e.g. pos-load --compact-all < /dev/null)"},
			&cli.Int64Flag{Name: "file-rows", Value: 2_000_000, Usage: "start a new part file after this many rows"},
			&cli.BoolFlag{Name: "allow-mixed-embeddings", Usage: "load chunks of another embedding model or dimension than the lake's (searches then use the latest model's)"},
			&cli.BoolFlag{Name: "require-scrubbed", Usage: "stop the load at the first record pos-scrub did not scrub (exit 3), committing no watermark"},
			&cli.BoolFlag{Name: "declare-scrubbed", Usage: "record that the rows an older pos loaded, before records said whether pos-scrub saw them, were scrubbed (e.g. pos-load --declare-scrubbed < /dev/null)"},
			cmdio.StrictFlag,
			cmdio.QuietFlag,
		},
		Action: run,
	}
}

func run(c *cli.Context) error {
	skips := cmdio.NewSkips(c)
	start := time.Now()
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
	return skips.Err()
}
