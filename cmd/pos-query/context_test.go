package main

import (
	"regexp"
	"testing"

	"github.com/pos-lake/pos/cmd/internal/clitest"
)

// context --query picks the sessions by search, then packs them.
func TestContextQuery(t *testing.T) {
	elake := embeddedLake(t)
	const a = "11111111-1111-4111-8111-111111111111"
	for _, tc := range []clitest.Case{
		{Name: "picks the matching session", Args: []string{"context", "--lake", elake, "--query", "exponential backoff", "--sessions", "1", "--dry-run", "-f", "table", "--width", "200"},
			Stdout: `(?m)^SESSION_ID +KIND .*\n(` + a + ` .*\n)+$`,
			Stderr: `pos-query: --query picked claude_code session ` + a + ` \(score [0-9.]+\): Add a retry to the fetcher\n`},
		{Name: "markdown pack of the picked session", Args: []string{"context", "--lake", elake, "-q", "exponential backoff", "--sessions", "1"},
			Stdout: `(?s)^# .*Add a retry to the fetcher.*exponential backoff`},
		{Name: "sessions and --query", Args: []string{"context", "--lake", elake, a, "--query", "retry"}, Code: 2,
			Stderr: `give sessions or --query, not both`},
		{Name: "bad --sessions", Args: []string{"context", "--lake", elake, "--query", "retry", "--sessions", "0"}, Code: 2,
			Stderr: `--sessions must be at least 1`},
	} {
		t.Run(tc.Name, func(t *testing.T) { tc.Check(t, newApp()) })
	}
	// A lake without pos-embed's chunks: search says what to do.
	code, _, stderr := run("", "context", "--lake", lake, "--query", "retry")
	if code == 0 || !regexp.MustCompile(`pos-embed`).MatchString(stderr) {
		t.Errorf("lake without chunks: exit %d, stderr %q", code, stderr)
	}
}
