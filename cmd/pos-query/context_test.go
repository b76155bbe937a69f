package main

import (
	"regexp"
	"testing"
)

// context --query picks the sessions by search, then packs them.
func TestContextQuery(t *testing.T) {
	elake := embeddedLake(t)
	const a = "11111111-1111-4111-8111-111111111111"
	for _, tc := range []cliCase{
		{name: "picks the matching session", args: []string{"context", "--lake", elake, "--query", "exponential backoff", "--sessions", "1", "--dry-run", "-f", "table", "--width", "200"},
			stdout: `(?m)^SESSION_ID +KIND .*\n(` + a + ` .*\n)+$`,
			stderr: `pos-query: --query picked claude_code session ` + a + ` \(score [0-9.]+\): Add a retry to the fetcher\n`},
		{name: "markdown pack of the picked session", args: []string{"context", "--lake", elake, "-q", "exponential backoff", "--sessions", "1"},
			stdout: `(?s)^# .*Add a retry to the fetcher.*exponential backoff`},
		{name: "sessions and --query", args: []string{"context", "--lake", elake, a, "--query", "retry"}, code: 2,
			stderr: `give sessions or --query, not both`},
		{name: "bad --sessions", args: []string{"context", "--lake", elake, "--query", "retry", "--sessions", "0"}, code: 2,
			stderr: `--sessions must be at least 1`},
	} {
		t.Run(tc.name, tc.check)
	}
	// A lake without pos-embed's chunks: search says what to do.
	code, _, stderr := run("", "context", "--lake", lake, "--query", "retry")
	if code == 0 || !regexp.MustCompile(`pos-embed`).MatchString(stderr) {
		t.Errorf("lake without chunks: exit %d, stderr %q", code, stderr)
	}
}
