package query_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
)

// synthSession is a session id for the synthetic transcripts below.
const synthSession = "55555555-5555-4555-8555-555555555555"

var synthTopics = []struct{ subject, file string }{
	{"retry budget of the chat client", "query/retry.go"},
	{"row groups of the Parquet writer", "load/writer.go"},
	{"summaries view of DuckDB", "load/catalog.go"},
	{"Claude Code hook script", "pipelines/hooks/sync.sh"},
	{"schemas of the MCP tools", "mcpserver/tools.go"},
	{"scoring of extractive sentences", "query/extractive.go"},
}

// writeExchanges appends exchanges from..to-1 to a synthetic Claude Code
// transcript: a prompt asking for a change to a file, an answer of words
// sentences with a decision now and then.
func writeExchanges(t *testing.T, root string, from, to, words int) {
	t.Helper()
	dir := filepath.Join(root, "projects", "-home-dev-synth")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, synthSession+".jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base := time.Date(2026, 3, 5, 9, 0, 0, 0, time.UTC)
	parent := "null"
	if from > 0 {
		parent = fmt.Sprintf(`"a%04d"`, from-1)
	}
	for i := from; i < to; i++ {
		ts := base.Add(time.Duration(i) * 10 * time.Minute)
		topic := synthTopics[i%len(synthTopics)]
		prompt := fmt.Sprintf("Step %d: work on the %s in %s and keep the tests green.", i, topic.subject, topic.file)
		var answer strings.Builder
		for j := 0; j < words/12; j++ {
			switch {
			case j == 0 && i%3 == 0:
				fmt.Fprintf(&answer, "We decided to keep the %s in %s instead of splitting it because the callers share one configuration. ", topic.subject, topic.file)
			case j == 1:
				fmt.Fprintf(&answer, "Fixed the flaky test of the %s: the root cause was a shared temporary directory. ", topic.subject)
			case j == 2:
				fmt.Fprintf(&answer, "The %s now handles batch %d without extra allocations. ", topic.subject, i)
			default:
				fmt.Fprintf(&answer, "Let me check the %s once more for step %d part %d. ", topic.subject, i, j)
			}
		}
		fmt.Fprintf(f, `{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":"/home/dev/synth","sessionId":"%s","version":"2.1.39","gitBranch":"main","uuid":"u%04d","timestamp":"%s","type":"user","message":{"role":"user","content":%q}}`+"\n",
			parent, synthSession, i, ts.Format(time.RFC3339), prompt)
		fmt.Fprintf(f, `{"parentUuid":"u%04d","isSidechain":false,"userType":"external","cwd":"/home/dev/synth","sessionId":"%s","version":"2.1.39","gitBranch":"main","uuid":"a%04d","timestamp":"%s","type":"assistant","message":{"id":"msg_%04d","type":"message","role":"assistant","model":"claude-opus-4-6","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"requestId":"req_%04d"}`+"\n",
			i, synthSession, i, ts.Add(time.Minute).Format(time.RFC3339), i, strings.TrimSpace(answer.String()), i)
		parent = fmt.Sprintf(`"a%04d"`, i)
	}
}

// synthLake builds a lake of one synthetic session of n exchanges; it
// returns the lake and the transcripts' root (to grow the session).
func synthLake(t *testing.T, n, words int) (lake, root string) {
	t.Helper()
	dir := t.TempDir()
	root, lake = filepath.Join(dir, "claude"), filepath.Join(dir, "lake")
	writeExchanges(t, root, 0, n, words)
	if err := querytest.Build(context.Background(), root, lake); err != nil {
		t.Fatal(err)
	}
	return lake, root
}

func openLake(t *testing.T, lake string) *query.DB {
	t.Helper()
	return openDB(t, lake, query.LazyViews())
}

