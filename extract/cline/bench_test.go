package cline

import (
	"context"
	"io"
	"testing"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// BenchmarkExtractCorpus measures the adapter over the real corpus,
// encoding to NDJSON as pos-extract does; MB/s is of source bytes.
func BenchmarkExtractCorpus(b *testing.B) {
	dir := corpusDir(b)
	var size int64
	st := &extract.Stats{}
	enc := schema.NewEncoder(io.Discard)
	opt := extract.Options{Roots: []string{dir}, Stats: st, OnSkip: func(*schema.BadInput) error { return nil }}
	for b.Loop() {
		st.Bytes.Store(0)
		if err := (Adapter{}).Extract(context.Background(), opt, enc.Encode); err != nil {
			b.Fatal(err)
		}
		size = st.Bytes.Load()
	}
	b.SetBytes(size)
}
