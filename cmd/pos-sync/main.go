// Command pos-sync runs a sync in one process: pos-extract | pos-normalize
// | pos-scrub | pos-embed | pos-load --require-scrubbed, the same stages on
// the same bytes, without a process start for each. It is for the short
// syncs an agent's hooks run after every turn; the binaries of the stages
// stay the pipeline's parts for everything else.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/embedcfg"
	"github.com/pos-lake/pos/cmd/internal/extractcfg"
	"github.com/pos-lake/pos/cmd/internal/resident"
	"github.com/pos-lake/pos/cmd/internal/scrubcfg"
	"github.com/pos-lake/pos/extract"
	_ "github.com/pos-lake/pos/extract/all" // every platform adapter
	"github.com/pos-lake/pos/internal/chain"
	"github.com/pos-lake/pos/internal/errjoin"
	"github.com/pos-lake/pos/internal/jsontext/fastjson"
	"github.com/pos-lake/pos/load"
	tembed "github.com/pos-lake/pos/transform/embed"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
	"github.com/pos-lake/pos/transform/scrub"
	"github.com/urfave/cli/v2"
)

// The long texts of --help, one file a command.
//
//go:embed help/*.txt
var helpFiles embed.FS

func main() {
	cmdio.GCPercent = 100 // pos-load's row groups are held in memory
	os.Exit(cmdio.Main(newApp()))
}

func newApp() *cli.App {
	return cmdio.Stage(helpFiles, &cli.App{
		Name:      "pos-sync",
		Usage:     "sync agent histories into the lake in one process (extract, normalize, scrub, embed, load)",
		UsageText: "pos-sync [--platform NAME] [--root DIR]... [--lake DIR] [--no-scrub] [--no-embed]",
		Flags: slices.Concat([]cli.Flag{
			&cli.StringSliceFlag{Name: "platform", Aliases: []string{"p"}, Value: cli.NewStringSlice("all"), Usage: "platform(s) to read, or all"},
			&cli.StringSliceFlag{Name: "root", Usage: "read this directory or file instead of the default locations (repeatable)"},
			cmdio.LakeFlag(), cmdio.CatalogFlag(),
			&cli.StringFlag{Name: "since", Usage: "only records newer than this: 7d, 36h, 2026-01-31, RFC 3339"},
			&cli.StringFlag{Name: "state", Usage: "watermark directory (default: LAKE/_state)"},
			&cli.BoolFlag{Name: "full", Usage: "ignore watermarks: read every file from the start"},
			&cli.BoolFlag{Name: "follow-links", Usage: "read what symbolic links below the folders searched point to"},
			&cli.StringFlag{Name: "user", Usage: "user name stamped on records (default: the login name)"},
			&cli.StringFlag{Name: "machine", Usage: "machine name stamped on records (default: the host name)"},
			&cli.BoolFlag{Name: "no-scrub", Usage: "load without redacting secrets (pos-scrub --off): the lake records that it was your choice"},
			&cli.BoolFlag{Name: "pii", Usage: "also redact e-mail addresses, phone numbers, IP addresses and user names"},
			&cli.StringFlag{Name: "allowlist", Usage: "pos-scrub's allowlist `FILE`"},
			&cli.BoolFlag{Name: "no-embed", Usage: "leave pos-embed out: new sessions are not searchable until embedded"},
			&cli.BoolFlag{Name: "no-cache", Usage: "neither read nor write the lake's embedding cache"},
			&cli.BoolFlag{Name: "resident", Usage: "run the sync in the resident pos-sync, started in the background when none runs: no start-up cost (for hooks)"},
			&cli.DurationFlag{Name: "idle", Value: resident.DefaultIdle, EnvVars: []string{"POS_SYNC_IDLE"}, Usage: "with --resident: a resident started by this run ends after this long without a sync"},
			&cli.BoolFlag{Name: "serve", Hidden: true, Usage: "be the resident pos-sync"},
		}, scrubcfg.Flags(), embedcfg.ProviderFlags(), embedcfg.ChunkerFlags()),
		Action: run,
	})
}

func run(c *cli.Context) error {
	switch {
	case c.Bool("serve"):
		return serve(c)
	case c.Bool("resident") && !serving:
		return viaResident(c, func() error { return syncHere(c) })
	}
	return syncHere(c)
}

