package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
)

// Options configure a server.
type Options struct {
	// Lake is the lake directory.
	Lake string
	// LLM is the endpoint session_summary's LLM strategies use; without a
	// model, only extractive (and auto, which then is extractive) work.
	LLM query.LLMOptions
	// Embedder returns what embeds a search query with the lake's model
	// (nil, nil for a lake without vectors). Without it, search is
	// lexical only.
	Embedder func(ctx context.Context, lake string) (query.Embedder, error)
	// ParseTime reads the since and until arguments (default: RFC 3339 or
	// a date); pos-mcp passes the parser of pos-query's --since.
	ParseTime func(s string, now time.Time) (time.Time, error)
	// Now is the time relative times count from (default time.Now).
	Now func() time.Time
	// Version is the server's version in the MCP handshake.
	Version string
	// Logger logs the server's activity (default: none).
	Logger *slog.Logger
}

// Server is the pos MCP server.
type Server struct {
	*mcp.Server
	opt   Options
	lake  *lakeDB
	usage map[string]string // tool -> its arguments, described
}

// Tool names.
const (
	ToolSearch         = "search"
	ToolRecentTurns    = "recent_turns"
	ToolSessionSummary = "session_summary"
	ToolContextPack    = "context_pack"
	ToolTimeline       = "timeline"
	ToolStats          = "stats"
	ToolCapabilities   = "capabilities"
)

// ToolNames lists the tools in the order they are registered.
var ToolNames = []string{ToolSearch, ToolRecentTurns, ToolSessionSummary, ToolContextPack, ToolTimeline, ToolStats, ToolCapabilities}

// instructions are the server's instructions in the MCP handshake; %s is
// the platforms pos reads, named as prose names them.
const instructions = `pos answers questions about past AI coding-agent sessions on this machine (%s), from a local lake that is synced in the background.

- search: where was something discussed or decided (words, a question); group_by_session for topic search across sessions.
- recent_turns: the last exchanges of a session, optionally with tool calls and a short summary.
- session_summary: a digest of a whole session (extractive, local, by default).
- context_pack: a token-budgeted pack of plans, subagent reports, compaction summaries and prompts to resume earlier work.
- timeline: what happened when, across sessions.
- stats: tokens and cost by day, week, month, model, project, platform or session.
- capabilities: what each platform's data supports and what the lake holds.

A session is named by its id or a unique prefix of it; without one, the most recently active session is used. Times (since, until) are durations back from now (90m, 36h, 7d, 2w), dates (2026-01-31) or RFC 3339.`

// New makes the server and registers its tools.
func New(opt Options) *Server {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.ParseTime == nil {
		opt.ParseTime = parseTime
	}
	if opt.Version == "" {
		opt.Version = "dev"
	}
	s := &Server{
		Server: mcp.NewServer(&mcp.Implementation{Name: "pos", Title: "pos: agent session history", Version: opt.Version},
			&mcp.ServerOptions{Instructions: fmt.Sprintf(instructions, platformTitles()), Logger: opt.Logger}),
		opt:   opt,
		lake:  &lakeDB{path: opt.Lake},
		usage: map[string]string{},
	}
	s.AddReceivingMiddleware(s.guard)
	s.addTools()
	return s
}

// guard keeps a request from killing the server: "arguments": null is read
// as no arguments (the SDK would panic applying defaults to it), and a
// panic becomes an error answer.
func (s *Server) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log().Error("request panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
				res, err = nil, fmt.Errorf("internal error in %s: %v", method, p)
			}
		}()
		r, ok := req.(*mcp.CallToolRequest)
		if !ok || r.Params == nil {
			return next(ctx, method, req)
		}
		if a := bytes.TrimSpace(r.Params.Arguments); len(a) == 0 || bytes.Equal(a, []byte("null")) {
			r.Params.Arguments = json.RawMessage("{}")
		}
		res, err = next(ctx, method, req)
		if ctr, ok := res.(*mcp.CallToolResult); ok && err == nil && ctr.IsError {
			s.explainValidation(r.Params.Name, ctr)
		}
		return res, err
	}
}

