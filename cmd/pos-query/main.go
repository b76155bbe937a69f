// Command pos-query looks things up in the pos lake: the sessions, the last
// turns of a session, a timeline of exchanges, token statistics, and
// arbitrary SQL over the lake's views.
package main

import (
	"embed"
	"errors"
	"os"
	"strings"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/lookup"
	"github.com/pos-lake/pos/internal/term"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

func main() {
	cmdio.FirstGCPercent = 400 // most lookups end before a collection would pay off
	os.Exit(cmdio.Main(newApp()))
}

// The descriptions in --help, one file a command (help/pos-query.txt: the
// app's own), and the exit codes that end them (help/exit-codes.txt).
//
//go:embed help/*.txt
var helpFiles embed.FS

// help is the description of a command in --help ("" without a file).
func help(name string) string {
	return cmdio.Help(helpFiles, name, "{{keys}}", strings.Join(query.StatsKeys, ", "))
}

func newApp() *cli.App {
	return cmdio.App(helpFiles, &cli.App{
		Name:        "pos-query",
		Usage:       "look up sessions, recent turns, timelines and token stats in the pos lake, or run SQL on it",
		UsageText:   "pos-query COMMAND [OPTIONS]",
		Description: help("pos-query"),
		Commands: []*cli.Command{sqlCmd(), sessionsCmd(), searchCmd(), recentCmd(), timelineCmd(), statsCmd(), filesCmd(),
			decisionsCmd(), contextCmd(), summarizeCmd(), exportCmd(), serveCmd(), capabilitiesCmd(), statusCmd(), cmdio.DDLCommand(help("ddl")),
			restoreCmd(), blocksCmd(), statuslineCmd(), pricingCmd()},
		Action: cmdio.NoCommand,
	})
}

// command fills in what every subcommand shares: its description in
// --help, --raw, and usage errors for the library's complaints about
// arguments (cmdio names the command in their hint).
func command(cmd *cli.Command) *cli.Command {
	if cmd.Description == "" {
		cmd.Description = help(cmd.Name)
	}
	cmd.HideHelpCommand = true
	cmd.Flags = cmdio.WithCatalog(append(cmd.Flags, lookup.RawFlag()))
	if action := cmd.Action; action != nil {
		cmd.Action = func(c *cli.Context) error {
			// Text from histories never drives the terminal (see
			// term.Guard); the bold of search hits is the program's own.
			out, errw := c.App.Writer, c.App.ErrWriter
			g := term.NewGuard(out, errw, c.Bool("raw"), query.BoldOn, query.BoldOff)
			c.App.Writer, c.App.ErrWriter = g.Out, g.Err
			defer func() {
				g.Flush()
				c.App.Writer, c.App.ErrWriter = out, errw
			}()
			err := cmdio.ReadShared(c)
			if err == nil {
				err = action(c)
			}
			if g.Out.N == 0 && query.FileVanished(err) {
				// A load compacted a partition between the query's listing
				// of its files and their reading: the files are there
				// again, merged, for the same query.
				err = action(c)
			}
			var ae *query.ArgError
			if _, ok := err.(cmdio.UsageError); !ok && errors.As(err, &ae) {
				// The library's complaints about arguments are usage errors.
				err = cmdio.UsageError{Err: err}
			}
			return term.SafeError(err)
		}
	}
	return cmd
}
