// Command pos-embed adds chunk records with vectors for the indexable units
// of a pos stream (exchanges, user prompts, summary labels, compaction
// summaries, subagent reports and plans) and passes every record through.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/embedcfg"
	_ "github.com/pos-lake/pos/schema/fastjson" // sonic for bulk decoding
	"github.com/pos-lake/pos/transform/embed"
	"github.com/urfave/cli/v2"
)

func main() {
	cmdio.Batch = true // a stage of the pipeline
	os.Exit(cmdio.Main(newApp()))
}

func newApp() *cli.App {
	return &cli.App{
		Name:      "pos-embed",
		Usage:     "add chunk records with vectors for the indexable units of pos records",
		UsageText: "pos-normalize | pos-scrub | pos-embed [--provider hash|openai|static] [--lake DIR] [FILE...] | pos-load\n   pos-embed model pull ORG/NAME | pos-embed model list",
		Description: `Reads pos NDJSON (stdin, or files; .zst is decompressed). After each
exchange, user prompt, summary label, compaction summary, subagent report and
plan it writes its chunks: pieces of at most --chunk-tokens tokens that
overlap by --chunk-overlap, cut at paragraph, line or sentence ends, each with
a vector (of the chunk under its unit's heading: the first line of the
exchange's prompt, the document's title). Every record passes through
unchanged.

A unit has at most --max-chunks chunks, each distinct (a chunk that repeats
an earlier one of its unit is left out); of a longer text, its head (the
first quarter of them), its tail (the last quarter) and parts at even steps
between are indexed, and a huge one is not split whole. No chunk splits a
redaction marker.

Providers:
  hash    (default) local and deterministic, no model files, no network:
          feature-hashed words and character 4-grams, each spread over
          8 signed dimensions, sublinear term frequency, L2-normalised
          (model ` + embed.HashModel + `; --model ` + embed.HashModelV1 + ` for the first
          feature set, which also hashed word pairs)
  openai  any OpenAI-compatible endpoint by --base-url: OpenAI, Ollama
          (http://localhost:11434/v1), vLLM, llama.cpp server, LM Studio;
          batched requests, --workers in flight, retries with backoff on
          429 and 5xx, a clear error on a bad key or model
  static  a model2vec model on this machine (--model DIR, or a name
          fetched with pos-embed model pull, e.g.
          minishlab/potion-retrieval-32M): the mean of the text's token
          vectors, in pure Go, no network; pos-query embeds queries with it

Vectors are cached in LAKE/_cache/embeddings by model, dimension and text
hash: embedding the same input again computes nothing. The summary says how
many vectors were computed, how many reused (from the cache, or a text
already embedded in this run) and how many units were skipped (no text to
embed). Vectors are stored at unit length, so their inner product is their
cosine similarity.

Environment: POS_EMBED_PROVIDER, POS_EMBED_MODEL, POS_EMBED_DIMENSIONS,
POS_EMBED_BASE_URL (or OPENAI_BASE_URL), POS_EMBED_API_KEY (or OPENAI_API_KEY).`,
		Flags: append(embedcfg.ProviderFlags(),
			cmdio.LakeFlag(),
			&cli.BoolFlag{Name: "no-cache", Usage: "neither read nor write the lake's embedding cache"},
			&cli.IntFlag{Name: "batch", Value: 64, Usage: "openai: texts per request"},
			&cli.IntFlag{Name: "workers", Usage: "groups of records embedded at once (default: 4 for openai, one per CPU for hash)"},
			&cli.IntFlag{Name: "chunk-tokens", Value: embed.DefaultChunker.MaxTokens, Usage: "the most tokens in a chunk (estimated)"},
			&cli.IntFlag{Name: "chunk-overlap", Value: embed.DefaultChunker.Overlap, Usage: "tokens a chunk repeats from the one before"},
			&cli.IntFlag{Name: "max-chunks", Value: embed.DefaultChunker.MaxChunks, Usage: "the most chunks of one text: its head, its tail and distinct parts between"},
			&cli.StringFlag{Name: "types", Usage: "index only these content types, comma-separated (" + strings.Join(embed.Indexable, ", ") + ")"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "write to this file (.zst: compressed) instead of stdout"},
			cmdio.StrictFlag,
			cmdio.QuietFlag,
		),
		Action:   run,
		Commands: []*cli.Command{modelCommand()},
	}
}

func run(c *cli.Context) error {
	cfg := embedcfg.Config(c)
	cfg.Batch = c.Int("batch")
	if note := embedcfg.FollowLakeHashModel(&cfg, c.String("lake")); note != "" && !c.Bool("quiet") {
		fmt.Fprintln(c.App.ErrWriter, "pos-embed: "+note)
	}
	p, err := embed.NewProvider(cfg)
	if err != nil {
		return cmdio.UsageError{Err: err}
	}
	opt := embed.Options{Provider: p, Workers: c.Int("workers"), FlushEach: cmdio.IsTerminal(c.App.Writer),
		Chunker: embed.Chunker{MaxTokens: c.Int("chunk-tokens"), Overlap: c.Int("chunk-overlap"), MaxChunks: c.Int("max-chunks")}}
	if s := c.String("types"); s != "" {
		if opt.Types, err = embed.ParseTypes(s); err != nil {
			return cmdio.Usagef("--types: %w", err)
		}
	}
	if ch := opt.Chunker; ch.MaxTokens < 16 || ch.Overlap < 0 || ch.Overlap > ch.MaxTokens/2 {
		return cmdio.Usagef("--chunk-tokens must be at least 16 and --chunk-overlap between 0 and half of it")
	} else if ch.MaxChunks < 4 {
		return cmdio.Usagef("--max-chunks must be at least 4")
	}
	if opt.Workers <= 0 {
		opt.Workers = embed.DefaultWorkers(p.Name())
	}
	if !c.Bool("no-cache") {
		if opt.Cache, err = embed.OpenCache(embed.CacheDir(c.String("lake")), p.Model(), cfg.Dimensions); err != nil {
			return err
		}
	}
	skips := cmdio.NewSkips(c)
	opt.OnSkip = skips.Skip
	start := time.Now()
	var total embed.Stats
	err, closeErr := cmdio.Filter(c, func(ctx context.Context, r io.Reader, w io.Writer, name string) error {
		opt.Name = name
		st, err := embed.Embed(ctx, r, w, opt)
		total.Add(st)
		return err
	})
	// What was computed before a failure stays cached.
	if err := cmdio.Join(err, closeErr, closeCache(opt.Cache)); err != nil {
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
