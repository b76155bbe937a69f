// Command pos-scrub redacts secrets — and with --pii personal data — in
// every field of every pos record, the native raw record included, so that
// no secret reaches the lake.
package main

import (
	"embed"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/scrubcfg"
	"github.com/pos-lake/pos/internal/jsontext/fastjson"
	"github.com/pos-lake/pos/transform/scrub"
	"github.com/urfave/cli/v2"
)

// The long texts of --help, one file a command.
//
//go:embed help/*.txt
var helpFiles embed.FS

func main() { os.Exit(cmdio.Main(newApp())) }

func newApp() *cli.App {
	return cmdio.Stage(helpFiles, &cli.App{
		Name:      "pos-scrub",
		Usage:     "redact secrets (and with --pii personal data) in pos records",
		UsageText: "pos-normalize | pos-scrub [--pii] [--allowlist FILE] [FILE...] | pos-load",
		Flags: slices.Concat([]cli.Flag{
			cmdio.OutputFlag,
			&cli.BoolFlag{Name: "pii", Usage: "also redact e-mail addresses, phone numbers, IP addresses and user names"},
			&cli.BoolFlag{Name: "off", Usage: "redact nothing: pass records on marked as not scrubbed by choice (secrets reach the lake)"},
			&cli.StringFlag{Name: "allowlist", Usage: "allowlist `FILE` (rule, regex, stopword and path entries)"},
			&cli.StringFlag{Name: "report", Value: "text", Usage: "report format on stderr: text or json"},
		}, scrubcfg.Flags(), []cli.Flag{
			&cli.IntFlag{Name: "workers", Usage: "goroutines scanning records (default: 2, or fewer CPUs)"},
			&cli.BoolFlag{Name: "rules", Usage: "list the rule ids and exit"},
		}),
		Action: run,
	})
}

func run(c *cli.Context) error {
	if c.Bool("rules") {
		ids, err := scrub.RuleIDs()
		if err == nil {
			_, err = fmt.Fprintln(c.App.Writer, strings.Join(ids, "\n"))
		}
		return err
	}
	format := c.String("report")
	if format != "text" && format != "json" {
		return cmdio.Usagef("--report: want text or json, not %q", format)
	}
	skips := cmdio.NewSkips(c)
	opt := scrub.Options{PII: c.Bool("pii"), Off: c.Bool("off"), Workers: c.Int("workers"), OnSkip: skips.Skip, Fast: fastjson.New()}
	if opt.Off && opt.PII {
		return cmdio.Usagef("--off and --pii exclude each other")
	}
	var err error
	if p := c.String("allowlist"); p != "" {
		if opt.Allowlist, err = scrub.ReadAllowlist(p); err != nil {
			return cmdio.UsageError{Err: err}
		}
	}
	if opt.Key, err = key(c, opt.Off); err != nil {
		return err
	}
	s, err := scrub.New(opt)
	if err != nil {
		return cmdio.UsageError{Err: err} // an unknown rule in the allowlist
	}
	total, err, closeErr := cmdio.Sum(c, s.Stream)
	if err := cmdio.FirstErr(err, closeErr); err != nil {
		return err
	}
	if !c.Bool("quiet") && format == "json" {
		total.WriteJSON(c.App.ErrWriter)
	} else if !c.Bool("quiet") {
		total.WriteText(c.App.ErrWriter, c.App.Name+": ")
	}
	return skips.Err()
}

// key is the markers' key: --key (or $POS_SCRUB_KEY), else the key file's,
// made the first time; none with --off, which makes no marker.
func key(c *cli.Context, off bool) ([]byte, error) {
	if off {
		return nil, nil
	}
	return scrubcfg.Key(c)
}
