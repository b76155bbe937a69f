package load

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/pos-lake/pos/internal/peakmem"
	"github.com/pos-lake/pos/internal/testrec"
	"github.com/pos-lake/pos/schema"
)

// hugeStream is the stream pos-embed writes for one prompt of size bytes:
// its native line, the message, the exchange it opens (its text and its
// prompt), the session and 128 chunks.
func hugeStream(size int) []byte {
	t, out := testrec.HugePrompt(size)
	s := testrec.HugeBase(schema.KindSession, "s1")
	s.Title, s.Session = t[:200], &schema.Session{TitleSource: schema.TitlePrompt}
	out = append(schema.AppendRecord(out, s), '\n')
	for i := range 128 {
		c := testrec.HugeBase(schema.KindChunk, fmt.Sprintf("c%d", i))
		c.ParentID, c.ContentType, c.Text = "e1", schema.ContentExchange, t[i*1500:(i+1)*1500]
		c.Chunk = &schema.Chunk{Index: int64(i), Model: "hash-v2", Dim: 4, Embedding: []float32{0.5, 0.5, 0.5, 0.5}}
		out = append(schema.AppendRecord(out, c), '\n')
	}
	return out
}

// BenchmarkLoadHugeRecord loads a stream whose records hold a 50 MB
// prompt (its native line, message and exchange) and reports the most heap
// the load held (peak-heap-MB), the process's peak resident set
// (maxrss-MB, which includes the 200 MB stream the benchmark holds) and
// the allocations.
func BenchmarkLoadHugeRecord(b *testing.B) {
	data := hugeStream(50 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var peak uint64
	for b.Loop() {
		lake := b.TempDir()
		stop := peakmem.Start()
		if _, err := Load(context.Background(), bytes.NewReader(data), Options{Lake: lake, NoCatalog: true}); err != nil {
			b.Fatal(err)
		}
		peak = max(peak, stop())
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peakmem.MaxRSS())/(1<<20), "maxrss-MB")
}
