package embed

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/pos-lake/pos/internal/peakmem"
	"github.com/pos-lake/pos/internal/testrec"
)

// BenchmarkEmbedHugePrompt embeds (hash provider) a stream whose records
// hold a 50 MB prompt and reports the chunks written, the most heap the
// run added (peak-heap-MB), the process's peak resident set (maxrss-MB,
// with the 200 MB input the benchmark holds) and the allocations.
func BenchmarkEmbedHugePrompt(b *testing.B) {
	_, data := testrec.HugePrompt(50 << 20)
	p, err := NewProvider(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var peak uint64
	var st Stats
	for b.Loop() {
		stop := peakmem.Start()
		st, err = Embed(context.Background(), bytes.NewReader(data), io.Discard, Options{Provider: p, Workers: 2})
		if err != nil {
			b.Fatal(err)
		}
		peak = max(peak, stop())
	}
	b.ReportMetric(float64(st.Chunks), "chunks")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peakmem.MaxRSS())/(1<<20), "maxrss-MB")
}
