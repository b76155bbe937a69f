package lakecli

import (
	"fmt"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/urfave/cli/v2"
)

// maintain is "pos-lake maintain": compaction, snapshot expiry and orphan
// cleanup of the shared lake's tables.
func maintain() *cli.Command {
	return &cli.Command{
		Name: "maintain", Usage: "compact small files, expire old snapshots and delete unreferenced objects",
		Description: cmdio.Help(helpFiles, "maintain"),
		Flags: append([]cli.Flag{
			&cli.Int64Flag{Name: "target-file-size", Value: teamlake.DefaultTargetFileSize, Usage: "compact a partition's files below this size (`BYTES`) into files of up to it"},
			&cli.DurationFlag{Name: "keep", Value: teamlake.DefaultKeep, Usage: "keep snapshots that were current within this `DURATION`"},
			&cli.IntFlag{Name: "keep-snapshots", Value: teamlake.DefaultKeepSnapshots, Usage: "keep at least the last `N` snapshots, whatever their age"},
			&cli.DurationFlag{Name: "orphans-older-than", Value: teamlake.DefaultOrphansOlderThan, Usage: "delete unreferenced objects older than this `DURATION` (longer than any publish takes)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "report what would be done, and change nothing"},
		}, sharedFlags()...),
		Action: func(c *cli.Context) error {
			opt := teamlake.MaintainOptions{
				TargetFileSize:   c.Int64("target-file-size"),
				Keep:             c.Duration("keep"),
				KeepSnapshots:    c.Int("keep-snapshots"),
				OrphansOlderThan: c.Duration("orphans-older-than"),
				DryRun:           c.Bool("dry-run"),
			}
			for _, f := range []struct {
				name string
				ok   bool
			}{
				{"target-file-size", opt.TargetFileSize > 0},
				{"keep", opt.Keep > 0},
				{"keep-snapshots", opt.KeepSnapshots > 0},
				{"orphans-older-than", opt.OrphansOlderThan > 0},
			} {
				if !f.ok {
					return cmdio.UsageError{Err: fmt.Errorf("--%s must be positive", f.name)}
				}
			}
			l, err := open(c, "", teamlake.Options{})
			if err != nil {
				return err
			}
			reps, err := l.Maintain(c.Context, opt, c.StringSlice("table")...)
			return report(c, reps, err)
		},
	}
}
