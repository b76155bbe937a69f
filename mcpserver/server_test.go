package mcpserver_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pos-lake/pos/internal/testlake"
	"github.com/pos-lake/pos/mcpserver"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/pos-lake/pos/transform/embed"
)

const sessA = "11111111-1111-4111-8111-111111111111"

// buildLake runs the transcripts under root through the whole chain,
// pos-embed included.
func buildLake(t *testing.T, root, lake string) {
	t.Helper()
	if err := testlake.Embedded(context.Background(), root, lake, false); err != nil {
		t.Fatal(err)
	}
}

func hashEmbedder(context.Context, string) (query.Embedder, error) {
	return func(_ context.Context, text string) ([]float32, error) { return embed.NewHash(0).Vector(text), nil }, nil
}

// connect starts a server on lake and a client speaking to it in memory.
func connect(t *testing.T, lake string) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, mcpserver.Options{Lake: lake, Embedder: hashEmbedder,
		Now: func() time.Time { return time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) }})
}

func fixture(t *testing.T) string {
	t.Helper()
	lake := filepath.Join(t.TempDir(), "lake")
	buildLake(t, querytest.Fixture(), lake)
	return lake
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

func TestToolsListed(t *testing.T) {
	cs := connect(t, fixture(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: description, schemas and annotations are required: %+v", tool.Name, tool)
			continue
		}
		want := tool.Name != mcpserver.ToolSessionSummary
		if tool.Annotations.ReadOnlyHint != want {
			t.Errorf("%s: readOnlyHint %v", tool.Name, tool.Annotations.ReadOnlyHint)
		}
		if d := tool.Annotations.DestructiveHint; !want && (d == nil || *d) {
			t.Errorf("%s: a summary cache write is not destructive", tool.Name)
		}
	}
	slices.Sort(names)
	want := slices.Clone(mcpserver.ToolNames)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
}

func TestToolCalls(t *testing.T) {
	cs := connect(t, fixture(t))
	for _, tc := range []struct {
		tool string
		args map[string]any
		want []string // in the text content
		key  string   // in the structured content
	}{
		{mcpserver.ToolSearch, map[string]any{"query": "build"}, []string{`"mode":"hybrid"`, "22222222"}, "hits"},
		{mcpserver.ToolSearch, map[string]any{"query": "build", "mode": "lexical", "group_by_session": true}, []string{`"sessions":[{`}, "sessions"},
		{mcpserver.ToolRecentTurns, map[string]any{"session": sessA[:8], "n": 4, "include_tools": true, "summarize": true}, []string{sessA, `"tool_calls"`, `"summary"`}, "turns"},
		{mcpserver.ToolSessionSummary, map[string]any{"session": sessA[:8]}, []string{"# Summary: ", "Strategy extractive"}, "text"},
		{mcpserver.ToolContextPack, map[string]any{"sessions": []string{sessA[:8]}, "max_tokens": 2000}, []string{"# Context from previous sessions", "Token budget: 2,000"}, "sessions"},
		{mcpserver.ToolContextPack, map[string]any{"query": "explain the build", "top": 1}, []string{"# Context from previous sessions", "## Session: Explain the build"}, "sessions"},
		{mcpserver.ToolTimeline, map[string]any{"since": "2026-03-01", "limit": 5}, []string{`"kind":"exchange"`}, "entries"},
		{mcpserver.ToolStats, map[string]any{"by": []string{"day", "model"}}, []string{`"key":["2026-03-01","claude-opus-4-6"]`}, "rows"},
		{mcpserver.ToolStats, map[string]any{}, []string{`"by":["day"]`, `"key":[],"messages":10,`}, "rows"},
		// The 2026-03-03 12:00 UTC reply is on 03-04 in Auckland, and a
		// date names midnight there.
		{mcpserver.ToolStats, map[string]any{"by": []string{"day"}, "timezone": "Pacific/Auckland", "since": "2026-03-04"},
			[]string{`"input_tokens":100,"key":["2026-03-04"],"messages":1,`, `"rows":[{"cache_creation_1h_tokens":0,"cache_creation_cost":0.0003125,`}, "rows"},
		{mcpserver.ToolStats, map[string]any{"by": []string{"week"}, "start_of_week": "monday"}, []string{`"key":["2026-02-23"]`, `"key":["2026-03-02"]`}, "rows"},
		{mcpserver.ToolStats, map[string]any{"by": []string{"week"}}, []string{`"key":["2026-02-22"]`, `"key":["2026-03-01"]`}, "rows"},
		{mcpserver.ToolTimeline, map[string]any{"session": "2222", "timezone": "Asia/Tokyo"}, []string{`"ts":"2026-03-03T21:00:00+09:00"`}, "entries"},
		{mcpserver.ToolRecentTurns, map[string]any{"session": "2222", "timezone": "America/Los_Angeles"}, []string{`"ts":"2026-03-03T04:00:00-08:00"`}, "turns"},
		{mcpserver.ToolRecentTurns, map[string]any{"session": "2222"}, []string{`"ts":"2026-03-03T12:00:00Z"`}, "turns"},
		{mcpserver.ToolCapabilities, nil, []string{`"platform":"claude_code"`}, "platforms"},
	} {
		res := call(t, cs, tc.tool, tc.args)
		if res.IsError {
			t.Errorf("%s %v: %s", tc.tool, tc.args, text(res))
			continue
		}
		got := text(res)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %v: no %q in %.600s", tc.tool, tc.args, w, got)
			}
		}
		if _, ok := structured(t, res)[tc.key]; !ok {
			t.Errorf("%s: no %q in the structured result", tc.tool, tc.key)
		}
	}
}

