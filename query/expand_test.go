package query_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
)

// expansionLake is the fixture lake with two more exchanges: one that
// answers "why was the suite slow" in the question's words, and one that
// says what was done about it in other words only, which pseudo-relevance
// feedback finds through the first.
func expansionLake(t *testing.T) string {
	t.Helper()
	lake := searchLake(t)
	var buf bytes.Buffer
	for i, x := range []struct{ parent, text string }{
		{"ex-slow", "The integration suite was slow: every package waited for the previous one. " +
			"We run the workers concurrently now, gomaxprocs eight, with a sharded scheduler."},
		{"ex-workers", "Enabled the sharded scheduler and concurrently running workers (gomaxprocs eight) for the nightly jobs too."},
	} {
		c := schema.New(schema.KindChunk)
		c.ID, c.Platform, c.SessionID, c.ParentID = "chunk-"+x.parent, "claude", "sess-"+x.parent, x.parent
		c.TS = querytest.Now.Add(-time.Duration(i+1) * time.Hour)
		c.ContentType, c.Text = schema.ContentExchange, x.text
		c.Chunk = &schema.Chunk{Model: embed.HashModel, Dim: embed.DefaultDim, Embedding: embed.NewHash(0).Vector(c.Text)}
		buf = *bytes.NewBuffer(append(append(buf.Bytes(), schema.AppendRecord(nil, c)...), '\n'))
	}
	if _, err := load.Load(context.Background(), &buf, load.Options{Lake: lake, Now: func() time.Time { return querytest.Now }, NoCatalog: true}); err != nil {
		t.Fatal(err)
	}
	return lake
}

func parents(hits []query.SearchHit) []string {
	return stringsOf(hits, func(h query.SearchHit) string { return h.ParentID })
}

// TestSearchExpansion: the hybrid mode finds, by feedback from the first
// pass, a unit that has none of the query's words; with NoExpand it does
// not, and the lexical and vector modes do not expand.
func TestSearchExpansion(t *testing.T) {
	db := openDB(t, expansionLake(t))
	const q = "why was the suite slow"
	got := search(t, db, query.SearchOptions{Query: q})
	if ps := parents(got.Hits); len(ps) == 0 || ps[0] != "ex-slow" || !slices.Contains(ps, "ex-workers") {
		t.Errorf("hybrid: the exchange in other words is not found: %v", ps)
	}
	for _, o := range []query.SearchOptions{
		{Query: q, NoExpand: true},
		{Query: q, Mode: query.SearchLexical},
		{Query: q, Mode: query.SearchVector},
		{Query: `"suite was slow"`}, // a phrase asks for exactly its words
		{Query: `why was the suite slow*`},
	} {
		if ps := parents(search(t, db, o).Hits); len(ps) == 0 || ps[0] != "ex-slow" || slices.Contains(ps, "ex-workers") {
			t.Errorf("%+v: expanded: %v", o, ps)
		}
	}
}
