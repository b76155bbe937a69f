package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/load/catalog"
)

// RecentOptions choose the turns Recent returns.
type RecentOptions struct {
	// Session is a session id or a unique prefix of one; empty means the
	// most recently active session.
	Session string
	// N is how many turns, counted back from the last (default 10).
	N int
	// Platform and Project narrow the choice of the session.
	Platform, Project string
	// IncludeTools adds each turn's tool calls, with their input and the
	// start of their output.
	IncludeTools bool
	// Subagents includes the turns of the session's subagents (Task
	// agents, compaction) besides its main thread. A session whose main
	// thread is not in the lake (a subagent transcript without its parent)
	// shows its subagents' turns either way.
	Subagents bool
}

// Turn is one exchange: a prompt and everything until the next prompt.
type Turn struct {
	ExchangeNumber int64      `json:"exchange_number"` // 1-based, per thread (the main thread or one subagent)
	TS             time.Time  `json:"ts"`
	TSEnd          time.Time  `json:"ts_end"`
	Platform       string     `json:"platform"`
	SessionID      string     `json:"session_id"`
	AgentID        string     `json:"agent_id"` // empty for the main thread
	Prompt         string     `json:"prompt"`
	Response       string     `json:"response"`
	Model          string     `json:"model"`
	ToolCount      int64      `json:"tool_count"`
	Tools          []string   `json:"tools"` // distinct tool names, in first-use order
	ToolCalls      []ToolCall `json:"tool_calls"`
	Tokens
}

// ToolCall is one tool use within a turn.
type ToolCall struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// Output holds at most MaxToolOutput characters of the result;
	// OutputChars is its full length.
	Output      string `json:"output"`
	OutputChars int64  `json:"output_chars"`
	IsError     bool   `json:"is_error"`
}

// MaxToolOutput bounds the characters of a tool's output a ToolCall keeps.
const MaxToolOutput = 2000

// inputKeys are the tool input fields that best say what a call did, most
// telling first.
var inputKeys = []string{"command", "file_path", "path", "pattern", "url", "query", "description", "prompt", "skill"}

// String summarises a call for a table: Bash(go test ./...), with a "!"
// after a call that failed.
func (c ToolCall) String() string {
	var in map[string]any
	arg := ""
	if json.Unmarshal(c.Input, &in) == nil {
		for _, k := range inputKeys {
			if s, ok := in[k].(string); ok && s != "" {
				arg = s
				break
			}
		}
	}
	arg = OneLine(arg)
	if utf8.RuneCountInString(arg) > 60 {
		arg = excerpt.PrefixRunes(arg, 59) + excerpt.Ellipsis
	}
	s := c.Name + "(" + arg + ")"
	if c.IsError {
		s += "!"
	}
	return s
}

// RecentResult is the session Recent chose and its last turns.
type RecentResult struct {
	Session SessionRef
	Turns   []Turn
	// Tools says whether the turns carry their ToolCalls.
	Tools bool
}

// Table lays out the turns, oldest first.
func (r *RecentResult) Table() *Table {
	t := TableOf(r.Turns)
	if !r.Tools {
		t = t.Drop("tool_calls")
	}
	return t
}

