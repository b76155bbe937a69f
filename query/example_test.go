package query_test

import (
	"context"
	"fmt"
	"os"

	"github.com/pos-lake/pos/query"
)

// withFixtureDB opens the fixture lake, calls fn with it and prints the
// error of either, so that each example shows only the calls it is about.
func withFixtureDB(fn func(ctx context.Context, db *query.DB) error) {
	ctx := context.Background()
	db, err := query.Open(ctx, fixtureLake)
	if err == nil {
		defer db.Close()
		err = fn(ctx, db)
	}
	if err != nil {
		fmt.Println(err)
	}
}

func ExampleDB_Stats() {
	withFixtureDB(func(ctx context.Context, db *query.DB) error {
		st, err := db.Stats(ctx, query.StatsOptions{By: []string{"day", "model"}, Since: day("2026-03-01")})
		if err != nil {
			return err
		}
		return query.Write(os.Stdout, query.FormatCSV, st.Table().Select("day", "model", "messages", "sessions", "input_tokens", "output_tokens",
			"cache_creation_tokens", "cache_read_tokens", "cost"), query.WriterOptions{})
	})
	// Output:
	// day,model,messages,sessions,input_tokens,output_tokens,cache_creation_tokens,cache_read_tokens,cost
	// 2026-03-01,claude-haiku-4-5,4,1,122,69,10,1150,0.0005945
	// 2026-03-01,claude-opus-4-6,3,1,42,130,100,4100,0.006135
	// 2026-03-02,claude-opus-4-6,1,1,3,4,0,300,0.000265
	// 2026-03-03,claude-opus-4-6,1,1,100,200,50,0,0.0058125
}

func ExampleDB_Recent() {
	withFixtureDB(func(ctx context.Context, db *query.DB) error {
		r, err := db.Recent(ctx, query.RecentOptions{Session: "1111111", N: 2, IncludeTools: true})
		if err != nil {
			return err
		}
		fmt.Println(r.Session.Title)
		for _, t := range r.Turns {
			fmt.Println(t.ExchangeNumber, t.Prompt, "->", t.Response, t.ToolCalls)
		}
		return nil
	})
	// Output:
	// Add a retry to the fetcher
	// 3 Is it done? -> No response requested. []
	// 4 Ship it -> Done: tagged v1.2.0. []
}

func ExampleDB_SQL() {
	withFixtureDB(func(ctx context.Context, db *query.DB) error {
		t, err := db.SQL(ctx, `SELECT title, exchange_count FROM sessions WHERE project = ? ORDER BY first_ts`, "/home/dev/alpha")
		if err != nil {
			return err
		}
		return query.Write(os.Stdout, query.FormatNDJSON, t, query.WriterOptions{})
	})
	// Output:
	// {"title":"What does the fetcher do?","exchange_count":1}
	// {"title":"Add a retry to the fetcher","exchange_count":4}
}
