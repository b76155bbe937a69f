package searchindex_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/internal/indextest"
	"github.com/pos-lake/pos/schema"
)

var chunk = indextest.Chunk

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