// explainValidation rewrites the SDK's message for arguments that do not
// match the schema ("validating \"arguments\": validating root:
// validating /properties/n: minimum: 0/1 is less than 1") into one that
// names the argument and lists what the tool takes.
func (s *Server) explainValidation(tool string, res *mcp.CallToolResult) {
	if len(res.Content) != 1 {
		return
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return
	}
	msg, ok := strings.CutPrefix(tc.Text, `validating "arguments": `)
	if !ok {
		return
	}
	msg = strings.TrimPrefix(msg, "validating root: ")
	msg = propertyRE.ReplaceAllString(msg, "$1: ")
	msg = ratioRE.ReplaceAllString(msg, "$1")    // 0/1 → 0
	msg = decimalsRE.ReplaceAllString(msg, "$1") // 1.000000 → 1
	tc.Text = fmt.Sprintf("bad arguments to %s: %s. It takes %s.", tool, msg, s.usage[tool])
}

var (
	ratioRE    = regexp.MustCompile(`\b(-?\d+)/1\b`)
	decimalsRE = regexp.MustCompile(`\b(\d+)\.0+\b`)
)

var propertyRE = regexp.MustCompile(`validating /properties/([^:/ ]+)(?:/items)?: (?:validating /properties/[^:/ ]+/items: )?`)

