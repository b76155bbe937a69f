// Package lakecli is pos-lake's command line: publishing a local lake to
// a shared one and fetching the shared lake into a cache (package
// load/teamlake). It is a package of its own so that the commands that do
// not touch a shared lake do not link the Iceberg and AWS libraries.
package lakecli

import (
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/transform/scrub"
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
				&cli.StringFlag{Name: "local-lake", EnvVars: []string{"POS_LOCAL_LAKE"}, Value: cmdio.LocalLake(cmp.Or(os.Getenv("POS_LAKE"), cmdio.DefaultLake())), Usage: "the local lake to publish"},
				&cli.StringFlag{Name: "machine", EnvVars: []string{"POS_MACHINE"}, Usage: "this machine's name in the commits (default: the host name)"},
				&cli.StringSliceFlag{Name: "only-project", EnvVars: []string{"POS_ONLY_PROJECTS"}, Usage: "publish only this project's rows: a `NAME`, path or glob (repeatable)"},
				&cli.StringSliceFlag{Name: "deny-project", Usage: "never publish this project's rows: a `NAME`, path or glob (repeatable)"},
				&cli.StringFlag{Name: "deny-projects", EnvVars: []string{"POS_DENY_PROJECTS"}, Usage: "a `FILE` of projects never to publish, one a line (# comments)"},
				&cli.BoolFlag{Name: "pii", Value: true, Usage: "scrub the rows again as they are sent, personal data redacted (--pii=false: as the local lake holds them)"},
				&cli.StringFlag{Name: "key-file", Usage: "key `FILE` of the redaction markers' hashes (default: pos-scrub's, $XDG_DATA_HOME/pos/scrub.key)"},
				&cli.BoolFlag{Name: "raw", Usage: "publish the raw table too: the native records, whole"},
			}, shared...),
			Action: func(c *cli.Context) error {
				if err := checkShared(c); err != nil {
					return err
				}
				scope, err := publishScope(c)
				if err != nil {
					return err
				}
				l, err := open(c, c.String("machine"), scope)
				if err != nil {
					return err
				}
				reps, err := l.Publish(c.Context, c.String("local-lake"), c.StringSlice("table")...)
				return report(c, reps, err)
			},
		}, fetchCommand(sharedFlags()), maintain(), ddlCommand(sharedFlags()), checkCommand(sharedFlags())},
	})
}

// sharedFlags name the shared lake and its tables; every command takes them.
func sharedFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "lake", EnvVars: []string{"POS_SHARED_LAKE", "POS_LAKE"}, Usage: "the shared lake, s3://BUCKET/NAMESPACE (POS_LAKE when it names one)"},
		&cli.StringFlag{Name: "catalog", EnvVars: []string{"POS_CATALOG"}, Usage: "the Iceberg REST catalog's `URI`"},
		&cli.StringSliceFlag{Name: "table", Usage: "a table to work on (repeatable; default: " + strings.Join(teamlake.Tables, ", ") + ")"},
	}
}

// publishScope reads publish's scope flags into Options and, with --pii,
// loads the scrub key (pos-scrub's: $POS_SCRUB_KEY, else its key file).
func publishScope(c *cli.Context) (teamlake.Options, error) {
	opt := teamlake.Options{OnlyProjects: c.StringSlice("only-project"), DenyProjects: c.StringSlice("deny-project"), PII: c.Bool("pii"), Raw: c.Bool("raw")}
	if p := c.String("deny-projects"); p != "" {
		f, err := os.Open(p)
		if err != nil {
			return opt, cmdio.UsageError{Err: fmt.Errorf("--deny-projects: %w", err)}
		}
		list, err := teamlake.ReadProjectList(f)
		f.Close()
		if err != nil {
			return opt, cmdio.UsageError{Err: fmt.Errorf("--deny-projects %s: %w", p, err)}
		}
		opt.DenyProjects = append(opt.DenyProjects, list...)
	}
	for _, f := range []string{"only-project", "deny-project"} {
		if err := teamlake.CheckProjectPatterns(c.StringSlice(f)); err != nil {
			return opt, cmdio.UsageError{Err: fmt.Errorf("--%s: %w", f, err)}
		}
	}
	if slices.Contains(c.StringSlice("table"), "raw") && !opt.Raw {
		return opt, cmdio.UsageError{Err: errors.New("--table raw needs --raw: the raw table holds the native records whole")}
	}
	if !opt.PII {
		return opt, nil
	}
	if k := os.Getenv("POS_SCRUB_KEY"); k != "" {
		if err := scrub.CheckKey([]byte(k)); err != nil {
			return opt, cmdio.UsageError{Err: fmt.Errorf("$POS_SCRUB_KEY: %w", err)}
		}
		opt.ScrubKey = []byte(k)
		return opt, nil
	}
	path := c.String("key-file")
	if path == "" {
		path = filepath.Join(filepath.Dir(cmdio.DefaultLake()), "scrub.key")
	}
	var err error
	opt.ScrubKey, err = scrub.LoadKey(path)
	return opt, err
}

// checkShared checks the flags that name the shared lake.
func checkShared(c *cli.Context) error {
	for _, f := range []string{"lake", "catalog"} {
		if c.String(f) == "" {
			return cmdio.UsageError{Err: fmt.Errorf("--%s is required", f)}
		}
	}
	if _, _, err := teamlake.ParseLake(c.String("lake")); err != nil {
		return cmdio.UsageError{Err: err}
	}
	return nil
}

func open(c *cli.Context, machine string, opt teamlake.Options) (*teamlake.Lake, error) {
	if machine == "" {
		machine, _ = os.Hostname()
	}
	if err := checkShared(c); err != nil {
		return nil, err
	}
	opt.Lake, opt.Catalog, opt.Machine = c.String("lake"), c.String("catalog"), machine
	return teamlake.Open(c.Context, opt)
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
