package query_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
)

// A DB kept open between searches (pos-mcp's) finds what a load added
// since its last search, in every mode, and no longer finds what it
// replaced.
func TestSearchSeesLaterLoads(t *testing.T) {
	lake := searchLake(t)
	db := openDB(t, lake)
	const q = "zeppelin hangar mooring"
	for _, mode := range query.SearchModes {
		if got := search(t, db, query.SearchOptions{Query: q, Mode: mode}).Hits; len(got) > 0 && got[0].SessionID == "later" {
			t.Fatalf("%s: found before it was loaded: %+v", mode, got[0])
		}
	}
	c := schema.New(schema.KindChunk)
	c.ID, c.Platform, c.SessionID, c.ParentID = "later-chunk", "claude_code", "later", "later-exchange"
	c.TS = querytest.Now.AddDate(0, 0, 30) // a partition of its own
	c.ContentType, c.Text = schema.ContentExchange, "The zeppelin left its hangar; the mooring mast held."
	c.Chunk = &schema.Chunk{Model: embed.HashModel, Dim: embed.DefaultDim, Embedding: embed.NewHash(0).Vector(c.Text)}
	later := func() time.Time { return querytest.Now.Add(time.Hour) }
	if _, err := load.Load(context.Background(), bytes.NewReader(append(schema.AppendRecord(nil, c), '\n')),
		load.Options{Lake: lake, Now: later, NoCatalog: true}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range query.SearchModes {
		got := search(t, db, query.SearchOptions{Query: q, Mode: mode}).Hits
		if len(got) == 0 || got[0].ChunkID != "later-chunk" {
			t.Errorf("%s: the chunk loaded since the last search is not found: %+v", mode, got)
		}
	}
}
