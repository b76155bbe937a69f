package query_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/schema"
)

// What Search shows of its hits besides their chunks — the sessions'
// titles and projects, the exchanges reports, summaries and tool chunks
// belong to, the prompts, failures and fixes — is read in Go from the
// session cache, the exchanges and messages files and the sidecars, and is
// what DuckDB reads from the views: the same results, in every mode,
// grouped or not.
func TestSearchDescribeInGoSameAsSQL(t *testing.T) {
	opts := []query.SearchOptions{
		{Query: "undefined frobnicateWidget"},
		{Query: "undefined frobnicateWidget", Mode: query.SearchLexical, Types: []string{schema.ContentToolError}},
		{Query: "config token rejected", Mode: query.SearchLexical},
		{Query: "widget colours", K: 20},
		{Query: "widget shop", Mode: query.SearchLexical, GroupBy: "session"},
		{Query: "fetcher retry tests", K: 20},
		{Query: "build make binary", Mode: query.SearchVector, K: 20},
		{Query: "callers of Get main.go", GroupBy: "session"},
	}
	for _, lake := range []string{rankLake(t), searchLake(t)} {
		results := func(sql bool) (string, [4]int) {
			db := openDB(t, lake, query.LazyViews())
			if sql {
				query.DescribeWithSQL(db)
			}
			var out []byte
			var n [4]int // hits with a title, an exchange, a prompt, an error
			for _, o := range opts {
				res := search(t, db, o)
				res.Timing = query.SearchTiming{}
				hits := res.Hits
				for _, s := range res.Sessions {
					hits = append(hits, s.Best...)
				}
				for _, h := range hits {
					for i, set := range []bool{h.Title != "", h.ExchangeID != "", h.Prompt != "", h.Error != nil} {
						if set {
							n[i]++
						}
					}
				}
				js, err := json.MarshalIndent(res, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, js...)
			}
			return string(out), n
		}
		want, n := results(true)
		if n[0] == 0 || n[1] == 0 || n[2] == 0 {
			t.Fatalf("%s: hits with titles, exchanges, prompts, errors: %v", lake, n)
		}
		if got, _ := results(false); got != want {
			t.Errorf("%s: read in Go:\n%s\nwith DuckDB:\n%s", lake, got, want)
		}
	}
}

// A search that needs no expansion opens no DuckDB database once the
// session cache is current: the chunks, titles, exchanges and stories are
// all read in Go.
func TestSearchOpensNoDuckDB(t *testing.T) {
	ctx := context.Background()
	lake := rankLake(t)
	first, err := query.Open(ctx, lake, query.LazyViews())
	if err != nil {
		t.Fatal(err)
	}
	search(t, first, query.SearchOptions{Query: "widget", Mode: query.SearchLexical}) // brings the session cache up to date
	first.Close()
	db := openDB(t, lake, query.LazyViews())
	for _, mode := range query.SearchModes {
		res := search(t, db, query.SearchOptions{Query: "undefined frobnicateWidget", Mode: mode, NoExpand: true})
		if len(res.Hits) == 0 || res.Hits[0].Title == "" || res.Hits[0].Prompt == "" || res.Hits[0].Error == nil || len(res.Hits[0].Fix) == 0 {
			t.Fatalf("%s: %+v", mode, res.Hits)
		}
	}
	if query.DuckDBOpened(db) {
		t.Error("the searches opened DuckDB")
	}
}