// describe lists a tool's arguments: "query (string, required), k
// (integer 1 to 100, default 10), …".
func describe(sch *jsonschema.Schema) string {
	if len(sch.PropertyOrder) == 0 {
		return "no arguments"
	}
	var parts []string
	for _, name := range sch.PropertyOrder {
		p := sch.Properties[name]
		typ := p.Type
		if typ == "" {
			typ = strings.Join(slices.DeleteFunc(slices.Clone(p.Types), func(t string) bool { return t == "null" }), "|")
		}
		if typ == "array" && p.Items != nil {
			typ = "list of " + p.Items.Type
			if len(p.Items.Enum) > 0 {
				typ = "list of " + enumText(p.Items.Enum)
			}
		}
		var attrs []string
		if len(p.Enum) > 0 {
			typ = enumText(p.Enum)
		}
		if p.Minimum != nil && p.Maximum != nil {
			attrs = append(attrs, fmt.Sprintf("%g to %g", *p.Minimum, *p.Maximum))
		} else if p.Minimum != nil {
			attrs = append(attrs, fmt.Sprintf("at least %g", *p.Minimum))
		}
		if slices.Contains(sch.Required, name) {
			attrs = append(attrs, "required")
		}
		if len(p.Default) > 0 {
			attrs = append(attrs, "default "+string(p.Default))
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", name, strings.Join(append([]string{typ}, attrs...), ", ")))
	}
	return strings.Join(parts, ", ")
}

func enumText(values []any) string {
	var out []string
	for _, v := range values {
		out = append(out, fmt.Sprint(v))
	}
	return strings.Join(out, "|")
}

// Close releases the lake.
func (s *Server) Close() { s.lake.close() }

// parseTime reads RFC 3339 times and dates.
func parseTime(v string, _ time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read %q as a time: use RFC 3339 or a date (2026-01-31)", v)
}

// argError is a bad argument, named.
func argError(name, format string, args ...any) error {
	return fmt.Errorf("argument %q: %s", name, fmt.Sprintf(format, args...))
}

func (s *Server) times(since, until string) (time.Time, time.Time, error) {
	now := s.opt.Now()
	from, err := s.opt.ParseTime(since, now)
	if err != nil {
		return time.Time{}, time.Time{}, argError("since", "%v", err)
	}
	to, err := s.opt.ParseTime(until, now)
	if err != nil {
		return time.Time{}, time.Time{}, argError("until", "%v", err)
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return time.Time{}, time.Time{}, argError("since", "%s is not before until (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return from, to, nil
}

func platform(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	c, ok := platforms.Canonical(p)
	if !ok {
		return "", argError("platform", "unknown platform %q (known: %s)", p, strings.Join(platforms.Names(), ", "))
	}
	return c, nil
}

// platformTitles names the platforms pos reads as prose does: "Claude
// Code, Cline … and agents that push their logs".
func platformTitles() string {
	var titles []string
	for _, p := range platforms.All() {
		titles = append(titles, p.Title)
	}
	return series(titles, "and")
}

// series joins words as a sentence lists them: "a, b or c".
func series(words []string, conj string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}

// inputSchema infers the schema of a tool's arguments and lets tweak add
// what Go types cannot say: enums, defaults, bounds.
func inputSchema[T any](tweak func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	sch, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	// A platform argument's description ends with the platforms pos reads,
	// from the registry: its struct tag says only what the argument does.
	if p := sch.Properties["platform"]; p != nil {
		p.Description += ": " + series(platforms.Names(), "or")
	}
	if tweak != nil {
		tweak(sch.Properties)
	}
	return sch
}

func enum(values ...string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

func num(v float64) *float64 { return &v }

func jsonDefault(v string) []byte { return []byte(v) }

var (
	falseP = new(bool)
	trueP  = func() *bool { b := true; return &b }()
)

// readOnly are the annotations of a tool that only reads the lake.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: falseP}
}

// handler wraps a tool: the lake opened for the call, the library's errors
// as tool errors, and a panic as a tool error instead of a dead server.
func handler[In, Out any](s *Server, f func(ctx context.Context, db *query.DB, in In) (*mcp.CallToolResult, Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log().Error("tool panicked", "panic", p, "stack", string(debug.Stack()))
				err = fmt.Errorf("internal error: %v", p)
			}
		}()
		call := func() (*mcp.CallToolResult, Out, error) {
			db, release, err := s.lake.acquire(ctx)
			if err != nil {
				return nil, out, err
			}
			defer release()
			return f(ctx, db, in)
		}
		res, out, err = call()
		if query.FileVanished(err) {
			// A load compacted a partition between the lookup's listing of
			// its files and their reading; the lake (reopened if it
			// changed) holds the same rows in the merged file.
			res, out, err = call()
		}
		if err != nil {
			var se *query.SQLError
			if errors.As(err, &se) {
				err = fmt.Errorf("query failed: %s", se.Msg)
			}
		}
		return res, out, err
	}
}

func (s *Server) log() *slog.Logger {
	if s.opt.Logger != nil {
		return s.opt.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// add registers a tool and remembers its arguments for error messages.
func add[In, Out any](s *Server, tool *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	s.usage[tool.Name] = describe(tool.InputSchema.(*jsonschema.Schema))
	mcp.AddTool(s.Server, tool, h)
}

func (s *Server) addTools() {
	s.addSearch()
	s.addRecentTurns()
	s.addSessionSummary()
	s.addContextPack()
	s.addTimeline()
	s.addStats()
	s.addCapabilities()
}

// SearchArgs are search's arguments.
type SearchArgs struct {
	Query          string   `json:"query" jsonschema:"what to look for: words, a question or a description of what was discussed"`
	Mode           string   `json:"mode,omitempty" jsonschema:"hybrid (vector and BM25 fused), vector or lexical (BM25); default: hybrid when the lake has vectors, else lexical"`
	K              int      `json:"k,omitempty" jsonschema:"how many results"`
	Platform       string   `json:"platform,omitempty" jsonschema:"only this platform"`
	Project        string   `json:"project,omitempty" jsonschema:"only projects whose path contains this"`
	Session        string   `json:"session,omitempty" jsonschema:"only this session: an id or a unique prefix of one"`
	Types          []string `json:"types,omitempty" jsonschema:"only these content types"`
	Since          string   `json:"since,omitempty" jsonschema:"from this time: a duration back from now (90m, 36h, 7d, 2w), a date (2026-01-31) or RFC 3339"`
	Until          string   `json:"until,omitempty" jsonschema:"before this time (same forms as since)"`
	GroupBySession bool     `json:"group_by_session,omitempty" jsonschema:"rank sessions by how much of them matches (topic search across sessions) instead of listing single results"`
	PerSession     int      `json:"per_session,omitempty" jsonschema:"with group_by_session: how many of its best hits each session lists"`
	NoExpand       bool     `json:"no_expand,omitempty" jsonschema:"search the query's own words only: no expansion by the best results' words and WordNet synonyms"`
}

// SearchResult is search's result: hits, or sessions when grouped.
type SearchResult struct {
	Mode     string             `json:"mode"`
	Model    string             `json:"embedding_model"`
	Terms    []string           `json:"terms"`
	Hits     []query.SearchHit  `json:"hits"`
	Sessions []query.SessionHit `json:"sessions"`
	// Warning says why the results are lexical only: the query could not
	// be embedded (the embedding endpoint failed).
	Warning string `json:"warning,omitempty" jsonschema:"set when the results are lexical only because the query could not be embedded (the embedding endpoint failed): why"`
}

func (s *Server) addSearch() {
	tool := &mcp.Tool{
		Name: ToolSearch,
		Description: "Find the exchanges, subagent reports, compaction summaries, labels and plans that match a query, " +
			"and what agents did: the shell commands they ran (type command) and tools' results (tool_output, tool_error: " +
			"a failed call, a compiler error, a failing test), across every session in the lake (hybrid: vector similarity " +
			"and BM25 fused by rank). Each hit has its session, exchange, time, score and a snippet with the query's words " +
			"in **bold**; a tool's hit also names the tool and gives its lines that hold the query's words. " +
			"A hit gives its exchange's prompt and, when a tool of the exchange failed, the error and what fixed it (the edits, " +
			"the command that then passed); near-identical hits are one, with how many others it stands for (duplicates, similar). " +
			"group_by_session ranks whole sessions instead, each with its best hits.",
		Annotations: readOnly("Search past agent sessions"),
		InputSchema: inputSchema[SearchArgs](func(p map[string]*jsonschema.Schema) {
			p["query"].MinLength = new(int)
			*p["query"].MinLength = 1
			p["mode"].Enum = enum(query.SearchModes...)
			p["k"].Minimum, p["k"].Maximum, p["k"].Default = num(1), num(100), jsonDefault("10")
			p["per_session"].Minimum, p["per_session"].Maximum, p["per_session"].Default = num(1), num(20), jsonDefault("3")
			p["types"].Items.Enum = enum(query.SearchTypes...)
		}),
	}
	add(s, tool, handler(s, func(ctx context.Context, db *query.DB, a SearchArgs) (*mcp.CallToolResult, SearchResult, error) {
		var out SearchResult
		if strings.TrimSpace(a.Query) == "" {
			return nil, out, argError("query", "is empty: say what to look for")
		}
		p, err := platform(a.Platform)
		if err != nil {
			return nil, out, err
		}
		since, until, err := s.times(a.Since, a.Until)
		if err != nil {
			return nil, out, err
		}
		session := ""
		if a.Session != "" {
			ref, err := db.ResolveSession(ctx, a.Session, p, "")
			if err != nil {
				return nil, out, err
			}
			session = ref.SessionID
		}
		var types []string
		if len(a.Types) > 0 {
			if types, err = query.ParseSearchTypes(strings.Join(a.Types, ",")); err != nil {
				return nil, out, argError("types", "%v", err)
			}
		}
		opt := query.SearchOptions{Query: a.Query, Mode: a.Mode, K: a.K, Platform: p, Project: a.Project, Session: session,
			Types: types, Since: since, Until: until, PerSession: a.PerSession,
			NoExpand: a.NoExpand}
		if a.GroupBySession {
			opt.GroupBy = "session"
		}
		if err := s.embedder(ctx, db, &opt); err != nil {
			return nil, out, err
		}
		res, err := db.Search(ctx, opt)
		if err != nil {
			return nil, out, err
		}
		out = SearchResult{Mode: res.Mode, Model: res.Model, Terms: res.Terms, Hits: res.Hits, Sessions: res.Sessions, Warning: res.Warning}
		if out.Terms == nil {
			out.Terms = []string{}
		}
		if out.Hits == nil {
			out.Hits = []query.SearchHit{}
		}
		if out.Sessions == nil {
			out.Sessions = []query.SessionHit{}
		}
		return nil, out, nil
	}))
}

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
		r, err := db.Recent(ctx, query.RecentOptions{Session: a.Session, N: a.N, Platform: p, Project: a.Project,
			IncludeTools: a.IncludeTools, Subagents: a.Subagents})
		if err != nil {
			return nil, out, err
		}
		out.Session, out.Turns = r.Session, make([]Turn, 0, len(r.Turns))
		for _, t := range r.Turns {
			o := Turn{ExchangeNumber: t.ExchangeNumber, TS: t.TS, TSEnd: t.TSEnd, AgentID: t.AgentID,
				Prompt: cut(t.Prompt, a.MaxChars), Response: cut(t.Response, a.MaxChars), Model: t.Model,
				Tools: t.Tools, ToolCount: t.ToolCount, InputTokens: t.Input, OutputTokens: t.Output}
			if o.Tools == nil {
				o.Tools = []string{}
			}
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

// embedder gives opt the lake's query embedder unless the search is
// lexical, and picks hybrid, or lexical when the lake has no vectors, when
// no mode was asked for.
func (s *Server) embedder(ctx context.Context, db *query.DB, opt *query.SearchOptions) error {
	_, hasVectors, err := load.LakeEmbedding(ctx, db.Lake())
	if err != nil {
		return err
	}
	if opt.Mode != query.SearchLexical && hasVectors && s.opt.Embedder != nil {
		if opt.Embed, err = s.opt.Embedder(ctx, db.Lake()); err != nil {
			return err
		}
	}
	if opt.Mode == "" {
		opt.Mode = query.SearchHybrid
		if opt.Embed == nil {
			opt.Mode = query.SearchLexical
		}
	}
	return nil
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
		_, until, err := s.times("", a.Until)
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

// TimelineArgs are timeline's arguments.
type TimelineArgs struct {
	Since     string `json:"since,omitempty" jsonschema:"from this time: a duration back from now (90m, 36h, 7d, 2w), a date (2026-01-31) or RFC 3339"`
	Until     string `json:"until,omitempty" jsonschema:"before this time (same forms as since)"`
	Platform  string `json:"platform,omitempty" jsonschema:"only this platform"`
	Project   string `json:"project,omitempty" jsonschema:"only projects whose path contains this"`
	Session   string `json:"session,omitempty" jsonschema:"only this session: an id or a unique prefix of one"`
	Limit     int    `json:"limit,omitempty" jsonschema:"keep the latest entries of the window; 0 keeps all"`
	Subagents bool   `json:"subagents,omitempty" jsonschema:"include subagents' exchanges"`
}

// TimelineResult is timeline's result.
type TimelineResult struct {
	Entries []query.TimelineEntry `json:"entries"`
}

func (s *Server) addTimeline() {
	tool := &mcp.Tool{
		Name: ToolTimeline,
		Description: "What happened in a time window, oldest first: each session start and each exchange, with its session's " +
			"title, its number in the session, the first line of its prompt and its tokens.",
		Annotations: readOnly("Timeline of sessions and exchanges"),
		InputSchema: inputSchema[TimelineArgs](func(p map[string]*jsonschema.Schema) {
			p["limit"].Minimum, p["limit"].Maximum, p["limit"].Default = num(0), num(10000), jsonDefault("50")
		}),
	}
	add(s, tool, handler(s, func(ctx context.Context, db *query.DB, a TimelineArgs) (*mcp.CallToolResult, TimelineResult, error) {
		var out TimelineResult
		p, err := platform(a.Platform)
		if err != nil {
			return nil, out, err
		}
		since, until, err := s.times(a.Since, a.Until)
		if err != nil {
			return nil, out, err
		}
		out.Entries, err = db.Timeline(ctx, query.TimelineOptions{Since: since, Until: until, Platform: p, Project: a.Project,
			Session: a.Session, Limit: a.Limit, Subagents: a.Subagents})
		return nil, out, err
	}))
}

// StatsArgs are stats's arguments.
type StatsArgs struct {
	By       []string `json:"by,omitempty" jsonschema:"grouping keys, in order; an empty list gives one row of totals"`
	Since    string   `json:"since,omitempty" jsonschema:"from this time: a duration back from now (90m, 36h, 7d, 2w), a date (2026-01-31) or RFC 3339"`
	Until    string   `json:"until,omitempty" jsonschema:"before this time (same forms as since)"`
	Platform string   `json:"platform,omitempty" jsonschema:"only this platform"`
	Project  string   `json:"project,omitempty" jsonschema:"only projects whose path contains this"`
	Limit    int      `json:"limit,omitempty" jsonschema:"at most this many rows; 0 keeps all"`
}

// StatsResult is stats's result.
type StatsResult struct {
	By       []string         `json:"by"`
	Rows     []query.StatsRow `json:"rows"`
	Unpriced map[string]int64 `json:"unpriced_messages_by_model"`
	Notes    []string         `json:"notes"`
}

func (s *Server) addStats() {
	tool := &mcp.Tool{
		Name: ToolStats,
		Description: "Tokens (input, output, cache writes and reads), assistant messages, sessions and cost in USD, grouped by " +
			"day, week, month, model, project, platform or session. A model without a known price has no cost (null, never 0).",
		Annotations: readOnly("Token and cost statistics"),
		InputSchema: inputSchema[StatsArgs](func(p map[string]*jsonschema.Schema) {
			p["by"].Items.Enum = enum(query.StatsKeys...)
			p["by"].Default = jsonDefault(`["day"]`)
			p["limit"].Minimum = num(0)
		}),
	}
	add(s, tool, handler(s, func(ctx context.Context, db *query.DB, a StatsArgs) (*mcp.CallToolResult, StatsResult, error) {
		var out StatsResult
		p, err := platform(a.Platform)
		if err != nil {
			return nil, out, err
		}
		since, until, err := s.times(a.Since, a.Until)
		if err != nil {
			return nil, out, err
		}
		by, err := query.ParseBy(strings.Join(a.By, ","))
		if err != nil {
			return nil, out, argError("by", "%v", err)
		}
		st, err := db.Stats(ctx, query.StatsOptions{By: by, Since: since, Until: until, Platform: p, Project: a.Project, Limit: a.Limit})
		if err != nil {
			return nil, out, err
		}
		out = StatsResult{By: st.By, Rows: st.Rows, Unpriced: st.Unpriced, Notes: st.Notes}
		if out.By == nil {
			out.By = []string{}
		}
		if out.Rows == nil {
			out.Rows = []query.StatsRow{}
		}
		if out.Unpriced == nil {
			out.Unpriced = map[string]int64{}
		}
		if out.Notes == nil {
			out.Notes = []string{}
		}
		return nil, out, nil
	}))
}

// CapabilitiesArgs are capabilities's arguments: none.
type CapabilitiesArgs struct{}

// CapabilitiesResult is capabilities's result.
type CapabilitiesResult struct {
	Platforms []query.PlatformCapabilities `json:"platforms"`
	// Scrub is what the lake records of how its rows were scrubbed of
	// secrets, with a warning when some may hold them in clear.
	Scrub *query.ScrubStatus `json:"scrub,omitempty"`
}

func (s *Server) addCapabilities() {
	tool := &mcp.Tool{
		Name: ToolCapabilities,
		Description: "For every platform pos reads: what its data supports (exchanges, timestamps, tokens, cost, models, tool calls, " +
			"file context, subagents, incremental reads, semantic search, limitations) beside what this lake holds for it " +
			"(messages, sessions, exchanges, and the share with exact times, tokens and models), " +
			"and whether the lake's rows were scrubbed of secrets (a warning when some were loaded without pos-scrub).",
		Annotations: readOnly("Platform capabilities"),
		InputSchema: inputSchema[CapabilitiesArgs](nil),
	}
	add(s, tool, handler(s, func(ctx context.Context, db *query.DB, _ CapabilitiesArgs) (*mcp.CallToolResult, CapabilitiesResult, error) {
		caps, err := db.Capabilities(ctx)
		if err != nil {
			return nil, CapabilitiesResult{}, err
		}
		st, err := db.ScrubStatus()
		return nil, CapabilitiesResult{Platforms: caps, Scrub: st}, err
	}))
}
