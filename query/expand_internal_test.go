package query

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
)

// TestLexicalSecondPass: a query extended with expansion terms scores as
// the whole query scored afresh, from the first pass's postings and the
// postings of the added terms only.
func TestLexicalSecondPass(t *testing.T) {
	ctx := context.Background()
	lake := t.TempDir()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	texts := []string{
		"the parser rejects the config file",
		"parallel test workers made the suite faster",
		"workers crash when the config file is missing",
		"faster builds with a cache of modules",
		"the suite runs tests in parallel on every core",
		"nothing to see here",
	}
	var in bytes.Buffer
	for i, text := range texts {
		c := schema.New(schema.KindChunk)
		c.ID, c.Platform, c.SessionID, c.ParentID = fmt.Sprintf("c%d", i), "claude", fmt.Sprintf("s%d", i%2), fmt.Sprintf("ex%d", i)
		c.TS = now.Add(-time.Duration(i+1) * time.Hour)
		c.ContentType, c.Text = schema.ContentExchange, text
		c.Chunk = &schema.Chunk{Model: embed.HashModel, Dim: embed.DefaultDim, Embedding: embed.NewHash(0).Vector(text)}
		in.Write(append(schema.AppendRecord(nil, c), '\n'))
	}
	if _, err := load.Load(ctx, &in, load.Options{Lake: lake, Now: func() time.Time { return now }, NoCatalog: true}); err != nil {
		t.Fatal(err)
	}
	d, err := Open(ctx, lake)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	opt := SearchOptions{Mode: SearchHybrid}
	files, err := d.windowFiles(layout.TableChunks, opt)
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	score := func(q *lexQuery) map[int64]float64 {
		t.Helper()
		ls, err := d.lexicalScores(ctx, opt, files, q, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int64]float64{}
		for _, s := range ls {
			out[s.key] = s.score
		}
		return out
	}
	extra := map[string]float64{"parallel": 0.5, "worker": 0.4, "core": 0.3}
	lq := newLexQuery("faster suite")
	first := score(lq)
	if lq.read == nil {
		t.Fatal("the first pass keeps nothing of what it read")
	}
	second := score(lq.with(extra))
	fresh := score(newLexQuery("faster suite").with(extra))
	if len(second) == 0 || len(second) <= len(first) {
		t.Fatalf("second pass %v, first %v", second, first)
	}
	for k, s := range fresh {
		if got, ok := second[k]; !ok || got-s > 1e-9 || s-got > 1e-9 {
			t.Errorf("chunk %d: %v, scored afresh %v", k, got, s)
		}
	}
	if !slices.Equal(slices.Sorted(maps.Keys(second)), slices.Sorted(maps.Keys(fresh))) {
		t.Errorf("chunks %v, afresh %v", slices.Sorted(maps.Keys(second)), slices.Sorted(maps.Keys(fresh)))
	}
	// The first pass's postings are taken as read, not read again: without
	// them only the added terms' chunks score.
	lq = newLexQuery("faster suite")
	score(lq)
	for i := range lq.read.per {
		lq.read.per[i].postings = nil
	}
	only := score(lq.with(extra))
	want := score(newLexQuery("parallel worker core"))
	if !slices.Equal(slices.Sorted(maps.Keys(only)), slices.Sorted(maps.Keys(want))) {
		t.Errorf("second pass over the added terms only: %v, want the chunks %v", only, want)
	}
}
