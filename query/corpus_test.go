package query_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
)

// corpusRoot is the real Claude Code corpus shared by the project.
// $POS_CORPUS points elsewhere.
var corpusRoot = func() string {
	if d := os.Getenv("POS_CORPUS"); d != "" {
		return filepath.Join(d, "claude")
	}
	return filepath.Join("..", "..", "shared", "corpus", "claude")
}()

// independentStats computes tokens per UTC day and model straight from the
// transcripts, without pos: an assistant message is the group of lines
// sharing message.id and requestId; its usage is that of its line with the
// most output tokens (the last one: usage grows as the message streams) and
// its day that of its first line.
const independentStats = `
WITH lines AS (
  SELECT "timestamp" AS ts, requestId AS request_id, message.id AS mid, message.model AS model,
    message.usage.input_tokens AS input_tokens, message.usage.output_tokens AS output_tokens,
    message.usage.cache_creation_input_tokens AS cache_creation_tokens,
    message.usage.cache_read_input_tokens AS cache_read_tokens
  FROM read_json_auto(?, format = 'newline_delimited', union_by_name = true, sample_size = -1)
  WHERE type = 'assistant'
), msgs AS (
  SELECT min(ts) AS first_ts,
    arg_max(model, output_tokens) AS model,
    arg_max(input_tokens, output_tokens) AS input_tokens,
    max(output_tokens) AS output_tokens,
    arg_max(cache_creation_tokens, output_tokens) AS cache_creation_tokens,
    arg_max(cache_read_tokens, output_tokens) AS cache_read_tokens
  FROM lines
  GROUP BY mid, request_id
)
SELECT strftime(CAST(first_ts AS DATE), '%Y-%m-%d') AS day, coalesce(model, '') AS model, count(*) AS messages,
  CAST(sum(coalesce(input_tokens, 0)) AS BIGINT) AS input_tokens,
  CAST(sum(coalesce(output_tokens, 0)) AS BIGINT) AS output_tokens,
  CAST(sum(coalesce(cache_creation_tokens, 0)) AS BIGINT) AS cache_creation_tokens,
  CAST(sum(coalesce(cache_read_tokens, 0)) AS BIGINT) AS cache_read_tokens
FROM msgs
WHERE coalesce(model, '') <> '<synthetic>'
GROUP BY 1, 2
ORDER BY 1, 2`

func corpusLake(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(corpusRoot); err != nil {
		t.Skipf("skipped: the real corpus is not at %s (the comparison with the original transcripts needs it)", corpusRoot)
	}
	lake := filepath.Join(t.TempDir(), "lake")
	start := time.Now()
	if err := querytest.Build(context.Background(), corpusRoot, lake); err != nil {
		t.Fatal(err)
	}
	t.Logf("corpus lake built in %v", time.Since(start).Round(time.Millisecond))
	return lake
}

// TestCorpusStats checks Stats --by day,model on the real corpus against
// DuckDB's own reading of the original JSONL files.
func TestCorpusStats(t *testing.T) {
	lake := corpusLake(t)
	ctx := context.Background()
	db, err := query.Open(ctx, lake)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Stats(ctx, query.StatsOptions{By: []string{"day", "model"}})
	if err != nil {
		t.Fatal(err)
	}
	glob, _ := filepath.Abs(filepath.Join(corpusRoot, "**", "*.jsonl"))
	want, err := db.SQL(ctx, independentStats, glob)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Rows) < 3 {
		t.Fatalf("the independent computation found only %d groups", len(want.Rows))
	}
	gotRows := got.Table().Select("day", "model", "messages", "input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens").Rows
	if !reflect.DeepEqual(gotRows, want.Rows) {
		t.Errorf("Stats --by day,model differs from the transcripts:\n got %v\nwant %v", gotRows, want.Rows)
	}
	var msgs int64
	for _, r := range got.Rows {
		msgs += r.Messages
	}
	t.Logf("%d day×model groups, %d assistant messages agree with the transcripts", len(got.Rows), msgs)
}

// TestCorpusLatency times every lookup on the corpus lake and checks that
// a --since filter makes DuckDB read fewer files.
func TestCorpusLatency(t *testing.T) {
	lake := corpusLake(t)
	ctx := context.Background()
	start := time.Now()
	db, err := query.Open(ctx, lake)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t.Logf("Open: %v", time.Since(start).Round(time.Microsecond))
	since := day("2026-02-12")
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"sessions", func() error { _, err := db.Sessions(ctx, query.SessionFilter{Limit: 20}); return err }},
		{"recent", func() error { _, err := db.Recent(ctx, query.RecentOptions{}); return err }},
		{"recent --tools", func() error { _, err := db.Recent(ctx, query.RecentOptions{IncludeTools: true}); return err }},
		{"timeline", func() error { _, err := db.Timeline(ctx, query.TimelineOptions{Limit: 50}); return err }},
		{"timeline --since", func() error { _, err := db.Timeline(ctx, query.TimelineOptions{Since: since}); return err }},
		{"stats --by day,model", func() error {
			_, err := db.Stats(ctx, query.StatsOptions{By: []string{"day", "model"}})
			return err
		}},
		{"stats --by day,model --since", func() error {
			_, err := db.Stats(ctx, query.StatsOptions{By: []string{"day", "model"}, Since: since})
			return err
		}},
		{"sql count(*) messages", func() error { _, err := db.SQL(ctx, "SELECT count(*) FROM messages"); return err }},
	} {
		if err := tc.run(); err != nil { // warm the page cache
			t.Fatalf("%s: %v", tc.name, err)
		}
		const runs = 5
		best := time.Duration(1 << 62)
		for range runs {
			start := time.Now()
			if err := tc.run(); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		t.Logf("%-30s best of %d: %v", tc.name, runs, best.Round(time.Microsecond))
	}
	all := explainFiles(t, db, query.StatsSQL(query.StatsOptions{By: []string{"day"}}))
	q, args := query.StatsSQLArgs(query.StatsOptions{By: []string{"day"}, Since: since})
	pruned := explainFiles(t, db, q, args...)
	t.Logf("stats: files read without a window %d, with --since %s %d", all, since.Format(time.DateOnly), pruned)
	if pruned >= all || pruned == 0 {
		t.Errorf("--since did not prune: %d files of %d", pruned, all)
	}
	q, args = query.TimelineSQLArgs(query.TimelineOptions{}, "")
	tlAll := explainFiles(t, db, q, args...)
	q, args = query.TimelineSQLArgs(query.TimelineOptions{Since: since}, "")
	t.Logf("timeline: files read without a window %d, with --since %d", tlAll, explainFiles(t, db, q, args...))
}
