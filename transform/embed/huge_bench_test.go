package embed

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/internal/peakmem"
	"github.com/pos-lake/pos/schema"
)

// hugePrompt is what pos-scrub hands pos-embed for one prompt of size
// bytes: its native line, the message, and the exchange it opens.
func hugePrompt(size int) []byte {
	var text strings.Builder
	for i := 0; text.Len() < size; i++ {
		fmt.Fprintf(&text, "line %d: compiled package p%d in %d ms, cache %x\n", i, i%97, i%1013, uint32(i)*2654435761)
	}
	t := text.String()
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []byte
	add := func(kind schema.Kind, id string, mod func(*schema.Record)) {
		r := schema.New(kind)
		r.ID, r.Platform, r.SessionID, r.TS = id, claudecode.Name, "s1", ts
		mod(r)
		out = append(schema.AppendRecord(out, r), '\n')
	}
	add(schema.KindRaw, "r1", func(r *schema.Record) {
		r.Raw = append(jsontext.AppendString([]byte(`{"type":"user","message":{"content":`), t), "}}"...)
	})
	add(schema.KindMessage, "m1", func(r *schema.Record) {
		r.Role, r.ContentType, r.Text = schema.RoleUser, schema.ContentText, t
	})
	add(schema.KindExchange, "e1", func(r *schema.Record) {
		r.Role, r.ContentType, r.Text = schema.RoleUser, schema.ContentExchange, t+"\n\nDone."
		r.Exchange = &schema.Exchange{Number: 1, Prompt: t, Response: "Done.", PromptID: "m1"}
	})
	return out
}

// BenchmarkEmbedHugePrompt embeds (hash provider) a stream whose records
// hold a 50 MB prompt and reports the chunks written, the most heap the
// run added (peak-heap-MB), the process's peak resident set (maxrss-MB,
// with the 200 MB input the benchmark holds) and the allocations.
func BenchmarkEmbedHugePrompt(b *testing.B) {
	data := hugePrompt(50 << 20)
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