// Recent returns the last N turns of a session, oldest first.
func (d *DB) Recent(ctx context.Context, opt RecentOptions) (*RecentResult, error) {
	if opt.N <= 0 {
		opt.N = 10
	}
	ref, err := d.ResolveSession(ctx, opt.Session, opt.Platform, opt.Project)
	if err != nil {
		return nil, err
	}
	res := &RecentResult{Session: ref, Tools: opt.IncludeTools}
	res.Turns, err = d.turns(ctx, ref, opt.N, opt.Subagents)
	if err == nil && len(res.Turns) == 0 && !opt.Subagents {
		res.Turns, err = d.turns(ctx, ref, opt.N, true)
	}
	if err != nil {
		return nil, err
	}
	if opt.IncludeTools && len(res.Turns) > 0 {
		if err := d.toolCalls(ctx, ref, res.Turns); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func (d *DB) turns(ctx context.Context, ref SessionRef, n int, subagents bool) ([]Turn, error) {
	_, exchanges, err := d.sessionViews(ctx, ref)
	if err != nil {
		return nil, err
	}
	q := `SELECT exchange_number, ts, ts_end, platform, session_id, coalesce(agent_id, ''),
  coalesce(prompt, ''), coalesce(response, ''), coalesce(model, ''), tool_count, tools,
  input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens
FROM ` + catalog.OneSessionExchangesFrom(exchanges) + `
WHERE $3 OR NOT sidechain
ORDER BY ts DESC, id DESC
LIMIT $4`
	rows, err := d.db.QueryContext(ctx, q, ref.Platform, ref.SessionID, subagents, n)
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	var out []Turn
	for rows.Next() {
		var t Turn
		var ts, end sql.NullTime
		if err := rows.Scan(&t.ExchangeNumber, &ts, &end, &t.Platform, &t.SessionID, &t.AgentID,
			&t.Prompt, &t.Response, &t.Model, &t.ToolCount, (*stringList)(&t.Tools),
			&t.Input, &t.Output, &t.CacheCreation, &t.CacheRead); err != nil {
			return nil, sqlErr(err)
		}
		t.TS, t.TSEnd = utc(ts), utc(end)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlErr(err)
	}
	slices.Reverse(out)
	return out, nil
}

// toolCalls attaches to each turn the tool calls its thread made between
// its prompt and the next turn of the same thread.
func (d *DB) toolCalls(ctx context.Context, ref SessionRef, turns []Turn) error {
	from := turns[0].TS
	for _, t := range turns {
		from = minTime(from, t.TS)
	}
	var w where
	w.add("platform = ?", ref.Platform)
	w.add("session_id = ?", ref.SessionID)
	w.window("ts", from, time.Time{}, true)
	messages, _, err := d.sessionViews(ctx, ref)
	if err != nil {
		return err
	}
	// Calls and their results, matched by call id within the thread.
	q := `WITH m AS (
  SELECT ts, coalesce(agent_id, '') AS agent, role, source_line, tools FROM ` + messages + w.sql() + ` AND len(tools) > 0
), calls AS (
  SELECT ts, agent, source_line, pos, t.name AS name, t.call_id AS call_id, t.input AS input
  FROM (SELECT ts, agent, source_line, unnest(tools) AS t, generate_subscripts(tools, 1) AS pos FROM m WHERE role = 'assistant')
  WHERE t.name <> ''
), results AS (
  SELECT agent, t.call_id AS call_id, any_value(t.output) AS output, bool_or(t.is_error) AS is_error
  FROM (SELECT agent, unnest(tools) AS t FROM m WHERE role <> 'assistant')
  WHERE t.call_id <> ''
  GROUP BY ALL
)
SELECT c.ts, c.agent, c.name, c.input, left(coalesce(r.output, ''), ?), coalesce(length(r.output), 0), coalesce(r.is_error, false)
FROM calls c LEFT JOIN results r ON r.agent = c.agent AND r.call_id = c.call_id
ORDER BY c.ts, c.source_line, c.pos`
	// A little more than is kept, cut below beside a redaction marker.
	args := append(w.args, MaxToolOutput+excerpt.MaxMarker)
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return sqlErr(err)
	}
	defer rows.Close()
	for i := range turns {
		turns[i].ToolCalls = []ToolCall{}
	}
	for rows.Next() {
		var ts sql.NullTime
		var agent, input string
		var c ToolCall
		if err := rows.Scan(&ts, &agent, &c.Name, &input, &c.Output, &c.OutputChars, &c.IsError); err != nil {
			return sqlErr(err)
		}
		c.Input = rawJSON(input)
		c.Output = excerpt.PrefixRunes(c.Output, MaxToolOutput)
		if i := owner(turns, agent, utc(ts)); i >= 0 {
			turns[i].ToolCalls = append(turns[i].ToolCalls, c)
		}
	}
	return sqlErr(rows.Err())
}

// owner is the index of the turn of thread agent that was open at ts: the
// last one that started at or before it.
func owner(turns []Turn, agent string, ts time.Time) int {
	found := -1
	for i, t := range turns {
		if t.AgentID == agent && !t.TS.After(ts) {
			found = i
		}
	}
	return found
}

// rawJSON keeps a stored tool input as JSON when it is JSON, and as a JSON
// string otherwise.
func rawJSON(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