func TestBadArguments(t *testing.T) {
	cs := connect(t, fixture(t))
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{mcpserver.ToolSearch, map[string]any{}, `missing properties: ["query"]`},
		{mcpserver.ToolSearch, map[string]any{"query": "   "}, `argument "query": is empty`},
		{mcpserver.ToolSearch, map[string]any{"query": "x", "mode": "fuzzy"}, `fuzzy`},
		{mcpserver.ToolSearch, map[string]any{"query": "x", "k": 0}, `minimum`},
		{mcpserver.ToolSearch, map[string]any{"query": "x", "types": []string{"poem"}}, `poem`},
		{mcpserver.ToolSearch, map[string]any{"query": "x", "since": "last tuesday"}, `argument "since": cannot read "last tuesday" as a time`},
		{mcpserver.ToolRecentTurns, map[string]any{"n": "ten"}, `type`},
		{mcpserver.ToolRecentTurns, map[string]any{"n": 1000}, `bad arguments to recent_turns: n: maximum: 1000 is greater than 100. It takes session (string), n (integer, 1 to 100, default 10)`},
		{mcpserver.ToolRecentTurns, map[string]any{"session": "zzz"}, `no session has an id starting with "zzz"`},
		{mcpserver.ToolRecentTurns, map[string]any{"platform": "vim"}, `argument "platform": unknown platform "vim" (known: `},
		{mcpserver.ToolRecentTurns, map[string]any{"sesion": sessA}, `unexpected additional properties ["sesion"]`},
		{mcpserver.ToolSessionSummary, map[string]any{"strategy": "magic"}, `magic`},
		{mcpserver.ToolSessionSummary, map[string]any{"strategy": "abstractive"}, `abstractive needs an LLM, and this server has none`},
		{mcpserver.ToolContextPack, map[string]any{"mode": "everything"}, `everything`},
		{mcpserver.ToolContextPack, map[string]any{"max_tokens": 10}, `minimum`},
		{mcpserver.ToolContextPack, map[string]any{"sessions": []string{"1111"}}, `ambiguous`},
		{mcpserver.ToolContextPack, map[string]any{"sessions": []string{"1111"}, "query": "build"}, `argument "query": give sessions or query, not both`},
		{mcpserver.ToolContextPack, map[string]any{"query": "build", "top": 0}, `minimum`},
		{mcpserver.ToolTimeline, map[string]any{"since": "2026-03-05", "until": "2026-03-01"}, `argument "since": 2026-03-05T00:00:00Z is not before until`},
		{mcpserver.ToolStats, map[string]any{"by": []string{"colour"}}, `colour`},
		{mcpserver.ToolStats, map[string]any{"by": []string{"day", "day"}}, `grouping key "day" given twice`},
		{mcpserver.ToolStats, map[string]any{"timezone": "Mars/Olympus"}, `argument "timezone": unknown time zone "Mars/Olympus"`},
		{mcpserver.ToolTimeline, map[string]any{"timezone": "../../etc/passwd"}, `argument "timezone": unknown time zone`},
		{mcpserver.ToolStats, map[string]any{"start_of_week": "someday"}, `argument "start_of_week": unknown day "someday"`},
		{mcpserver.ToolCapabilities, map[string]any{"verbose": true}, `unexpected additional properties`},
	} {
		res := call(t, cs, tc.tool, tc.args)
		if !res.IsError {
			t.Errorf("%s %v: no error: %.300s", tc.tool, tc.args, text(res))
			continue
		}
		if got := text(res); !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: error %q lacks %q", tc.tool, tc.args, got, tc.want)
		}
	}
}

