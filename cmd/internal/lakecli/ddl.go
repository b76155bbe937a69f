package lakecli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/urfave/cli/v2"
)

// ddlCommand prints how an engine reads the shared lake.
func ddlCommand(shared []cli.Flag) *cli.Command {
	return &cli.Command{
		Name: "ddl", Usage: "print how an engine (" + strings.Join(teamlake.Engines, ", ") + ") reads the shared lake",
		Description: cmdio.Help(helpFiles, "ddl"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "engine", Usage: "the `ENGINE`: " + strings.Join(teamlake.Engines, ", ")},
			&cli.StringFlag{Name: "root", Usage: "duckdb: read the data files from `DIR`, a local copy of the bucket, not over S3"},
		}, shared...),
		Action: func(c *cli.Context) error {
			engine := c.String("engine")
			if engine == "" {
				return cmdio.UsageError{Err: fmt.Errorf("--engine is required (%s)", strings.Join(teamlake.Engines, ", "))}
			}
			if !slices.Contains(teamlake.Engines, engine) {
				return cmdio.UsageError{Err: fmt.Errorf("unknown engine %q: want one of %s", engine, strings.Join(teamlake.Engines, ", "))}
			}
			l, err := open(c, "", teamlake.Options{})
			if err != nil {
				return err
			}
			text, err := l.DDL(c.Context, engine, teamlake.DDLOptions{Root: c.String("root"), Tables: c.StringSlice("table")})
			if err != nil {
				return err
			}
			_, err = io.WriteString(c.App.Writer, text)
			return err
		},
	}
}
