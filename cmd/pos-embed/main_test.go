package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pos-lake/pos/cmd/internal/clitest"
)

const input = `{"schema":"pos/1","kind":"message","id":"m1","platform":"claude_code","session_id":"s","ts":"2026-02-01T10:00:00Z","role":"user","content_type":"text","text":"Rotate the logs nightly"}
{"schema":"pos/1","kind":"raw","id":"r1","platform":"claude_code","raw":{"type":"progress"}}
{"schema":"pos/1","kind":"exchange","id":"e1","platform":"claude_code","session_id":"s","ts":"2026-02-01T10:00:00Z","role":"user","content_type":"exchange","text":"Rotate the logs nightly\n\nAdded a logrotate rule.","exchange":{"number":1,"message_count":2,"tool_count":0,"prompt_id":"m1"}}
`

func embedRun(stdin string, args ...string) (code int, stdout, stderr string) {
	return clitest.Call(newApp(), stdin, args...)
}

func TestEmbedCLI(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "lake")
	code, stdout, stderr := embedRun(input, "--lake", lake)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, `"kind":"chunk"`); n != 2 || !strings.HasPrefix(stdout, strings.SplitN(input, "\n", 2)[0]+"\n") {
		t.Errorf("%d chunks:\n%s", n, stdout)
	}
	if !regexp.MustCompile(`^pos-embed: 3 records in, 5 out: 2 chunks from 2 units; vectors: 2 computed, 0 reused, 0 skipped \(units with no text\); model pos-hash-v3 \(384-d\); 0 bad lines skipped`).MatchString(stderr) {
		t.Errorf("summary %q", stderr)
	}
	code, again, stderr := embedRun(input, "--lake", lake)
	if code != 0 || again != stdout || !strings.Contains(stderr, "vectors: 0 computed, 2 reused") {
		t.Errorf("second run: exit %d, same output %v, %q", code, again == stdout, stderr)
	}
	// The first feature set, still selectable, has vectors and a cache of
	// its own.
	code, v1, stderr := embedRun(input, "--lake", lake, "--model", "pos-hash-v1")
	if code != 0 || v1 == stdout || !strings.Contains(stderr, "vectors: 2 computed, 0 reused") || !strings.Contains(stderr, "model pos-hash-v1 (384-d)") {
		t.Errorf("pos-hash-v1: exit %d, same output %v, %q", code, v1 == stdout, stderr)
	}
	code, _, stderr = embedRun(input, "--no-cache", "--lake", filepath.Join(t.TempDir(), "none"), "-q", "--types", "user_prompt")
	if code != 0 || stderr != "" {
		t.Errorf("quiet: %d %q", code, stderr)
	}
}

func TestEmbedCLIErrors(t *testing.T) {
	lake := t.TempDir()
	for _, tc := range []struct {
		args   []string
		stdin  string
		code   int
		stderr string
	}{
		{[]string{"--provider", "nope"}, input, 2, `unknown provider "nope"`},
		{[]string{"--model", "pos-hash-v9"}, input, 2, `the hash provider's models are pos-hash-v3, pos-hash-v2 and pos-hash-v1 (got "pos-hash-v9")`},
		{[]string{"--types", "tweets"}, input, 2, `--types: unknown content type "tweets"`},
		{[]string{"--chunk-tokens", "4"}, input, 2, `--chunk-tokens must be at least 16`},
		{nil, input + "{broken\n", 3, `pos-embed: -:4: `},
		{[]string{"--strict"}, "{broken\n" + input, 3, `pos-embed: -:1: `},
	} {
		code, _, stderr := embedRun(tc.stdin, append([]string{"--lake", lake}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, stderr)
		}
	}
}

// The openai provider, against a local server that speaks the embeddings
// API: a wrong key fails clearly, a right one embeds.
func TestEmbedCLIOpenAI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-good" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
			return
		}
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		var data []string
		for i := range req.Input {
			data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[0.6,0.8,0]}`, i))
		}
		fmt.Fprintf(w, `{"object":"list","model":"tiny","data":[%s]}`, strings.Join(data, ","))
	}))
	defer srv.Close()
	lake := t.TempDir()
	args := []string{"--lake", lake, "--provider", "openai", "--model", "tiny", "--base-url", srv.URL + "/v1"}
	code, _, stderr := embedRun(input, append(args, "--api-key", "sk-bad")...)
	if code != 1 || !strings.Contains(stderr, "rejected the API key (HTTP 401: Incorrect API key provided)") {
		t.Errorf("bad key: exit %d %q", code, stderr)
	}
	code, stdout, stderr := embedRun(input, append(args, "--api-key", "sk-good")...)
	if code != 0 || !strings.Contains(stdout, `"model":"tiny","dim":3,"embedding":[0.6,0.8,0]`) ||
		!strings.Contains(stderr, "2 computed") || !strings.Contains(stderr, "model tiny (3-d)") {
		t.Errorf("good key: exit %d %q\n%s", code, stderr, stdout)
	}
	t.Setenv("POS_EMBED_API_KEY", "sk-good")
	code, _, stderr = embedRun(input, args...)
	if code != 0 || !strings.Contains(stderr, "0 computed, 2 reused") {
		t.Errorf("key from the environment, cached: exit %d %q", code, stderr)
	}
}
