package mcpserver

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pos-lake/pos/pricing"
	"github.com/pos-lake/pos/query"
)

// TimelineArgs are timeline's arguments.
type TimelineArgs struct {
	Since     string `json:"since,omitempty" jsonschema:"from this time: a duration back from now (90m, 36h, 7d, 2w), a date (2026-01-31) or RFC 3339"`
	Until     string `json:"until,omitempty" jsonschema:"before this time (same forms as since)"`
	Platform  string `json:"platform,omitempty" jsonschema:"only this platform"`
	Project   string `json:"project,omitempty" jsonschema:"only projects whose path contains this"`
	Session   string `json:"session,omitempty" jsonschema:"only this session: an id or a unique prefix of one"`
	Limit     int    `json:"limit,omitempty" jsonschema:"keep the latest entries of the window; 0 keeps all"`
	Subagents bool   `json:"subagents,omitempty" jsonschema:"include subagents' exchanges"`
	Timezone  string `json:"timezone,omitempty" jsonschema:"read dates of since and until in this zone and give times with its offset (an IANA name such as Europe/Paris, or UTC); default: the server's zone for dates, UTC for times"`
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
		loc, explicit, err := s.zone(a.Timezone)
		if err != nil {
			return nil, out, err
		}
		p, since, until, err := s.windowIn(a.Platform, a.Since, a.Until, loc)
		if err != nil {
			return nil, out, err
		}
		out.Entries, err = db.Timeline(ctx, query.TimelineOptions{Since: since, Until: until, Platform: p, Project: a.Project,
			Session: a.Session, Limit: a.Limit, Subagents: a.Subagents})
		if explicit {
			for i := range out.Entries {
				out.Entries[i].TS = out.Entries[i].TS.In(loc)
			}
		}
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
	Timezone string   `json:"timezone,omitempty" jsonschema:"the zone of days, weeks, months and of the dates since and until name (an IANA name such as Europe/Paris, or UTC); default: the server's"`
	// StartOfWeek is the day a week key starts on.
	StartOfWeek string `json:"start_of_week,omitempty" jsonschema:"the day a week starts on: sunday (as ccusage weekly) or monday (ISO), or another day"`
}

// StatsResult is stats's result.
type StatsResult struct {
	By   []string         `json:"by"`
	Rows []query.StatsRow `json:"rows"`
	// Total sums the rows, each session counted once.
	Total    query.StatsRow   `json:"total"`
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
		loc, _, err := s.zone(a.Timezone)
		if err != nil {
			return nil, out, err
		}
		p, since, until, err := s.windowIn(a.Platform, a.Since, a.Until, loc)
		if err != nil {
			return nil, out, err
		}
		by, err := query.ParseBy(strings.Join(a.By, ","))
		if err != nil {
			return nil, out, argError("by", "%v", err)
		}
		week, err := query.ParseWeekday(a.StartOfWeek)
		if err != nil {
			return nil, out, argError("start_of_week", "%v", err)
		}
		// The prices pos-query stats uses: the lake's imported table and
		// the override file, read again for each call (either may change).
		prices, err := pricing.LoadLake(s.opt.Lake, s.opt.Pricing)
		if err != nil {
			return nil, out, err
		}
		st, err := db.Stats(ctx, query.StatsOptions{By: by, Since: since, Until: until, Platform: p, Project: a.Project, Limit: a.Limit,
			Location: loc, WeekStart: week, Prices: prices})
		if err != nil {
			return nil, out, err
		}
		out = StatsResult{By: orEmpty(st.By), Rows: orEmpty(st.Rows), Total: st.Total, Unpriced: st.Unpriced, Notes: orEmpty(st.Notes)}
		if out.Unpriced == nil {
			out.Unpriced = map[string]int64{}
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
