package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/query"
)

// RecentArgs are recent_turns's arguments.
type RecentArgs struct {
	Session      string `json:"session,omitempty" jsonschema:"a session id or a unique prefix of one (default: the most recently active session)"`
	N            int    `json:"n,omitempty" jsonschema:"how many turns, counted back from the last"`
	Platform     string `json:"platform,omitempty" jsonschema:"choose the session among this platform's"`
	Project      string `json:"project,omitempty" jsonschema:"choose the session among the projects whose path contains this"`
	IncludeTools bool   `json:"include_tools,omitempty" jsonschema:"add each turn's tool calls: input, the start of the output, errors"`
	Subagents    bool   `json:"subagents,omitempty" jsonschema:"include the turns of the session's subagents"`
	Summarize    bool   `json:"summarize,omitempty" jsonschema:"add a short extractive summary of the whole session"`
	MaxChars     int    `json:"max_chars,omitempty" jsonschema:"cut each prompt and response to this many characters; 0 keeps them whole"`
	Timezone     string `json:"timezone,omitempty" jsonschema:"give times with this zone's offset (an IANA name such as Europe/Paris, or UTC); default UTC"`
}

// RecentResult is recent_turns's result.
type RecentResult struct {
	Session query.SessionRef `json:"session"`
	Summary *query.Summary   `json:"summary,omitempty"`
	Turns   []Turn           `json:"turns"`
}

// Turn is one exchange of recent_turns.
type Turn struct {
	ExchangeNumber int64      `json:"exchange_number"`
	TS             time.Time  `json:"ts"`
	TSEnd          time.Time  `json:"ts_end"`
	AgentID        string     `json:"agent_id,omitempty"`
	Prompt         string     `json:"prompt"`
	Response       string     `json:"response"`
	Model          string     `json:"model"`
	Tools          []string   `json:"tools"`
	ToolCount      int64      `json:"tool_count"`
	ToolCalls      []ToolCall `json:"tool_calls,omitempty"`
	InputTokens    int64      `json:"input_tokens"`
	OutputTokens   int64      `json:"output_tokens"`
}

// ToolCall is one tool use of a turn; Input is its JSON text.
type ToolCall struct {
	Name        string `json:"name"`
	Summary     string `json:"summary"` // Bash(go test ./...)
	Input       string `json:"input"`
	Output      string `json:"output"`
	OutputChars int64  `json:"output_chars"`
	IsError     bool   `json:"is_error"`
}

