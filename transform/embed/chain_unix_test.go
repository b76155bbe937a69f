//go:build unix

package embed_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	_ "github.com/pos-lake/pos/extract/all"
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
	"github.com/pos-lake/pos/transform/scrub"
)

var chainNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// extractCorpus runs every adapter over its corpus directory: what
// pos-extract --full writes for the corpus.
func extractCorpus(tb testing.TB, dir string) []byte {
	tb.Helper()
	var out bytes.Buffer
	enc := schema.NewEncoder(&out)
	for _, p := range platforms.All() {
		root, ok := corpus.Folder(dir, p)
		if !ok {
			continue
		}
		a, ok := extract.Lookup(p.Name)
		if !ok {
			tb.Fatalf("no adapter for %s", p.Name)
		}
		opt := extract.Options{Roots: []string{root}, User: "dev", Machine: "box", Now: func() time.Time { return chainNow },
			Platform: p.Name, OnSkip: func(*schema.BadInput) error { return nil }, OnWarn: func(*schema.BadInput) error { return nil }}
		if err := a.Extract(context.Background(), opt, enc.Encode); err != nil {
			tb.Fatalf("%s: %v", filepath.Base(root), err)
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
// one process) over the real corpus of every platform, twice an
// iteration: indexing what was said only, as pos-embed did before it
// indexed tool calls and results ("said"), and every indexable type
// ("all"), in alternating order so that a machine's changing load weighs
// on both alike. It reports each one's median wall and CPU time (user +
// system) over the iterations and how much slower all is than said
// (go test -run '^$' -bench ColdChain -benchtime 10x).
func BenchmarkColdChain(b *testing.B) {
	dir := corpus.Dir(b)
	var wall, cpu [2][]float64
	var chunks [2]int64
	types := [2][]string{saidTypes, nil}
	i := 0
	for b.Loop() {
		for k := range 2 {
			which := (i + k) % 2
			w0, c0 := time.Now(), cpuTime()
			st := coldChain(b, extractCorpus(b, dir), filepath.Join(b.TempDir(), "lake"), types[which])
			wall[which] = append(wall[which], time.Since(w0).Seconds()*1000)
			cpu[which] = append(cpu[which], (cpuTime()-c0).Seconds()*1000)
			chunks[which] = st.Chunks
		}
		i++
	}
	for k, name := range []string{"said", "all"} {
		b.ReportMetric(median(wall[k]), name+"-wall-ms")
		b.ReportMetric(median(cpu[k]), name+"-cpu-ms")
		b.ReportMetric(float64(chunks[k]), name+"-chunks")
	}
	b.ReportMetric(100*(median(wall[1])/median(wall[0])-1), "wall-slower-%")
	b.ReportMetric(100*(median(cpu[1])/median(cpu[0])-1), "cpu-slower-%")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
