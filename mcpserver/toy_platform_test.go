package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pos-lake/pos/extract/platform"
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/mcpserver"
)

// platformArgs are the descriptions of the tools' platform arguments, by
// tool.
func platformArgs(t *testing.T, tools []string, props func(tool string) map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tool := range tools {
		if p, ok := props(tool)["platform"].(map[string]any); ok {
			out[tool], _ = p["description"].(string)
		}
	}
	return out
}

// The platform arguments and the server's instructions list the platforms
// of the registry: as they always read, and with a platform registered
// later (docs/adding-a-platform.md) at their end, which the tools accept
// by its name and aliases.
func TestRegisteredPlatformListed(t *testing.T) {
	lake := fixture(t)
	list := func() (map[string]string, string) {
		cs := connect(t, lake)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		props := map[string]map[string]any{}
		var tools []string
		for _, tool := range res.Tools {
			tools = append(tools, tool.Name)
			if sch, ok := tool.InputSchema.(map[string]any); ok {
				props[tool.Name], _ = sch["properties"].(map[string]any)
			}
		}
		return platformArgs(t, tools, func(tool string) map[string]any { return props[tool] }), cs.InitializeResult().Instructions
	}

	args, instr := list()
	want := map[string]string{
		mcpserver.ToolSearch:         "only this platform: claude_code, cline, cursor, codex, gemini, aider or push",
		mcpserver.ToolRecentTurns:    "choose the session among this platform's: claude_code, cline, cursor, codex, gemini, aider or push",
		mcpserver.ToolSessionSummary: "choose the session among this platform's: claude_code, cline, cursor, codex, gemini, aider or push",
		mcpserver.ToolContextPack:    "choose sessions among this platform's: claude_code, cline, cursor, codex, gemini, aider or push",
		mcpserver.ToolTimeline:       "only this platform: claude_code, cline, cursor, codex, gemini, aider or push",
		mcpserver.ToolStats:          "only this platform: claude_code, cline, cursor, codex, gemini, aider or push",
	}
	if len(args) != len(want) {
		t.Errorf("platform arguments of %d tools, want %d: %v", len(args), len(want), args)
	}
	for tool, w := range want {
		if args[tool] != w {
			t.Errorf("%s: platform described %q, want %q", tool, args[tool], w)
		}
	}
	const titles = "(Claude Code, Cline, Cursor, Codex CLI, Gemini CLI, Aider and agents that push their logs)"
	if !strings.Contains(instr, titles) {
		t.Errorf("instructions do not name the platforms %s: %.200s", titles, instr)
	}

	platforms.Register(platform.Platform{Name: "toy", Title: "Toy agent", Aliases: []string{"toy-cli"},
		Capabilities: platform.Capabilities{Exchanges: platform.Yes, Completeness: "full"}})
	args, instr = list()
	for tool, w := range want {
		if w = strings.TrimSuffix(w, " or push") + ", push or toy"; args[tool] != w {
			t.Errorf("%s: platform described %q, want %q", tool, args[tool], w)
		}
	}
	if !strings.Contains(instr, "Aider, agents that push their logs and Toy agent)") {
		t.Errorf("instructions do not name the toy platform: %.200s", instr)
	}
	cs := connect(t, lake)
	if res := call(t, cs, mcpserver.ToolStats, map[string]any{"platform": "Toy-CLI"}); res.IsError {
		t.Errorf("stats of the toy platform: %s", text(res))
	}
	res := call(t, cs, mcpserver.ToolStats, map[string]any{"platform": "vim"})
	if got := text(res); !res.IsError || !strings.Contains(got, "(known: claude_code, cline, cursor, codex, gemini, aider, push, toy)") {
		t.Errorf("stats of an unknown platform: %v %s", res.IsError, got)
	}
	res = call(t, cs, mcpserver.ToolCapabilities, nil)
	if got := text(res); res.IsError || !strings.Contains(got, `"platform":"toy"`) {
		t.Errorf("capabilities do not list the toy platform: %.300s", got)
	}
}
