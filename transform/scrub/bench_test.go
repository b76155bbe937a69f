package scrub

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"testing"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/corpus"

	"github.com/pos-lake/pos/transform/normalize"
)

// corpusStream returns pos-extract | pos-normalize over the real Claude
// Code corpus: the stream pos-scrub reads in a pipeline.
func corpusStream(tb testing.TB) []byte {
	tb.Helper()
	dir := corpus.Platform(tb, claudecode.Name)
	out, err := exec.Command("go", "run", "../../cmd/pos-extract", "--platform", "claude_code", "--root", dir, "--full", "-q").Output()
	if err != nil && len(out) == 0 {
		tb.Fatal(err)
	}
	var norm bytes.Buffer
	if _, err := normalize.Normalize(context.Background(), bytes.NewReader(out), &norm, normalize.Options{}); err != nil {
		tb.Fatal(err)
	}
	return norm.Bytes()
}

// BenchmarkScrub measures pos-scrub over the corpus stream; MB/s is of
// that NDJSON.
func BenchmarkScrub(b *testing.B) {
	data := corpusStream(b)
	s, err := New(Options{Key: testKey})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := s.Stream(context.Background(), bytes.NewReader(data), io.Discard, "corpus"); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time says what the scrubber costs when the machine is shared
	// (wall-clock MB/s then depends on the neighbours).
	b.ReportMetric(float64(len(data))*float64(b.N)/1e6/(cpuTime()-cpu0).Seconds(), "MB/cpu-s")
}

// benchStream measures a scrubber set up with opt over the corpus stream.
func benchStream(b *testing.B, opt Options) {
	data := corpusStream(b)
	s, err := New(opt)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := s.Stream(context.Background(), bytes.NewReader(data), io.Discard, "corpus"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScrubPII is BenchmarkScrub with --pii.
func BenchmarkScrubPII(b *testing.B) { benchStream(b, Options{Key: testKey, PII: true}) }

// BenchmarkScrubOneWorker is BenchmarkScrub on one scanning goroutine.
func BenchmarkScrubOneWorker(b *testing.B) { benchStream(b, Options{Key: testKey, Workers: 1}) }
