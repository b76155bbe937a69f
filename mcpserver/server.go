package mcpserver

import (
	"bytes"
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

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pos-lake/pos/extract/platforms"
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
	// ParseTime reads the since and until arguments, a date or a time
	// without an offset in loc (default: RFC 3339 or a date); pos-mcp
	// passes the parser of pos-query's --since.
	ParseTime func(s string, now time.Time, loc *time.Location) (time.Time, error)
	// Location is the time zone of days, weeks and months when a tool's
	// timezone argument is not given (nil: UTC); pos-mcp passes the
	// machine's.
	Location *time.Location
	// Pricing is a JSON file of model prices over the lake's own (pos-query
	// pricing import) and the built-in table, as pos-query's --pricing.
	Pricing string
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

A session is named by its id or a unique prefix of it; without one, the most recently active session is used. Times (since, until) are durations back from now (90m, 36h, 7d, 2w), dates (2026-01-31) or RFC 3339; stats, timeline and recent_turns take a timezone (an IANA name such as Europe/Paris, or UTC) for their days and dates.`

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

// parseTime reads RFC 3339 times and dates (in loc).
func parseTime(v string, _ time.Time, loc *time.Location) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read %q as a time: use RFC 3339 or a date (2026-01-31)", v)
}

// argError is a bad argument, named.
func argError(name, format string, args ...any) error {
	return fmt.Errorf("argument %q: %s", name, fmt.Sprintf(format, args...))
}

// zone is the zone a timezone argument names (an IANA name or UTC), or
// the server's default when it is empty; explicit says it was given.
func (s *Server) zone(name string) (loc *time.Location, explicit bool, err error) {
	name = strings.TrimSpace(name)
	if name == "" {
		if s.opt.Location == nil {
			return time.UTC, false, nil
		}
		return s.opt.Location, false, nil
	}
	// Only zone names: LoadLocation would read a path such as "../x"
	// under the zoneinfo directory.
	if !strings.HasPrefix(name, "/") && !strings.Contains(name, "..") && !strings.EqualFold(name, "local") {
		if loc, err = time.LoadLocation(name); err == nil {
			return loc, true, nil
		}
	}
	return nil, false, argError("timezone", "unknown time zone %q (use an IANA name such as Europe/Paris, or UTC)", name)
}

func (s *Server) times(since, until string, loc *time.Location) (time.Time, time.Time, error) {
	now := s.opt.Now()
	from, err := s.opt.ParseTime(since, now, loc)
	if err != nil {
		return time.Time{}, time.Time{}, argError("since", "%v", err)
	}
	to, err := s.opt.ParseTime(until, now, loc)
	if err != nil {
		return time.Time{}, time.Time{}, argError("until", "%v", err)
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return time.Time{}, time.Time{}, argError("since", "%s is not before until (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return from, to, nil
}

// window reads the platform and time window arguments the lake's lookups
// share.
func (s *Server) window(platformArg, since, until string) (p string, from, to time.Time, err error) {
	return s.windowIn(platformArg, since, until, time.UTC)
}

// windowIn is window with dates read in loc.
func (s *Server) windowIn(platformArg, since, until string, loc *time.Location) (p string, from, to time.Time, err error) {
	if p, err = platform(platformArg); err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	if from, to, err = s.times(since, until, loc); err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	return p, from, to, nil
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

// orEmpty is s, or an empty slice for nil: a result's lists are JSON
// arrays, never null, so that clients need not test for both.
func orEmpty[S ~[]E, E any](s S) S {
	if s == nil {
		return S{}
	}
	return s
}

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
