package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/cmd/internal/clitest"
	"github.com/pos-lake/pos/internal/testlake"
	"github.com/pos-lake/pos/query/querytest"
)

// embeddedLake builds a lake with vectors from the fixture.
func embeddedLake(t *testing.T) string {
	t.Helper()
	lake := filepath.Join(t.TempDir(), "lake")
	if err := testlake.Embedded(context.Background(), querytest.Fixture(), lake, false); err != nil {
		t.Fatal(err)
	}
	return lake
}

func TestSearchCLI(t *testing.T) {
	elake := embeddedLake(t)
	const a = "11111111-1111-4111-8111-111111111111"
	for _, tc := range []clitest.Case{
		{Name: "table", Args: []string{"search", "retry with exponential backoff", "--lake", elake, "-f", "table", "--width", "160", "-k", "2"},
			Stdout: `^0\.[5-9][0-9] +[0-9-]{10} [0-9:]{5} \([0-9a-z ]+ ago\) +(exchange|user_prompt) +` + a + `  Add a retry to the fetcher\n(    [^\n]+\n)*    [^\n]*\*\*exponential\*\*[^\n]*\n(    [^\n]+\n)*(\n0\.[0-9]+ .*\n(    [^\n]+\n)+)?$`}, // a second block only if it matches: noise is below the minimum similarity
		{Name: "unquoted words", Args: []string{"search", "--lake", elake, "-f", "csv", "-k", "1", "exponential", "backoff"},
			Stdout: `^rank,score,ts,content_type,platform,session_id,title,project,snippet,exchange_id,.*\n1,0\.[5-9][0-9]*,2026-03-01T10:00:00Z,[a-z_]+,claude_code,` + a},
		{Name: "lexical ndjson", Args: []string{"search", "fetcher", "--lake", elake, "--mode", "lexical", "--project", "alpha"},
			Stdout: `^\{"rank":1,"score":[0-9.]+,"ts":"[^"]+","content_type":"[a-z_]+","platform":"claude_code","session_id":"1111`},
		{Name: "group by session", Args: []string{"search", "fetcher retry tests", "--lake", elake, "--group-by", "session", "-f", "table", "--width", "160"},
			Stdout: `^[0-9]\.[0-9]{2}  [0-9]+ hits? +[0-9-]{10} [0-9:]{5} \([0-9a-z ]+ ago\) +` + a + `  Add a retry to the fetcher\n    [^\n]*\*\*`},
		{Name: "session prefix", Args: []string{"search", "fetcher", "--lake", elake, "--session", "11112222", "-f", "csv"},
			Stdout: `^rank,.*\n(1,[^\n]*11112222-3333-4444-8555-666666666666[^\n]*\n)+$`},
		{Name: "type filter", Args: []string{"search", "callers of Get", "--lake", elake, "--type", "report", "-f", "csv"},
			Stdout: `^rank,.*\n1,[^,]+,[^,]+,subagent_summary,`},
		{Name: "no expansion", Args: []string{"search", "fetcher retry", "--lake", elake, "--no-expand", "-f", "csv", "-k", "1"},
			Stdout: `^rank,.*\n1,[^\n]*\n$`},
		{Name: "no match", Args: []string{"search", "kubernetes", "--lake", elake, "--mode", "lexical", "-f", "table"},
			Stdout: `^$`, Stderr: `pos-query: no match for "kubernetes"`},
		{Name: "no query", Args: []string{"search", "--lake", elake}, Code: 2,
			Stderr: `^pos-query: no query given\npos-query: hint: see 'pos-query search --help'\n$`},
		{Name: "bad type", Args: []string{"search", "x", "--lake", elake, "--type", "tweet"}, Code: 2,
			Stderr: `--type: unknown content type "tweet"`},
		{Name: "bad mode", Args: []string{"search", "x", "--lake", elake, "--mode", "fuzzy"}, Code: 2,
			Stderr: `unknown mode "fuzzy"`},
		{Name: "bad grouping", Args: []string{"search", "x", "--lake", elake, "--group-by", "project"}, Code: 2,
			Stderr: `--group-by: only session`},
		{Name: "nonsense under the minimum", Args: []string{"search", "xqzvw blorft", "--lake", elake, "--mode", "vector", "-f", "csv"},
			Stdout: `^rank,[^\n]*\n$`},
		{Name: "no minimum", Args: []string{"search", "xqzvw blorft", "--lake", elake, "--mode", "vector", "-f", "csv", "--min-similarity", "-1", "-k", "1"},
			Stdout: `^rank,.*\n1,`},
		{Name: "a higher minimum", Args: []string{"search", "retry with exponential backoff", "--lake", elake, "--mode", "vector", "-f", "csv", "--min-similarity", "0.99"},
			Stdout: `^rank,[^\n]*\n$`},
		{Name: "bad minimum", Args: []string{"search", "x", "--lake", elake, "--min-similarity", "1.5"}, Code: 2,
			Stderr: `--min-similarity must be in \(0, 1\]`},
		{Name: "lake without chunks", Args: []string{"search", "fetcher", "--lake", lake}, Code: 2,
			Stderr: `pos-embed`},
	} {
		t.Run(tc.Name, func(t *testing.T) { tc.Check(t, newApp()) })
	}
	// The JSON of a hit carries what an agent needs to follow up.
	_, stdout, _ := run("", "search", "retry with exponential backoff", "--lake", elake, "-f", "json", "-k", "1")
	var hits []map[string]any
	if err := json.Unmarshal([]byte(stdout), &hits); err != nil || len(hits) != 1 {
		t.Fatal(stdout, err)
	}
	for _, k := range []string{"exchange_id", "chunk_id", "parent_id", "vector_rank", "lexical_rank", "snippet", "title"} {
		if v, ok := hits[0][k]; !ok || v == "" || v == nil {
			t.Errorf("%s missing: %v", k, hits[0])
		}
	}
	if !strings.Contains(hits[0]["snippet"].(string), "**") {
		t.Errorf("no highlight: %v", hits[0]["snippet"])
	}
}
