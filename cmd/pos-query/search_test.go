package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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

// cliCase is a run of pos-query over a lake with vectors and what it must
// print; an empty stdout or stderr accepts anything.
type cliCase struct {
	name   string
	args   []string
	code   int
	stdout string // regexp
	stderr string // regexp
}

func (tc cliCase) check(t *testing.T) {
	code, stdout, stderr := run("", tc.args...)
	if code != tc.code {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
	}
	if !regexp.MustCompile(tc.stdout).MatchString(stdout) {
		t.Errorf("stdout %q does not match %q", stdout, tc.stdout)
	}
	if !regexp.MustCompile(tc.stderr).MatchString(stderr) {
		t.Errorf("stderr %q does not match %q", stderr, tc.stderr)
	}
}

func TestSearchCLI(t *testing.T) {
	elake := embeddedLake(t)
	const a = "11111111-1111-4111-8111-111111111111"
	for _, tc := range []cliCase{
		{name: "table", args: []string{"search", "retry with exponential backoff", "--lake", elake, "-f", "table", "--width", "160", "-k", "2"},
			stdout: `^0\.[5-9][0-9] +[0-9a-z ]+ ago +(exchange|user_prompt) +` + a + `  Add a retry to the fetcher\n(    [^\n]+\n)*    [^\n]*\*\*exponential\*\*[^\n]*\n(    [^\n]+\n)*(\n0\.[0-9]+ .*\n(    [^\n]+\n)+)?$`}, // a second block only if it matches: noise is below the minimum similarity
		{name: "unquoted words", args: []string{"search", "--lake", elake, "-f", "csv", "-k", "1", "exponential", "backoff"},
			stdout: `^rank,score,ts,content_type,platform,session_id,title,project,snippet,exchange_id,.*\n1,0\.[5-9][0-9]*,2026-03-01T10:00:00Z,[a-z_]+,claude_code,` + a},
		{name: "lexical ndjson", args: []string{"search", "fetcher", "--lake", elake, "--mode", "lexical", "--project", "alpha"},
			stdout: `^\{"rank":1,"score":[0-9.]+,"ts":"[^"]+","content_type":"[a-z_]+","platform":"claude_code","session_id":"1111`},
		{name: "group by session", args: []string{"search", "fetcher retry tests", "--lake", elake, "--group-by", "session", "-f", "table", "--width", "160"},
			stdout: `^[0-9]\.[0-9]{2}  [0-9]+ hits? +[0-9a-z ]+ ago +` + a + `  Add a retry to the fetcher\n    [^\n]*\*\*`},
		{name: "session prefix", args: []string{"search", "fetcher", "--lake", elake, "--session", "11112222", "-f", "csv"},
			stdout: `^rank,.*\n(1,[^\n]*11112222-3333-4444-8555-666666666666[^\n]*\n)+$`},
		{name: "type filter", args: []string{"search", "callers of Get", "--lake", elake, "--type", "report", "-f", "csv"},
			stdout: `^rank,.*\n1,[^,]+,[^,]+,subagent_summary,`},
		{name: "no expansion", args: []string{"search", "fetcher retry", "--lake", elake, "--no-expand", "-f", "csv", "-k", "1"},
			stdout: `^rank,.*\n1,[^\n]*\n$`},
		{name: "no match", args: []string{"search", "kubernetes", "--lake", elake, "--mode", "lexical", "-f", "table"},
			stdout: `^$`, stderr: `pos-query: no match for "kubernetes"`},
		{name: "no query", args: []string{"search", "--lake", elake}, code: 2,
			stderr: `^pos-query: no query given\npos-query: hint: see 'pos-query search --help'\n$`},
		{name: "bad type", args: []string{"search", "x", "--lake", elake, "--type", "tweet"}, code: 2,
			stderr: `--type: unknown content type "tweet"`},
		{name: "bad mode", args: []string{"search", "x", "--lake", elake, "--mode", "fuzzy"}, code: 2,
			stderr: `unknown mode "fuzzy"`},
		{name: "bad grouping", args: []string{"search", "x", "--lake", elake, "--group-by", "project"}, code: 2,
			stderr: `--group-by: only session`},
		{name: "nonsense under the minimum", args: []string{"search", "xqzvw blorft", "--lake", elake, "--mode", "vector", "-f", "csv"},
			stdout: `^rank,[^\n]*\n$`},
		{name: "no minimum", args: []string{"search", "xqzvw blorft", "--lake", elake, "--mode", "vector", "-f", "csv", "--min-similarity", "-1", "-k", "1"},
			stdout: `^rank,.*\n1,`},
		{name: "a higher minimum", args: []string{"search", "retry with exponential backoff", "--lake", elake, "--mode", "vector", "-f", "csv", "--min-similarity", "0.99"},
			stdout: `^rank,[^\n]*\n$`},
		{name: "bad minimum", args: []string{"search", "x", "--lake", elake, "--min-similarity", "1.5"}, code: 2,
			stderr: `--min-similarity must be in \(0, 1\]`},
		{name: "lake without chunks", args: []string{"search", "fetcher", "--lake", lake}, code: 2,
			stderr: `pos-embed`},
	} {
		t.Run(tc.name, tc.check)
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
