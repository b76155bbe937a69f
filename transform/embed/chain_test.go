package embed_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	_ "github.com/pos-lake/pos/extract/all"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
	"github.com/pos-lake/pos/transform/scrub"
)

// corpusPlatforms are the corpus's directories and the platforms whose
// adapters read them.
var corpusPlatforms = [][2]string{
	{"claude", schema.PlatformClaudeCode}, {"codex", schema.PlatformCodex}, {"gemini", schema.PlatformGemini},
	{"cline", schema.PlatformCline}, {"cursor", schema.PlatformCursor}, {"aider", schema.PlatformAider},
	{"push", schema.PlatformPush},
}

// corpusDir is the real corpus beside the checkout ($POS_CORPUS
// elsewhere); tests and benchmarks that need it skip without it.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "corpus")
	if d := os.Getenv("POS_CORPUS"); d != "" {
		dir = d
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		tb.Skipf("%s is absent: the real-corpus tests need it (set POS_CORPUS)", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return abs
}

var chainNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// extractCorpus runs every adapter over its corpus directory: what
// pos-extract --full writes for the corpus.
func extractCorpus(tb testing.TB, dir string) []byte {
	tb.Helper()
	var out bytes.Buffer
	enc := schema.NewEncoder(&out)
	for _, p := range corpusPlatforms {
		root := filepath.Join(dir, p[0])
		if _, err := os.Stat(root); err != nil {
			continue
		}
		a, ok := extract.Lookup(p[1])
		if !ok {
			tb.Fatalf("no adapter for %s", p[1])
		}
		opt := extract.Options{Roots: []string{root}, User: "dev", Machine: "box", Now: func() time.Time { return chainNow },
			Platform: p[1], OnSkip: func(*schema.BadInput) error { return nil }, OnWarn: func(*schema.BadInput) error { return nil }}
		if err := a.Extract(context.Background(), opt, enc.Encode); err != nil {
			tb.Fatalf("%s: %v", p[0], err)
		}
	}
	if err := enc.Flush(); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

var chainKey = []byte("chain test key of 32 bytes or more")

// scrubbedCorpus is the corpus through pos-normalize and pos-scrub.
func scrubbedCorpus(tb testing.TB, extracted []byte) []byte {
	tb.Helper()
	ctx := context.Background()
	var normalized, scrubbed bytes.Buffer
	if _, err := normalize.Normalize(ctx, bytes.NewReader(extracted), &normalized, normalize.Options{Enrich: enrich.All}); err != nil {
		tb.Fatal(err)
	}
	if _, err := scrub.Scrub(ctx, &normalized, &scrubbed, scrub.Options{Key: chainKey}); err != nil {
		tb.Fatal(err)
	}
	return scrubbed.Bytes()
}

// saidTypes are the content types pos-embed indexed before tool calls and
// results were: the "before" of BenchmarkColdChain.
var saidTypes = []string{schema.ContentExchange, schema.ContentUserPrompt, schema.ContentSummaryLabel,
	schema.ContentCompactSummary, schema.ContentSubagentSummary, schema.ContentPlan}

// coldChain runs pos-normalize | pos-scrub | pos-embed | pos-load over the
// extracted corpus into a new lake, indexing types (nil: every indexable
// type), and returns the embed stage's stats.
func coldChain(tb testing.TB, extracted []byte, lake string, types []string) embed.Stats {
	tb.Helper()
	ctx := context.Background()
	scrubbed := scrubbedCorpus(tb, extracted)
	p, err := embed.NewProvider(embed.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	var embedded bytes.Buffer
	st, err := embed.Embed(ctx, bytes.NewReader(scrubbed), &embedded, embed.Options{Provider: p, Types: types})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := load.Load(ctx, &embedded, load.Options{Lake: lake, Now: func() time.Time { return chainNow }, RequireScrubbed: true}); err != nil {
		tb.Fatal(err)
	}
	return st
}

// BenchmarkColdChain measures the cold chain (pos-extract --full |
// pos-normalize | pos-scrub | pos-embed | pos-load, stage after stage in
// one process) over the real corpus of every platform: said indexes what
// was said only, as pos-embed did before it indexed tool calls and
// results; all indexes every indexable type. Compare the two's medians
// (go test -run '^$' -bench ColdChain -count 10).
func BenchmarkColdChain(b *testing.B) {
	dir := corpusDir(b)
	extracted := extractCorpus(b, dir)
	for _, bc := range []struct {
		name  string
		types []string
	}{{"said", saidTypes}, {"all", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(extracted)))
			var st embed.Stats
			for b.Loop() {
				st = coldChain(b, extractCorpus(b, dir), filepath.Join(b.TempDir(), "lake"), bc.types)
			}
			b.ReportMetric(float64(st.Chunks), "chunks")
		})
	}
}