// syncHere runs the sync in this process.
func syncHere(c *cli.Context) error {
	if c.NArg() > 0 {
		return cmdio.Usagef("unexpected argument %q (files to read go in --root)", c.Args().First())
	}
	if c.Bool("no-scrub") && c.Bool("pii") {
		return cmdio.Usagef("--no-scrub and --pii exclude each other")
	}
	start := time.Now()
	publish, err := cmdio.LoadShared(c) // --lake is now the local lake
	if err != nil {
		return err
	}
	lake := c.String("lake")
	skips := map[string]*cmdio.Skips{}
	skipsOf := func(name string) *cmdio.Skips {
		s := cmdio.NewSkips(c)
		s.Tool = name // diagnostics read as the stage's binary prints them
		skips[name] = s
		return s
	}

	x, err := extractcfg.Options(c, lake, skipsOf("pos-extract"))
	if err != nil {
		return err
	}
	x.Dirs = residentDirs
	// The scrubber's rules take longer to build than a small sync takes to
	// read: they are built while the first stages run.
	type built struct {
		s   *scrub.Scrubber
		err error
	}
	scrubber := make(chan built, 1)
	sk := skipsOf("pos-scrub")
	go func() {
		s, err := newScrubber(c)
		scrubber <- built{s, err}
	}()
	en, openCache, err := embedOptions(c, lake, skipsOf("pos-embed"))
	if err != nil {
		return err
	}
	// So is the embedding cache's index, which only pos-embed's stage
	// needs, and only once records reach it.
	type opened struct {
		c   *tembed.Cache
		err error
	}
	opening := make(chan opened, 1)
	go func() {
		c, err := openCache()
		opening <- opened{c, err}
	}()
	embedCache := sync.OnceValues(func() (*tembed.Cache, error) {
		o := <-opening
		return o.c, o.err
	})

	nsk := skipsOf("pos-normalize")
	nopt := normalize.Options{OnSkip: nsk.Skip, Fast: fastjson.New(), Enrich: enrich.Options{Files: true, Commits: true, Tags: true, Decisions: true}}
	var (
		nstats normalize.Stats
		srep   scrub.Report
		estats tembed.Stats
	)
	filters := []chain.Filter{
		func(ctx context.Context, r io.Reader, w io.Writer) (err error) {
			nstats, err = normalize.Normalize(ctx, r, w, nopt)
			return err
		},
		func(ctx context.Context, r io.Reader, w io.Writer) error {
			b := <-scrubber
			if b.err != nil {
				return b.err
			}
			var err error
			srep, err = b.s.StreamWith(ctx, r, w, "-", sk.Skip)
			return err
		},
	}
	if en != nil {
		filters = append(filters, func(ctx context.Context, r io.Reader, w io.Writer) (err error) {
			o := *en
			if o.Cache, err = embedCache(); err != nil {
				return err
			}
			estats, err = tembed.Embed(ctx, r, w, o)
			return err
		})
	}
	lsk := skipsOf("pos-load")
	var lstats load.Stats
	sink := func(ctx context.Context, r io.Reader) error {
		l, err := load.Open(ctx, load.Options{
			Lake: lake, OnSkip: lsk.Skip, LockTimeout: 10 * time.Minute,
			RequireScrubbed: !c.Bool("no-scrub"), Fast: fastjson.New(), IDs: residentIDs, Writers: residentWriters,
			Listing: residentListing, Rollup: residentRollup,
		})
		if err != nil {
			return err
		}
		if err := l.AddNamedStream(r, "-"); err != nil {
			l.Abort()
			lstats = l.Stats()
			return err
		}
		err = l.Close()
		lstats = l.Stats()
		return err
	}
	src := func(ctx context.Context, w io.Writer) error {
		return extract.Run(ctx, nopCloser{w}, x)
	}
	// What pos-embed computed before a failure stays cached.
	err = chain.Run(c.Context, src, filters, sink)
	cache, cerr := embedCache()
	if err == nil {
		err = cerr // the cache failed to open, and no stage said so
	}
	err = errjoin.Join(err, closeCache(cache))
	if errors.Is(err, load.ErrMixedEmbeddings) {
		err = cmdio.UsageError{Err: err}
	}
	if err != nil {
		return err
	}
	if !c.Bool("quiet") {
		w := c.App.ErrWriter
		fmt.Fprintf(w, "pos-sync: extract: %s\n", x.Stats.Summary(skips["pos-extract"].N(), skips["pos-extract"].Warnings(), time.Since(start)))
		fmt.Fprintf(w, "pos-sync: normalize: %s\n", nstats.Summary())
		srep.WriteText(w, "pos-sync: scrub: ")
		if en != nil {
			fmt.Fprintf(w, "pos-sync: embed: %s\n", estats.Summary(en.Provider.Model(), en.Provider.Dim()))
		}
		fmt.Fprintf(w, "pos-sync: load: %s (%.1fs in all)\n", lstats.Summary(), time.Since(start).Seconds())
		for _, m := range lstats.Warnings() {
			fmt.Fprintf(w, "pos-sync: load: %s\n", m)
		}
	}
	if publish != nil {
		if err := publish(); err != nil {
			return err
		}
	}
	var n int64
	for _, s := range skips {
		n += s.N()
	}
	if n > 0 {
		return cmdio.SkippedError{N: n}
	}
	return nil
}

