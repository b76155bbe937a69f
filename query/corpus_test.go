package query_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
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
	db := openDB(t, lake)
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
	db := openDB(t, lake)
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

// posQuery builds the real pos-query binary once per test and returns a
// function that runs it and decodes its JSON output into v.
func posQuery(t *testing.T) func(v any, args ...string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pos-query")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/pos-query").CombinedOutput(); err != nil {
		t.Fatalf("go build pos-query: %v\n%s", err, out)
	}
	return func(v any, args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pos-query %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("pos-query %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// editedBy reads the transcripts under root without pos and returns the
// sessions whose Edit, MultiEdit or Write tool calls name a file whose path
// ends in suffix.
func editedBy(t *testing.T, root, suffix string) []string {
	t.Helper()
	var ids []string
	err := querytest.EachTranscript(root, func(path string, f io.Reader) error {
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for n := 1; sc.Scan(); n++ {
			if !strings.Contains(sc.Text(), suffix) {
				continue
			}
			var l struct {
				SessionID string `json:"sessionId"`
				Message   struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			var blocks []struct {
				Type  string `json:"type"`
				Name  string `json:"name"`
				Input struct {
					FilePath string `json:"file_path"`
				} `json:"input"`
			}
			if json.Unmarshal(l.Message.Content, &blocks) != nil {
				continue // string content: no tool calls
			}
			for _, b := range blocks {
				if b.Type == "tool_use" && slices.Contains([]string{"Edit", "MultiEdit", "Write"}, b.Name) &&
					strings.HasSuffix(b.Input.FilePath, suffix) && !slices.Contains(ids, l.SessionID) {
					ids = append(ids, l.SessionID)
				}
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// TestCorpusFilesAndDecisions is issue 4's acceptance on the real corpus:
// pos-query files, given a path corpus sessions edited, returns those
// sessions; pos-query decisions lists a decision a real session stated,
// with its confidence.
func TestCorpusFilesAndDecisions(t *testing.T) {
	lake := corpusLake(t)
	run := posQuery(t)

	// Two spotter sessions, in two worktrees, edited the transcript
	// renderer: 258c7280 (Edit) and 4d5611e5 (Edit, Write).
	const path = "lib/spotter/services/transcript_renderer.ex"
	want := editedBy(t, corpusRoot, path)
	if !reflect.DeepEqual(want, []string{"258c7280-ae70-4798-800f-63464d01a85d", "4d5611e5-241a-462a-8d15-5122611a9569"}) {
		t.Fatalf("the transcripts' own edits of %s: %v", path, want)
	}
	var files []query.FileSession
	run(&files, "files", "--lake", lake, "--format", "json", path)
	var got []string
	for _, f := range files {
		got = append(got, f.SessionID)
		if !strings.Contains(f.Actions, "edit") || len(f.Paths) == 0 || !strings.HasSuffix(f.Paths[0], path) {
			t.Errorf("session %s: actions %q, paths %q", f.SessionID, f.Actions, f.Paths)
		}
	}
	slices.Sort(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pos-query files %s: sessions %v, want the sessions that edited it %v", path, got, want)
	}

	// A candidate decision (0.5 to 0.8) the assistant stated in 258c7280.
	const sentence = "Expected — I'll use that alias in the next edits."
	raw, err := os.ReadFile(filepath.Join(corpusRoot, "spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), sentence) {
		t.Fatalf("the transcript does not hold %q", sentence)
	}
	var ds []query.Decision
	run(&ds, "decisions", "--lake", lake, "--format", "json", "--min-confidence", "0.5", "--limit", "1000")
	i := slices.IndexFunc(ds, func(d query.Decision) bool { return d.Text == sentence })
	if i < 0 {
		t.Fatalf("pos-query decisions --min-confidence 0.5 lacks %q among %d", sentence, len(ds))
	}
	if d := ds[i]; d.SessionID != "258c7280-ae70-4798-800f-63464d01a85d" || d.Confidence != 0.6 || d.Status != "candidate" ||
		!reflect.DeepEqual(d.Patterns, []string{"will_use"}) || d.Context != "Implement spotter-gqc" {
		t.Errorf("decision %+v", d)
	}
	sure := 0
	for _, d := range ds {
		if d.Confidence < 0.5 || (d.Status == "decision") != (d.Confidence >= 0.8) {
			t.Errorf("confidence %.2f with status %q: %q", d.Confidence, d.Status, d.Text)
		}
		if d.Confidence >= 0.8 {
			sure++
		}
	}
	// Without --min-confidence only decisions (0.8 or more) are listed.
	var def []query.Decision
	run(&def, "decisions", "--lake", lake, "--format", "json", "--limit", "1000")
	if len(def) != sure {
		t.Errorf("pos-query decisions lists %d, want the %d at 0.8 or more", len(def), sure)
	}
	t.Logf("files %s: %d sessions; decisions: %d at 0.5 or more, %d at 0.8 or more", path, len(files), len(ds), sure)
}
