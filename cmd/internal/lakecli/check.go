package lakecli

import (
	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/urfave/cli/v2"
)

// checkCommand verifies the shared lake's tables against their metadata.
func checkCommand(shared []cli.Flag) *cli.Command {
	return &cli.Command{
		Name: "check", Usage: "verify the shared lake's tables: metadata, manifests, data files and rows",
		Description: cmdio.Help(helpFiles, "check"),
		Flags:       shared,
		Action: func(c *cli.Context) error {
			l, err := open(c, "", teamlake.Options{})
			if err != nil {
				return err
			}
			reps, err := l.Check(c.Context, c.StringSlice("table")...)
			return report(c, reps, err)
		},
	}
}
