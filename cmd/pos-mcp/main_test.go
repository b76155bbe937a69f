package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pos-lake/pos/cmd/internal/clitest"
	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/internal/testbin"
)

// The end-to-end test: the real binaries build a lake from the Claude Code
// corpus (pos-extract | pos-normalize | pos-embed | pos-load), then the
// pos-mcp binary is started and spoken to over stdio with the SDK's client.

var binDir string

func TestMain(m *testing.M) { clitest.Main(m, "pos-mcp", main, buildBinaries) }

// buildBinaries builds the pipeline's binaries and pos-mcp for the tests
// that run them as processes of their own, and returns what removes them.
func buildBinaries() func() {
	dir, remove := testbin.Build("pos-mcp-bin-", func(dir string) *exec.Cmd {
		return exec.Command("go", "build", "-o", dir+"/", "../pos-extract", "../pos-normalize", "../pos-embed", "../pos-load", ".")
	})
	binDir = dir
	return remove
}

// corpusLake builds the lake with the binaries.
func corpusLake(t *testing.T) (lake string, env []string) {
	t.Helper()
	root := corpus.Platform(t, claudecode.Name)
	tmp := t.TempDir()
	lake = filepath.Join(tmp, "lake")
	env = append(os.Environ(), "PATH="+binDir+":"+os.Getenv("PATH"), "POS_LAKE="+lake, "XDG_DATA_HOME="+filepath.Join(tmp, "xdg"),
		"HOME="+tmp)
	cmd := exec.Command("bash", "-o", "pipefail", "-c",
		`pos-extract -q --platform claude_code --root "$1" | pos-normalize -q | pos-embed -q | pos-load -q`, "sh", root)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		// Exit 3: bad lines skipped (reported); the rest is loaded.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
			t.Fatalf("building the lake: %v\n%s", err, stderr.String())
		}
	}
	t.Logf("corpus lake built in %v", time.Since(start).Round(time.Millisecond))
	return lake, env
}

// start runs pos-mcp with args and connects the SDK's client to it over
// stdio.
func start(t *testing.T, env []string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "pos-mcp"), args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connecting to pos-mcp: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Logf("closing: %v", err)
		}
		cancel()
		if s := stderr.String(); s != "" {
			t.Logf("pos-mcp stderr:\n%s", s)
		}
	})
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return res, b.String()
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %.200s: %v", b, err)
	}
	return m
}

const session = "4d5611e5" // a corpus session with a subagent and a compaction

