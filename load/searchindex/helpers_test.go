package searchindex_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/schema"
)

// chunk is a chunk record of pos-embed's with a vector of dim made from
// its text.
func chunk(id, text, model string, dim int, ts time.Time) *schema.Record {
	r := schema.New(schema.KindChunk)
	r.ID, r.Platform, r.SessionID, r.ParentID, r.TS = id, "test", "s", "p-"+id, ts
	r.ContentType, r.Text = schema.ContentExchange, text
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(len(text)%7+i) / 10
	}
	r.Chunk = &schema.Chunk{Index: 0, Model: model, Dim: int64(dim), Embedding: v}
	return r
}

// loadWith loads records in one run of pos-load's library.
func loadWith(t testing.TB, opt load.Options, recs ...*schema.Record) load.Stats {
	t.Helper()
	var buf bytes.Buffer
	enc := schema.NewEncoder(&buf)
	for _, r := range recs {
		enc.Encode(r)
	}
	enc.Flush()
	st, err := load.Load(context.Background(), &buf, opt)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// loadRecs loads records into lake in one run.
func loadRecs(t *testing.T, lake string, recs ...*schema.Record) load.Stats {
	t.Helper()
	at := time.Now()
	return loadWith(t, load.Options{Lake: lake, Now: func() time.Time { return at }}, recs...)
}
