// Package extractcfg makes pos-extract's run options from its flags, for
// pos-extract and for pos-sync, which runs the same extraction in process.
package extractcfg

import (
	"cmp"
	"os"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/extract"
	"github.com/urfave/cli/v2"
)

// Options are the run options of the flags --platform, --root, --since,
// --user, --machine, --follow-links, --state and --full, with the extra
// roots of $POS_ROOTS, incremental from lake's watermarks (or --state's).
func Options(c *cli.Context, lake string, sk *cmdio.Skips) (extract.RunOptions, error) {
	chosen, err := extract.ParsePlatforms(c.StringSlice("platform"))
	if err != nil {
		return extract.RunOptions{}, cmdio.UsageError{Err: err}
	}
	now := time.Now()
	since, err := cmdio.ParseTime(c.String("since"), now)
	if err != nil {
		return extract.RunOptions{}, cmdio.UsageError{Err: err}
	}
	home, _ := os.UserHomeDir()
	opt := extract.RunOptions{Adapters: chosen, Options: extract.Options{
		Roots: c.StringSlice("root"), Home: home, Env: os.Getenv, Since: since,
		User: cmp.Or(c.String("user"), cmdio.UserName()), Machine: c.String("machine"),
		Now: func() time.Time { return now }, Stats: &extract.Stats{},
		FollowLinks: c.Bool("follow-links"), OnSkip: extract.OnceEach(sk.Skip), OnWarn: sk.Warn,
	}}
	if opt.Machine == "" {
		opt.Machine, _ = os.Hostname()
	}
	if opt.ExtraRoots, err = extract.ParseRoots(os.Getenv(extract.RootsVar), os.PathListSeparator, home); err != nil {
		return extract.RunOptions{}, cmdio.Usagef("$%s: %w", extract.RootsVar, err)
	}
	return opt, opt.UseState(c.String("state"), lake, c.Bool("full"))
}