// cut shortens s to max characters, saying how many were left out; it
// never splits a redaction marker.
func cut(s string, max int) string {
	if max <= 0 {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	p := excerpt.PrefixRunes(s, max)
	return p + fmt.Sprintf(" … [%d more characters]", n-utf8.RuneCountInString(p))
}

func (s *Server) addRecentTurns() {
	tool := &mcp.Tool{
		Name: ToolRecentTurns,
		Description: "The last turns of a session, oldest first: each prompt, the agent's response, tools used and tokens " +
			"(a turn is a prompt and everything up to the next prompt). Use it to see where a session ended.",
		Annotations: readOnly("Recent turns of a session"),
		InputSchema: inputSchema[RecentArgs](func(p map[string]*jsonschema.Schema) {
			p["n"].Minimum, p["n"].Maximum, p["n"].Default = num(1), num(100), jsonDefault("10")
			p["max_chars"].Minimum, p["max_chars"].Default = num(0), jsonDefault("4000")
		}),
	}
	add(s, tool, handler(s, func(ctx context.Context, db *query.DB, a RecentArgs) (*mcp.CallToolResult, RecentResult, error) {
		var out RecentResult
		p, err := platform(a.Platform)
		if err != nil {
			return nil, out, err
		}
		loc, _, err := s.zone(a.Timezone)
		if err != nil {
			return nil, out, err
		}
		if a.Timezone == "" {
			loc = time.UTC // times keep their UTC form unless a zone is asked for
		}
		r, err := db.Recent(ctx, query.RecentOptions{Session: a.Session, N: a.N, Platform: p, Project: a.Project,
			IncludeTools: a.IncludeTools, Subagents: a.Subagents})
		if err != nil {
			return nil, out, err
		}
		out.Session, out.Turns = r.Session, make([]Turn, 0, len(r.Turns))
		for _, t := range r.Turns {
			o := Turn{ExchangeNumber: t.ExchangeNumber, TS: t.TS.In(loc), TSEnd: t.TSEnd.In(loc), AgentID: t.AgentID,
				Prompt: cut(t.Prompt, a.MaxChars), Response: cut(t.Response, a.MaxChars), Model: t.Model,
				Tools: orEmpty(t.Tools), ToolCount: t.ToolCount, InputTokens: t.Input, OutputTokens: t.Output}
			for _, c := range t.ToolCalls {
				o.ToolCalls = append(o.ToolCalls, ToolCall{Name: c.Name, Summary: c.String(), Input: cut(string(c.Input), a.MaxChars),
					Output: cut(c.Output, a.MaxChars), OutputChars: c.OutputChars, IsError: c.IsError})
			}
			out.Turns = append(out.Turns, o)
		}
		if a.Summarize {
			// A cache write is not this read-only tool's business: a
			// stored summary is reused, a new one is not stored.
			if out.Summary, err = db.Summarize(ctx, query.SummarizeOptions{Session: r.Session.SessionID, Platform: r.Session.Platform,
				Sentences: 5, NoStore: true}); err != nil {
				return nil, out, err
			}
		}
		return nil, out, nil
	}))
}

// SummaryArgs are session_summary's arguments.
type SummaryArgs struct {
	Session  string `json:"session,omitempty" jsonschema:"a session id or a unique prefix of one (default: the most recently active session)"`
	Strategy string `json:"strategy,omitempty" jsonschema:"extractive (local, no model), abstractive, rolling, map-reduce, hierarchical (every level: chunks, session, abstract) or auto (by the session's size); the LLM strategies need the server's LLM (pos-mcp --llm-model)"`
	Platform string `json:"platform,omitempty" jsonschema:"choose the session among this platform's"`
	Project  string `json:"project,omitempty" jsonschema:"choose the session among the projects whose path contains this"`
	Refresh  bool   `json:"refresh,omitempty" jsonschema:"make a new summary even if one of the session as it is now is stored"`
}

func (s *Server) addSessionSummary() {
	open := s.opt.LLM.Model != ""
	tool := &mcp.Tool{
		Name: ToolSessionSummary,
		Description: "A summary of a whole session: extractive (the most informative sentences of its prompts, answers, " +
			"subagent reports and compaction summaries, made locally) by default, or made by the server's LLM. Summaries are " +
			"stored in the lake and reused until the session grows.",
		Annotations: &mcp.ToolAnnotations{Title: "Summarize a session", ReadOnlyHint: false, DestructiveHint: falseP,
			IdempotentHint: true, OpenWorldHint: map[bool]*bool{true: trueP, false: falseP}[open]},
		InputSchema: inputSchema[SummaryArgs](func(p map[string]*jsonschema.Schema) {
			p["strategy"].Enum = enum(query.SummaryStrategies...)
			p["strategy"].Default = jsonDefault(`"extractive"`)
		}),
	}
	add(s, tool, handler(s, func(ctx context.Context, db *query.DB, a SummaryArgs) (*mcp.CallToolResult, *query.Summary, error) {
		p, err := platform(a.Platform)
		if err != nil {
			return nil, nil, err
		}
		strategy, err := query.ParseStrategy(a.Strategy)
		if err != nil {
			return nil, nil, argError("strategy", "%v", err)
		}
		if strategy != query.StrategyExtractive && strategy != query.StrategyAuto && s.opt.LLM.Model == "" {
			return nil, nil, argError("strategy", "%s needs an LLM, and this server has none: start pos-mcp with --llm-model "+
				"and --llm-base-url (or $POS_LLM_MODEL and $POS_LLM_BASE_URL), or use extractive", strategy)
		}
		sum, err := db.Summarize(ctx, query.SummarizeOptions{Session: a.Session, Platform: p, Project: a.Project,
			Strategy: strategy, LLM: s.opt.LLM, Refresh: a.Refresh, Now: s.opt.Now})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: sum.Markdown()}}}, sum, nil
	}))
}