func TestNoLake(t *testing.T) {
	cs := connect(t, filepath.Join(t.TempDir(), "nowhere"))
	res := call(t, cs, mcpserver.ToolStats, nil)
	if !res.IsError || !strings.Contains(text(res), "no lake") || !strings.Contains(text(res), "pos-load --lake") {
		t.Fatalf("%v %s", res.IsError, text(res))
	}
}

// TestLakeGrows checks that a running server sees what a later load adds.
func TestLakeGrows(t *testing.T) {
	dir := t.TempDir()
	root, lake := filepath.Join(dir, "claude"), filepath.Join(dir, "lake")
	src := filepath.Join(querytest.Fixture(), "projects", "-home-dev-beta")
	dst := filepath.Join(root, "projects", "-home-dev-beta")
	os.MkdirAll(dst, 0o700)
	b, err := os.ReadFile(filepath.Join(src, "22222222-2222-4222-8222-222222222222.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dst, "22222222-2222-4222-8222-222222222222.jsonl"), b, 0o600)
	buildLake(t, root, lake)
	cs := connect(t, lake)
	if res := call(t, cs, mcpserver.ToolRecentTurns, map[string]any{"session": "1111"}); !res.IsError {
		t.Fatalf("session 1111… before it was loaded: %s", text(res))
	}
	buildLake(t, querytest.Fixture(), lake)
	if res := call(t, cs, mcpserver.ToolRecentTurns, map[string]any{"session": sessA}); res.IsError {
		t.Fatalf("session loaded while the server ran: %s", text(res))
	}
}

// TestStatsPrices: the stats tool prices with the table pos-query stats
// uses: the built-in one, and over it the override file (--pricing,
// $POS_PRICING).
func TestStatsPrices(t *testing.T) {
	lake := fixture(t)
	const model = "claude-opus-4-6"
	cost := func(cs *mcp.ClientSession) float64 {
		t.Helper()
		res := call(t, cs, mcpserver.ToolStats, map[string]any{"by": []string{"model"}})
		if res.IsError {
			t.Fatal(text(res))
		}
		rows, _ := structured(t, res)["rows"].([]any)
		for _, r := range rows {
			row, _ := r.(map[string]any)
			if key, _ := row["key"].([]any); len(key) == 1 && key[0] == model {
				if c, ok := row["cost"].(float64); ok {
					return c
				}
			}
		}
		t.Fatalf("no priced row of %s: %s", model, text(res))
		return 0
	}
	base := cost(connect(t, lake))
	p := filepath.Join(t.TempDir(), "prices.json")
	// The built-in prices of the model (5, 25, 6.25, 10, 0.5 USD per
	// million tokens), each a hundred times: so must be its cost.
	os.WriteFile(p, []byte(`{"models": [{"model": "`+model+`", "provider": "anthropic", "input": 500, "output": 2500, "cache_write_5m": 625, "cache_write_1h": 1000, "cache_read": 50}]}`), 0o600)
	over := cost(connectWith(t, mcpserver.Options{Lake: lake, Embedder: hashEmbedder, Pricing: p,
		Now: func() time.Time { return time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) }}))
	if base <= 0 || math.Abs(over/base-100) > 1e-6 {
		t.Fatalf("%s: cost %v with the built-in prices, %v with a hundred times those", model, base, over)
	}
}