// newScrubber is pos-scrub's scrubber, or with --no-scrub its pass-through
// that marks records as not scrubbed by choice. Its stream is told about
// bad lines by its caller (Scrubber.StreamWith). In the resident, the
// scrubber of the last sync is used again while its options, its
// allowlist's bytes and its key are the same.
func newScrubber(c *cli.Context) (*scrub.Scrubber, error) {
	opt := scrub.Options{PII: c.Bool("pii"), Off: c.Bool("no-scrub"), Fast: fastjson.New()}
	var allow []byte
	if p := c.String("allowlist"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, cmdio.UsageError{Err: err}
		}
		if opt.Allowlist, err = scrub.ParseAllowlist(bytes.NewReader(b)); err != nil {
			return nil, cmdio.UsageError{Err: fmt.Errorf("%s: %w", p, err)}
		}
		allow = b
	}
	if !opt.Off {
		var err error
		if opt.Key, err = scrubcfg.Key(c); err != nil {
			return nil, err
		}
	}
	key := fmt.Sprintf("%t %t %x %x", opt.PII, opt.Off, sha256.Sum256(allow), sha256.Sum256(opt.Key))
	if serving {
		residentScrubber.Lock()
		defer residentScrubber.Unlock()
		if residentScrubber.s != nil && residentScrubber.key == key {
			return residentScrubber.s, nil
		}
	}
	s, err := scrub.New(opt)
	if err != nil {
		return nil, cmdio.UsageError{Err: err}
	}
	if serving {
		residentScrubber.s, residentScrubber.key = s, key
	}
	return s, nil
}

// embedOptions are pos-embed's (nil with --no-embed), and what opens its
// vector cache (nil, nil with --no-cache).
func embedOptions(c *cli.Context, lake string, sk *cmdio.Skips) (*tembed.Options, func() (*tembed.Cache, error), error) {
	none := func() (*tembed.Cache, error) { return nil, nil }
	if c.Bool("no-embed") {
		return nil, none, nil
	}
	cfg := embedcfg.Config(c)
	if note := embedcfg.FollowLakeHashModel(&cfg, lake); note != "" && !c.Bool("quiet") {
		fmt.Fprintln(c.App.ErrWriter, "pos-sync: "+note)
	}
	p, err := tembed.NewProvider(cfg)
	if err != nil {
		return nil, nil, cmdio.UsageError{Err: err}
	}
	opt := tembed.Options{Provider: p, Workers: tembed.DefaultWorkers(p.Name()), Fast: fastjson.New(), OnSkip: sk.Skip, Name: "-"}
	if opt.Chunker, err = embedcfg.Chunker(c); err != nil {
		return nil, nil, err
	}
	if c.Bool("no-cache") {
		return &opt, none, nil
	}
	return &opt, func() (*tembed.Cache, error) {
		return tembed.OpenCache(tembed.CacheDir(lake), p.Model(), cfg.Dimensions)
	}, nil
}

func closeCache(c *tembed.Cache) error {
	if c == nil {
		return nil
	}
	return c.Close()
}

// nopCloser lets extract.Run close the pipe's writer without closing it:
// the chain closes it when the source returns.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