func TestEndToEnd(t *testing.T) {
	lake, env := corpusLake(t)
	cs := start(t, env, "--lake", lake)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"search": true, "recent_turns": true, "session_summary": true, "context_pack": true,
		"timeline": true, "stats": true, "capabilities": true}
	for _, tool := range tools.Tools {
		if !want[tool.Name] {
			t.Errorf("unexpected tool %s", tool.Name)
		}
		delete(want, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		t.Logf("%-16s readOnly=%-5v %s", tool.Name, tool.Annotations.ReadOnlyHint, schema)
	}
	if len(want) > 0 {
		t.Fatalf("tools missing: %v", want)
	}

	for _, tc := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"search", map[string]any{"query": "compaction summary hook", "k": 3}, []string{`"mode":"hybrid"`, `"snippet"`}},
		{"search", map[string]any{"query": "debug sidecar", "group_by_session": true}, []string{session}},
		{"recent_turns", map[string]any{"session": session, "n": 2, "include_tools": true, "summarize": true, "max_chars": 300}, []string{`"exchange_number":2`, `"tool_calls"`, `"summary"`, "more characters]"}},
		{"session_summary", map[string]any{"session": session}, []string{"# Summary: ", "Strategy extractive", "compaction"}},
		{"context_pack", map[string]any{"sessions": []string{session}, "max_tokens": 4000}, []string{"# Context from previous sessions", "OLD CONTEXT WARNING"}},
		{"context_pack", map[string]any{"query": "debug sidecar", "top": 1}, []string{"# Context from previous sessions", session}},
		{"timeline", map[string]any{"since": "2025-01-01", "limit": 10}, []string{`"kind":"exchange"`}},
		{"stats", map[string]any{"by": []string{"month", "model"}}, []string{`"claude-opus-4-6"`, `"cost"`}},
		{"capabilities", map[string]any{}, []string{`"platform":"claude_code"`, `"messages"`}},
	} {
		res, text := call(t, cs, tc.tool, tc.args)
		if res.IsError {
			t.Errorf("%s %v: tool error: %s", tc.tool, tc.args, text)
			continue
		}
		if res.StructuredContent == nil {
			t.Errorf("%s: no structured content", tc.tool)
		}
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s %v: no %q in %.500s", tc.tool, tc.args, w, text)
			}
		}
		t.Logf("%s %v: ok, %d bytes", tc.tool, tc.args, len(text))
	}

	// The second summary of the unchanged session is the stored one.
	res, _ := call(t, cs, "session_summary", map[string]any{"session": session})
	if s := structured(t, res); s["reused"] != true || s["stored"] != true {
		t.Fatalf("second summary not reused: reused=%v stored=%v", s["reused"], s["stored"])
	}

	// Bad arguments are tool errors that say what is wrong.
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search", map[string]any{"k": 5}, `missing properties: ["query"]`},
		{"recent_turns", map[string]any{"n": 0}, "minimum"},
		{"recent_turns", map[string]any{"session": "ffffffff"}, `no session has an id starting with "ffffffff"`},
		{"session_summary", map[string]any{"strategy": "map-reduce"}, "map-reduce needs an LLM"},
		{"context_pack", map[string]any{"mode": "all"}, `bad arguments to context_pack: mode: enum: all does not equal any of: [smart labels agents plan full]. It takes sessions (list of string), query (string), top (integer, 1 to 20, default 3), mode (smart|labels|agents|plan|full, default "smart")`},
		{"timeline", map[string]any{"since": "soon"}, `argument "since": cannot read "soon"`},
		{"stats", map[string]any{"by": []string{"hour"}}, "by: enum: hour does not equal any of"},
		{"capabilities", map[string]any{"platform": "x"}, "unexpected additional properties"},
	} {
		res, text := call(t, cs, tc.tool, tc.args)
		if !res.IsError || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: isError=%v %q, want an error with %q", tc.tool, tc.args, res.IsError, text, tc.want)
			continue
		}
		t.Logf("%s %v: tool error %q", tc.tool, tc.args, text)
	}
	// An unknown tool is the protocol's error.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Errorf("unknown tool: no error")
	}
}

// TestEndToEndLLM starts pos-mcp with an LLM (a local server speaking the
// OpenAI wire format) and asks for a hierarchical summary.
func TestEndToEndLLM(t *testing.T) {
	lake, env := corpusLake(t)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "x", "object": "chat.completion", "model": "fake",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": fmt.Sprintf("Summary %d.", n)}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 1000, "completion_tokens": 50},
		})
	}))
	defer srv.Close()
	cs := start(t, env, "--lake", lake, "--llm-base-url", srv.URL+"/v1", "--llm-model", "fake-model", "--timeout", "10s")
	res, text := call(t, cs, "session_summary", map[string]any{"session": session, "strategy": "hierarchical"})
	if res.IsError {
		t.Fatal(text)
	}
	s := structured(t, res)
	levels, _ := s["levels"].([]any)
	if s["model"] != "fake-model" || len(levels) < 3 || !strings.Contains(text, "## Level 1: chunk summaries") {
		t.Fatalf("model %v, %d levels:\n%s", s["model"], len(levels), text)
	}
	t.Logf("hierarchical summary: %d levels, %d LLM calls", len(levels), calls.Load())
}
