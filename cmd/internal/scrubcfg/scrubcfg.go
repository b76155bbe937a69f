// Package scrubcfg holds the scrub key's flags that pos-scrub and pos-sync
// share, and the key they name.
package scrubcfg

import (
	"fmt"
	"path/filepath"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/transform/scrub"
	"github.com/urfave/cli/v2"
)

// Flags are --key (or $POS_SCRUB_KEY) and --key-file.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "key", EnvVars: []string{"POS_SCRUB_KEY"}, Usage: "key of the markers' hashes (default: the key file's)"},
		&cli.StringFlag{Name: "key-file", Usage: "key `FILE`, created with a random key if missing (default: $XDG_DATA_HOME/pos/scrub.key)"},
	}
}

// Key is the key the flags name: --key (or $POS_SCRUB_KEY), else the key
// file's, made the first time.
func Key(c *cli.Context) ([]byte, error) {
	if k := []byte(c.String("key")); len(k) > 0 {
		if err := scrub.CheckKey(k); err != nil {
			return nil, cmdio.UsageError{Err: fmt.Errorf("--key (or $POS_SCRUB_KEY): %w; unset both to use the key file", err)}
		}
		return k, nil
	}
	path := c.String("key-file")
	if path == "" {
		path = filepath.Join(filepath.Dir(cmdio.DefaultLake()), "scrub.key")
	}
	return scrub.LoadKey(path)
}
