package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/query/querytest"
)

const sessA = "11111111-1111-4111-8111-111111111111"

func TestSummarizeCLI(t *testing.T) {
	code, out, errs := run("", "summarize", sessA[:8], "--lake", lake, "--no-store")
	if code != 0 || !strings.HasPrefix(out, "# Summary: Add a retry to the fetcher\n") || !strings.Contains(out, "Strategy extractive.") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = run("", "summarize", sessA, "--lake", lake, "--no-store", "--format", "json", "--sentences", "2")
	var s struct {
		Strategy string `json:"strategy"`
	}
	if err := json.Unmarshal([]byte(out), &s); code != 0 || err != nil || s.Strategy != "extractive" {
		t.Fatalf("json: exit %d, %v\n%s", code, err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "csv"}, "--format: a summary is markdown or json"},
		{[]string{"--strategy", "poem"}, `unknown strategy "poem"`},
		{[]string{"--strategy", "rolling"}, "the rolling strategy needs an LLM"},
		{[]string{"a", "b"}, "give at most one SESSION"},
	} {
		code, _, errs := run("", append([]string{"summarize", "--lake", lake, "--no-store"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

func TestSummarizeReusedCLI(t *testing.T) {
	own, err := querytest.FixtureLake(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, first, _ := run("", "summarize", sessA[:8], "--lake", own)
	code, second, errs := run("", "summarize", sessA[:8], "--lake", own)
	if code != 0 || strings.Contains(first, "reused") || !strings.Contains(second, "reused the summary made") {
		t.Fatalf("exit %d\nfirst:\n%s\nsecond:\n%s\n%s", code, first, second, errs)
	}
	code, third, _ := run("", "summarize", sessA[:8], "--lake", own, "--refresh")
	if code != 0 || strings.Contains(third, "reused") {
		t.Fatalf("--refresh reused:\n%s", third)
	}
}

func TestSummarizeLLMCLI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		if strings.Contains(r.URL.Path, "slow") {
			time.Sleep(2 * time.Second)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"The fetcher got a retry."},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":5}}`)
	}))
	defer srv.Close()
	args := []string{"summarize", sessA[:8], "--lake", lake, "--no-store", "--strategy", "abstractive", "--llm-model", "m"}
	code, out, errs := run("", append(args, "--llm-base-url", srv.URL+"/v1", "--llm-key", "k")...)
	if code != 0 || !strings.Contains(out, "The fetcher got a retry.") || !strings.Contains(out, "Strategy abstractive with m; 1 LLM call") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	code, _, errs = run("", append(args, "--llm-base-url", srv.URL+"/v1", "--llm-key", "wrong")...)
	if code != 1 || !strings.Contains(errs, "rejected the API key") {
		t.Fatalf("bad key: exit %d %q", code, errs)
	}
	code, _, errs = run("", append(args, "--llm-base-url", srv.URL+"/slow/v1", "--llm-key", "k", "--timeout", "200ms")...)
	if code != 1 || !strings.Contains(errs, "did not answer within 200ms") {
		t.Fatalf("timeout: exit %d %q", code, errs)
	}
}

func TestRecentSummarize(t *testing.T) {
	base := []string{"recent", "--lake", lake, "-s", sessA[:8], "-n", "2", "--summarize"}
	code, out, errs := run("", append(base, "-f", "table", "--width", "120")...)
	if code != 0 || !strings.HasPrefix(out, "Summary (extractive") || !strings.Contains(out, "\n\n#3  ") {
		t.Fatalf("table: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = run("", append(base, "-f", "json")...)
	var j struct {
		Summary struct{ Strategy string } `json:"summary"`
		Turns   []map[string]any          `json:"turns"`
	}
	if err := json.Unmarshal([]byte(out), &j); code != 0 || err != nil || j.Summary.Strategy != "extractive" || len(j.Turns) != 2 {
		t.Fatalf("json: exit %d %v\n%s", code, err, out)
	}
	code, out, _ = run("", append(base, "-f", "ndjson")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], `{"summary":{`) || !strings.HasPrefix(lines[1], `{"exchange_number":3`) {
		t.Fatalf("ndjson: exit %d\n%s", code, out)
	}
	code, out, errs = run("", append(base, "-f", "csv")...)
	if code != 0 || !strings.HasPrefix(out, "exchange_number,") || !strings.HasPrefix(errs, "Summary (extractive") {
		t.Fatalf("csv: exit %d\n%s\n%s", code, out, errs)
	}
}
