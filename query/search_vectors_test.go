package query_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pos-lake/pos/query"
)

// A vector scan that rules rows out on their sign codes finds what scoring
// every row exactly finds: the same hits with the same scores, on the real
// sessions of every platform, for questions and for passages of the
// sessions themselves (whose best match scores far above the rest, as a
// pasted error's does). And it rules most rows out.
func TestSignCodesScanFindsTheExactBest(t *testing.T) {
	lake, _ := embeddedCorpusLake(t)
	ctx := context.Background()
	db := openDB(t, lake)
	queries := []string{
		"fix the failing test", "how did we make the slow suite faster",
		"permission denied when pushing to the remote", "why does the build fail on windows",
		"database migration rollback", "where is the config file read",
		"почему падает сборка", "refactor the parser into smaller functions",
	}
	tbl, err := db.SQL(ctx, `SELECT text FROM chunks WHERE length(text) > 80 ORDER BY hash(chunk_key) LIMIT 40`)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tbl.Rows {
		w := strings.Fields(r[0].(string))
		queries = append(queries, strings.Join(w[:min(len(w), 12)], " "))
	}
	minSim := 0.0 // the model's
	run := func(q string, exact bool) (string, query.SearchTiming) {
		query.ScanExactly(db, exact)
		res, err := db.Search(ctx, query.SearchOptions{Query: q, Mode: query.SearchVector, K: 30, Depth: 200, Embed: hashEmbedder, MinSimilarity: minSim})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, h := range res.Hits {
			fmt.Fprintf(&b, "%s %.6f\n", h.ChunkID, h.Score)
		}
		return b.String(), res.Timing
	}
	// Every row counts (no least similarity): the 200th best is among the
	// bulk of the rows, whose estimates are the closest to it.
	minSim = -1
	for _, q := range queries {
		want, _ := run(q, true)
		if got, _ := run(q, false); got != want {
			t.Errorf("%q, every row: with sign codes\n%s\nscoring every row\n%s", q, got, want)
		}
	}
	minSim = 0
	rows, exact := 0, 0
	for _, q := range queries {
		want, all := run(q, true)
		got, tm := run(q, false)
		if got != want {
			t.Errorf("%q: with sign codes\n%s\nscoring every row\n%s", q, got, want)
		}
		if all.VectorExact != all.VectorRows || all.VectorRows == 0 {
			t.Fatalf("%q: the exact scan scored %d of %d rows", q, all.VectorExact, all.VectorRows)
		}
		if tm.VectorRows != all.VectorRows {
			t.Errorf("%q: %d rows compared, %d by the exact scan", q, tm.VectorRows, all.VectorRows)
		}
		rows, exact = rows+tm.VectorRows, exact+tm.VectorExact
	}
	t.Logf("%d queries: %d of %d rows scored exactly (%.1f%%)", len(queries), exact, rows, 100*float64(exact)/float64(rows))
	if exact*2 > rows {
		t.Errorf("%d of %d rows scored exactly: the sign codes ruled few out", exact, rows)
	}
}
