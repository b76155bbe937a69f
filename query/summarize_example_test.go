package query_test

import (
	"context"
	"fmt"

	"github.com/pos-lake/pos/query"
)

func ExampleDB_Summarize() {
	withFixtureDB(func(ctx context.Context, db *query.DB) error {
		// Extractive (the default) needs no model; NoStore leaves the lake
		// as it is.
		s, err := db.Summarize(ctx, query.SummarizeOptions{Session: "11111111", Sentences: 3, NoStore: true})
		if err != nil {
			return err
		}
		fmt.Println(s.Strategy, s.Exchanges, "exchanges, up to message", s.LastMessageID)
		fmt.Println(s.Text)
		return nil
	})
	// Output:
	// extractive 4 exchanges, up to message 32905407d64e64fe2df6b7e0f572142b
	// 4 exchanges from 2026-03-01 10:00 to 2026-03-02 09:00 UTC; 1 subagent report; tools most used: Read (1), Task (1), Bash (1); files most touched: fetch.go (1).
	//
	// - #1 user: Add a retry to the fetcher
	// - #1 agent: Added retry with exponential backoff to Get.
	// - #2 agent: The test fails; fixing the timeout.
}
