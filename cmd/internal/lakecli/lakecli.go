// Package lakecli is pos-lake's command line: publishing a local lake to
// a shared one and fetching the shared lake into a cache (package
// load/teamlake). It is a package of its own so that the commands that do
// not touch a shared lake do not link the Iceberg and AWS libraries.
package lakecli

import (
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/urfave/cli/v2"
)

// The long texts of --help, one file a command.
//
//go:embed help/*.txt
var helpFiles embed.FS

// New is pos-lake's command line.
func New() *cli.App {
	shared := sharedFlags()
	return cmdio.App(helpFiles, &cli.App{
		Name:  "pos-lake",
		Usage: "publish a local lake to a shared one on object storage, and fetch the shared lake",
		Commands: []*cli.Command{{
			Name: "publish", Usage: "send what the local lake holds and the shared lake does not",
			Description: cmdio.Help(helpFiles, "publish"),
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "local-lake", EnvVars: []string{"POS_LAKE"}, Value: cmdio.DefaultLake(), Usage: "the local lake to publish"},
				&cli.StringFlag{Name: "machine", EnvVars: []string{"POS_MACHINE"}, Usage: "this machine's name in the commits (default: the host name)"},
			}, shared...),
			Action: func(c *cli.Context) error {
				l, err := open(c, c.String("machine"))
				if err != nil {
					return err
				}
				reps, err := l.Publish(c.Context, c.String("local-lake"), c.StringSlice("table")...)
				return report(c, reps, err)
			},
		}, {
			Name: "fetch", Usage: "bring a local cache up to date with the shared lake's current snapshot",
			Description: cmdio.Help(helpFiles, "fetch"),
			Flags:       append([]cli.Flag{&cli.StringFlag{Name: "cache", Usage: "the cache `DIR`, a local lake pos-query reads (default: one under $XDG_CACHE_HOME/pos/shared for this lake and catalog)"}}, shared...),
			Action: func(c *cli.Context) error {
				l, err := open(c, "")
				if err != nil {
					return err
				}
				cache := cmp.Or(c.String("cache"), cmdio.SharedCache(c.String("lake"), c.String("catalog")))
				reps, err := l.Fetch(c.Context, cache, c.StringSlice("table")...)
				return report(c, reps, err)
			},
		}, maintain(), ddlCommand(sharedFlags()), checkCommand(sharedFlags())},
	})
}

// sharedFlags name the shared lake and its tables; every command takes them.
func sharedFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "lake", EnvVars: []string{"POS_SHARED_LAKE"}, Usage: "the shared lake, s3://BUCKET/NAMESPACE"},
		&cli.StringFlag{Name: "catalog", EnvVars: []string{"POS_CATALOG"}, Usage: "the Iceberg REST catalog's `URI`"},
		&cli.StringSliceFlag{Name: "table", Usage: "a table to work on (repeatable; default: " + strings.Join(teamlake.Tables, ", ") + ")"},
	}
}

func open(c *cli.Context, machine string) (*teamlake.Lake, error) {
	if machine == "" {
		machine, _ = os.Hostname()
	}
	for _, f := range []string{"lake", "catalog"} {
		if c.String(f) == "" {
			return nil, cmdio.UsageError{Err: fmt.Errorf("--%s is required", f)}
		}
	}
	if _, _, err := teamlake.ParseLake(c.String("lake")); err != nil {
		return nil, cmdio.UsageError{Err: err}
	}
	return teamlake.Open(c.Context, teamlake.Options{Lake: c.String("lake"), Catalog: c.String("catalog"), Machine: machine})
}

// report prints one JSON line a table, those done before an error too.
func report[R any](c *cli.Context, reps []R, err error) error {
	enc := json.NewEncoder(c.App.Writer)
	for _, r := range reps {
		if werr := enc.Encode(r); werr != nil {
			return fmt.Errorf("writing the report: %w", werr)
		}
	}
	return err
}
