// Command pos-embed adds chunk records with vectors for the indexable units
// of a pos stream (exchanges, user prompts, summary labels, compaction
// summaries, subagent reports and plans) and passes every record through.
package main

import (
	"context"
	stdembed "embed"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/embedcfg"
	"github.com/pos-lake/pos/internal/errjoin"
	"github.com/pos-lake/pos/internal/jsontext/fastjson"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/urfave/cli/v2"
)

// The long texts of --help, one file a command.
//
//go:embed help/*.txt
var helpFiles stdembed.FS

func main() { os.Exit(cmdio.Main(newApp())) }

func newApp() *cli.App {
	return cmdio.Stage(helpFiles, &cli.App{
		Name:        "pos-embed",
		Usage:       "add chunk records with vectors for the indexable units of pos records",
		UsageText:   "pos-normalize | pos-scrub | pos-embed [--provider hash|openai|static] [--lake DIR] [FILE...] | pos-load\n   pos-embed model pull ORG/NAME | pos-embed model list",
		Description: cmdio.Help(helpFiles, "pos-embed", "{{hash-model}}", embed.HashModel, "{{hash-model-v1}}", embed.HashModelV1),
		Flags: slices.Concat(embedcfg.ProviderFlags(), []cli.Flag{cmdio.LakeFlag(),
			&cli.BoolFlag{Name: "no-cache", Usage: "neither read nor write the lake's embedding cache"},
			&cli.IntFlag{Name: "batch", Value: 64, Usage: "openai: texts per request"},
			&cli.IntFlag{Name: "workers", Usage: "groups of records embedded at once (default: 4 for openai, one per CPU for hash)"},
		}, embedcfg.ChunkerFlags(), []cli.Flag{
			&cli.StringFlag{Name: "types", Usage: "index only these content types, comma-separated (" + strings.Join(embed.Indexable, ", ") + ")"},
			cmdio.OutputFlag,
		}),
		Action:   run,
		Commands: []*cli.Command{modelCommand()},
	})
}

func run(c *cli.Context) error {
	cfg := embedcfg.Config(c)
	cfg.Batch = c.Int("batch")
	lake := cmdio.LocalLake(c.String("lake")) // a shared lake's models and cache are its local lake's
	if note := embedcfg.FollowLakeHashModel(&cfg, lake); note != "" && !c.Bool("quiet") {
		fmt.Fprintln(c.App.ErrWriter, "pos-embed: "+note)
	}
	p, err := embed.NewProvider(cfg)
	if err != nil {
		return cmdio.UsageError{Err: err}
	}
	opt := embed.Options{Provider: p, Workers: c.Int("workers"), FlushEach: cmdio.IsTerminal(c.App.Writer), Fast: fastjson.New()}
	if s := c.String("types"); s != "" {
		if opt.Types, err = embed.ParseTypes(s); err != nil {
			return cmdio.Usagef("--types: %w", err)
		}
	}
	if opt.Chunker, err = embedcfg.Chunker(c); err != nil {
		return err
	}
	if opt.Workers <= 0 {
		opt.Workers = embed.DefaultWorkers(p.Name())
	}
	if !c.Bool("no-cache") {
		if opt.Cache, err = embed.OpenCache(embed.CacheDir(lake), p.Model(), cfg.Dimensions); err != nil {
			return err
		}
	}
	skips := cmdio.NewSkips(c)
	opt.OnSkip = skips.Skip
	start := time.Now()
	total, err, closeErr := cmdio.Sum(c, func(ctx context.Context, r io.Reader, w io.Writer, name string) (embed.Stats, error) {
		opt.Name = name
		return embed.Embed(ctx, r, w, opt)
	})
	// What was computed before a failure stays cached.
	if err := errjoin.Join(err, closeErr, closeCache(opt.Cache)); err != nil {
		return err
	}
	cmdio.Summary(c, "%s; %d bad lines skipped (%.1fs)", total.Summary(p.Model(), p.Dim()), skips.N(), time.Since(start).Seconds())
	return skips.Err()
}

func closeCache(c *embed.Cache) error {
	if c == nil {
		return nil
	}
	return c.Close()
}