// ContextArgs are context_pack's arguments.
type ContextArgs struct {
	Sessions  []string `json:"sessions,omitempty" jsonschema:"session ids or unique prefixes, the most important first, at most 20 (default: the most recently active session, or the sessions query finds)"`
	Query     string   `json:"query,omitempty" jsonschema:"instead of sessions: pick the sessions that best match this text (hybrid search, lexical when the lake has no vectors)"`
	Top       int      `json:"top,omitempty" jsonschema:"with query: how many sessions to pack"`
	Mode      string   `json:"mode,omitempty" jsonschema:"smart (plan, subagent reports and compaction summaries, first prompts, labels, decisions and files changed, later prompts and replies, files read), labels, agents, plan or full (whole exchanges, newest first)"`
	MaxTokens int      `json:"max_tokens,omitempty" jsonschema:"the pack's token budget; texts are never cut, what does not fit is left out whole"`
	Until     string   `json:"until,omitempty" jsonschema:"only what happened before this time: the pack an agent would have had then"`
	Platform  string   `json:"platform,omitempty" jsonschema:"choose sessions among this platform's"`
	Project   string   `json:"project,omitempty" jsonschema:"choose the default session among the projects whose path contains this"`
}

func (s *Server) addContextPack() {
	tool := &mcp.Tool{
		Name: ToolContextPack,
		Description: "A token-budgeted context pack from earlier sessions, to resume their work: whole texts chosen by priority, " +
			"with each session's age and a staleness notice for old context. The pack itself is the text content (Markdown); " +
			"the structured result lists what was included and left out.",
		Annotations: readOnly("Context pack from past sessions"),
		InputSchema: inputSchema[ContextArgs](func(p map[string]*jsonschema.Schema) {
			p["mode"].Enum = enum(query.ContextModes...)
			p["mode"].Default = jsonDefault(`"smart"`)
			p["max_tokens"].Minimum, p["max_tokens"].Maximum = num(100), num(200000)
			p["max_tokens"].Default = jsonDefault(fmt.Sprint(query.DefaultContextTokens))
			p["top"].Minimum, p["top"].Maximum, p["top"].Default = num(1), num(20), jsonDefault("3")
		}),
	}
	add(s, tool, handler(s, func(ctx context.Context, db *query.DB, a ContextArgs) (*mcp.CallToolResult, *query.ContextPack, error) {
		p, err := platform(a.Platform)
		if err != nil {
			return nil, nil, err
		}
		_, until, err := s.times("", a.Until, time.UTC)
		if err != nil {
			return nil, nil, err
		}
		// Each id costs a lookup: repeats are dropped and the count
		// capped before any is resolved.
		ids := uniqueInOrder(a.Sessions)
		if len(ids) > query.MaxContextSessions {
			return nil, nil, argError("sessions", "a pack takes at most %d sessions (got %d)", query.MaxContextSessions, len(ids))
		}
		var warnings []string
		platforms := make([]string, len(ids))
		for i := range platforms {
			platforms[i] = p
		}
		switch {
		case a.Query != "" && len(ids) > 0:
			return nil, nil, argError("query", "give sessions or query, not both")
		case a.Query != "":
			opt := query.SearchOptions{Query: a.Query, K: cmp.Or(a.Top, 3), GroupBy: "session", Platform: p, Project: a.Project, Until: until}
			if err := s.embedder(ctx, db, &opt); err != nil {
				return nil, nil, err
			}
			res, err := db.Search(ctx, opt)
			if err != nil {
				return nil, nil, err
			}
			if len(res.Sessions) == 0 {
				return nil, nil, argError("query", "no session matches %q", a.Query)
			}
			if res.Warning != "" {
				// Short: the pack's budget pays for it.
				warnings = append(warnings, "the sessions were picked by lexical search only: the query could not be embedded")
			}
			for _, h := range res.Sessions {
				ids, platforms = append(ids, h.SessionID), append(platforms, h.Platform)
			}
		case len(ids) == 0:
			ids, platforms = []string{""}, []string{p}
		}
		var refs []query.SessionRef
		for i, id := range ids {
			ref, err := db.ResolveSession(ctx, id, platforms[i], a.Project)
			if err != nil {
				return nil, nil, err
			}
			refs = append(refs, ref)
		}
		pack, err := db.Context(ctx, query.ContextOptions{Sessions: refs, Mode: a.Mode, MaxTokens: a.MaxTokens, Until: until, Now: s.opt.Now(),
			Warnings: warnings})
		if err != nil {
			return nil, nil, err
		}
		md := pack.Markdown()
		// The texts are in the Markdown; the structured result lists the
		// items only, so a client that shows both does not pay twice.
		meta := *pack
		meta.Sessions = slices.Clone(pack.Sessions)
		for i := range meta.Sessions {
			items := slices.Clone(meta.Sessions[i].Items)
			for j := range items {
				items[j].Text = ""
			}
			meta.Sessions[i].Items = items
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: md}}}, &meta, nil
	}))
}

// uniqueInOrder returns ids without repeats, in their first order.
func uniqueInOrder(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