func TestSummarizeExtractive(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	s, err := db.Summarize(ctx, query.SummarizeOptions{Session: sessA, NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Strategy != query.StrategyExtractive || s.Model != "" || s.Calls != 0 {
		t.Fatalf("strategy %q model %q calls %d", s.Strategy, s.Model, s.Calls)
	}
	if s.SessionID != sessA || s.LastMessageID == "" || s.Exchanges == 0 || s.Stored || s.Reused {
		t.Fatalf("summary: %+v", s)
	}
	if !strings.Contains(s.Text, "exchange") || !strings.Contains(s.Text, "\n- #") {
		t.Fatalf("text:\n%s", s.Text)
	}
	again, err := db.Summarize(ctx, query.SummarizeOptions{Session: sessA[:8], NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.Text != s.Text {
		t.Fatalf("not deterministic:\n%s\n---\n%s", s.Text, again.Text)
	}
	md := s.Markdown()
	if !strings.HasPrefix(md, "# Summary: ") || !strings.Contains(md, "Strategy extractive") {
		t.Fatalf("markdown:\n%s", md)
	}
}

func TestSummarizeExtractivePicks(t *testing.T) {
	lake, _ := synthLake(t, 6, 60)
	db := openLake(t, lake)
	s, err := db.Summarize(context.Background(), query.SummarizeOptions{Sentences: 4, NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", s.Text)
	lines := strings.Split(s.Text, "\n")
	if !strings.HasPrefix(lines[0], "6 exchanges from 2026-03-05 09:00 to 09:51 UTC") {
		t.Fatalf("facts line: %q", lines[0])
	}
	var bullets []string
	for _, l := range lines {
		if strings.HasPrefix(l, "- ") {
			bullets = append(bullets, l)
		}
	}
	if len(bullets) != 4 {
		t.Fatalf("%d sentences, want 4", len(bullets))
	}
	text := strings.Join(bullets, "\n")
	// The goal (the first prompt) and a decision are in; the agent's
	// narration ("Let me check …") is not.
	if !strings.Contains(bullets[0], "#1 user: Step 0:") {
		t.Errorf("the first prompt is not first: %q", bullets[0])
	}
	if !strings.Contains(text, "We decided to keep the") {
		t.Errorf("no decision picked")
	}
	if strings.Contains(text, "Let me check") {
		t.Errorf("narration picked")
	}
}

func TestSummaryStoredReusedAndRenewed(t *testing.T) {
	ctx := context.Background()
	lake, root := synthLake(t, 4, 36)
	db := openLake(t, lake)
	first, err := db.Summarize(ctx, query.SummarizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if first.Reused || !first.Stored {
		t.Fatalf("first call: reused %v stored %v notes %v", first.Reused, first.Stored, first.Notes)
	}
	second, err := db.Summarize(ctx, query.SummarizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Reused || second.Text != first.Text || second.LastMessageID != first.LastMessageID {
		t.Fatalf("second call not reused: %+v", second)
	}
	// Another process (a fresh DB) reuses it too.
	if s, err := openLake(t, lake).Summarize(ctx, query.SummarizeOptions{}); err != nil || !s.Reused {
		t.Fatalf("fresh reader: reused %v, %v", s != nil && s.Reused, err)
	}
	// Other parameters are another summary.
	if s, err := db.Summarize(ctx, query.SummarizeOptions{Sentences: 3}); err != nil || s.Reused {
		t.Fatalf("other sentences: reused %v, %v", s != nil && s.Reused, err)
	}
	// --refresh makes a new one.
	if s, err := db.Summarize(ctx, query.SummarizeOptions{Refresh: true}); err != nil || s.Reused || !s.Stored {
		t.Fatalf("refresh: %+v, %v", s, err)
	}

	// The session grows: a new summary of its new state.
	writeExchanges(t, root, 4, 6, 36)
	if err := querytest.Build(ctx, root, lake); err != nil {
		t.Fatal(err)
	}
	db2 := openLake(t, lake)
	grown, err := db2.Summarize(ctx, query.SummarizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if grown.Reused || grown.LastMessageID == first.LastMessageID || grown.Exchanges != 6 {
		t.Fatalf("grown session: reused %v last %s exchanges %d", grown.Reused, grown.LastMessageID, grown.Exchanges)
	}
	tab, err := db2.SQL(ctx, `SELECT count(*) AS n, count(DISTINCT last_message_id) AS states FROM summaries`)
	if err != nil {
		t.Fatal(err)
	}
	if n, states := tab.Rows[0][0], tab.Rows[0][1]; n != int64(3) || states != int64(2) {
		t.Fatalf("summaries rows %v, states %v; want 3 and 2", n, states)
	}
}

func TestSummarizeArgs(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	for _, tc := range []struct {
		opt  query.SummarizeOptions
		want string
	}{
		{query.SummarizeOptions{Strategy: "bogus"}, `unknown strategy "bogus"`},
		{query.SummarizeOptions{Strategy: "abstractive"}, "needs an LLM"},
		{query.SummarizeOptions{Strategy: "map-reduce", LLM: query.LLMOptions{BaseURL: "http://127.0.0.1:1"}}, "needs an LLM"},
		{query.SummarizeOptions{Session: "nope"}, `no session has an id starting with "nope"`},
		{query.SummarizeOptions{ChunkTokens: 10}, "too small"},
	} {
		_, err := db.Summarize(ctx, tc.opt)
		var ae *query.ArgError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an ArgError with %q", tc.opt, err, tc.want)
		}
	}
	// auto without an LLM is extractive, and says why.
	s, err := db.Summarize(ctx, query.SummarizeOptions{Session: sessB, Strategy: "auto", NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Strategy != query.StrategyExtractive || s.Requested != query.StrategyAuto || len(s.Notes) == 0 {
		t.Fatalf("auto: %+v", s)
	}
}
