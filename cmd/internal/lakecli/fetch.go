package lakecli

import (
	"cmp"
	"fmt"

	"github.com/dustin/go-humanize"
	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/urfave/cli/v2"
)

// fetchCommand brings a cache up to date with the shared lake. The default
// caches, one a shared lake, are kept within --cache-max together.
func fetchCommand(shared []cli.Flag) *cli.Command {
	return &cli.Command{
		Name: "fetch", Usage: "bring a local cache up to date with the shared lake's current snapshot",
		Description: cmdio.Help(helpFiles, "fetch"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "cache", Usage: "the cache `DIR`, a local lake pos-query reads (default: one under $XDG_CACHE_HOME/pos/shared for this lake and catalog)"},
			&cli.StringFlag{Name: "cache-max", EnvVars: []string{"POS_CACHE_MAX"}, Value: "20GB", Usage: "the most the default caches take together: the least recently used other shared lakes' caches are removed to keep within it"},
		}, shared...),
		Action: func(c *cli.Context) error {
			max, err := humanize.ParseBytes(c.String("cache-max"))
			if err != nil {
				return cmdio.Usagef("--cache-max: %v", err)
			}
			l, err := open(c, "", teamlake.Options{})
			if err != nil {
				return err
			}
			cache := cmp.Or(c.String("cache"), cmdio.SharedCache(c.String("lake"), c.String("catalog")))
			reps, err := l.Fetch(c.Context, cache, c.StringSlice("table")...)
			if err := report(c, reps, err); err != nil || c.String("cache") != "" {
				return err
			}
			removed, own, err := teamlake.BoundCaches(cache, int64(max))
			for _, u := range removed {
				fmt.Fprintf(c.App.ErrWriter, "pos-lake: removed the cache %s (%s, last used %s) to keep the caches within --cache-max %s\n",
					u.Dir, humanize.IBytes(uint64(u.Size)), u.Used.Format("2006-01-02 15:04"), c.String("cache-max"))
			}
			if err == nil && own > int64(max) {
				fmt.Fprintf(c.App.ErrWriter, "pos-lake: warning: the shared lake's cache %s takes %s, more than --cache-max %s\n",
					cache, humanize.IBytes(uint64(own)), c.String("cache-max"))
			}
			return err
		},
	}
}
