package load

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/internal/peakmem"
	"github.com/pos-lake/pos/schema"
)

// hugeStream is the stream pos-embed writes for one prompt of size bytes:
// its native line, the message, the exchange it opens (its text and its
// prompt), the session and 128 chunks.
func hugeStream(size int) []byte {
	var text strings.Builder
	for i := 0; text.Len() < size; i++ {
		fmt.Fprintf(&text, "line %d: compiled package p%d in %d ms, cache %x\n", i, i%97, i%1013, uint32(i)*2654435761)
	}
	t := text.String()
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	raw := jsontext.AppendString([]byte(`{"type":"user","message":{"role":"user","content":`), t)
	raw = append(raw, "}}"...)
	base := func(kind schema.Kind, id string) *schema.Record {
		r := schema.New(kind)
		r.ID, r.Platform, r.SessionID, r.TS, r.TSPrecision = id, "claude_code", "s1", ts, schema.PrecisionExact
		return r
	}
	var out []byte
	r := base(schema.KindRaw, "r1")
	r.Raw = raw
	out = append(schema.AppendRecord(out, r), '\n')
	m := base(schema.KindMessage, "m1")
	m.Role, m.ContentType, m.Text = schema.RoleUser, schema.ContentText, t
	out = append(schema.AppendRecord(out, m), '\n')
	e := base(schema.KindExchange, "e1")
	e.Role, e.ContentType, e.Text = schema.RoleUser, schema.ContentExchange, t+"\n\nok"
	e.Exchange = &schema.Exchange{Number: 1, Prompt: t, Response: "ok", PromptID: "m1"}
	out = append(schema.AppendRecord(out, e), '\n')
	s := base(schema.KindSession, "s1")
	s.Title, s.Session = t[:200], &schema.Session{TitleSource: schema.TitlePrompt}
	out = append(schema.AppendRecord(out, s), '\n')
	for i := range 128 {
		c := base(schema.KindChunk, fmt.Sprintf("c%d", i))
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
