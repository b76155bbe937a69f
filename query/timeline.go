package query

import (
	"context"
	"database/sql"
	"slices"
	"time"
)

// TimelineOptions choose the entries of Timeline.
type TimelineOptions struct {
	// Since and Until bound the window [Since, Until); zero is open.
	Since, Until time.Time
	Platform     string // exact platform name
	Project      string // part of the project path
	Session      string // a session id or a unique prefix of one
	// Limit keeps the latest Limit entries of the window; 0 keeps all.
	Limit int
	// Subagents includes the exchanges of subagents (Task agents,
	// compaction), not just the main threads.
	Subagents bool
}

// Entry kinds of a timeline.
const (
	KindSessionStart = "session_start"
	KindExchange     = "exchange"
)

// TimelineEntry is a session start or an exchange.
type TimelineEntry struct {
	TS             time.Time `json:"ts"`
	Kind           string    `json:"kind"` // session_start or exchange
	Platform       string    `json:"platform"`
	Project        string    `json:"project"`
	SessionID      string    `json:"session_id"`
	Title          string    `json:"title"`
	ExchangeNumber *int64    `json:"exchange_number"` // nil for a session start
	AgentID        string    `json:"agent_id"`
	Prompt         string    `json:"prompt"` // the prompt's first line
	Tokens
}

// Timeline returns the session starts and exchanges in the window, oldest
// first.
func (d *DB) Timeline(ctx context.Context, opt TimelineOptions) ([]TimelineEntry, error) {
	if err := checkWindow(opt.Since, opt.Until); err != nil {
		return nil, err
	}
	if err := d.need(ctx, "exchanges"); err != nil {
		return nil, err
	}
	var sess SessionRef
	if opt.Session != "" {
		var err error
		if sess, err = d.ResolveSession(ctx, opt.Session, opt.Platform, ""); err != nil {
			return nil, err
		}
		opt.Platform = sess.Platform
	}
	rows, err := d.querySessions(ctx, func(from string) (string, []any) {
		return timelineQuery(opt, sess.SessionID, from)
	})
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	out := []TimelineEntry{}
	for rows.Next() {
		var e TimelineEntry
		var ts sql.NullTime
		var num sql.NullInt64
		if err := rows.Scan(&ts, &e.Kind, &e.Platform, &e.Project, &e.SessionID, &e.Title, &num, &e.AgentID,
			&e.Prompt, &e.Input, &e.Output, &e.CacheCreation, &e.CacheRead); err != nil {
			return nil, sqlErr(err)
		}
		e.TS = utc(ts)
		if num.Valid {
			e.ExchangeNumber = &num.Int64
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlErr(err)
	}
	slices.Reverse(out)
	return out, nil
}

// timelineQuery builds the SQL of Timeline for one session or (session
// "") all, reading the sessions view's rows from sessions (the view, or
// its query over the session cache).
func timelineQuery(opt TimelineOptions, session, sessions string) (string, []any) {
	// The sessions the entries belong to, for their titles and starts.
	var sw where
	sw.eq("platform", opt.Platform)
	sw.eq("session_id", session)
	// Exchanges in the window. The numbering window of the exchanges view
	// is partitioned by platform and session, so those filters reach the
	// files; date and ts are filtered above it.
	var ew where
	ew.eq("e.platform", opt.Platform)
	ew.eq("e.session_id", session)
	ew.contains("coalesce(e.project, s.project)", opt.Project)
	if !opt.Subagents {
		ew.add("NOT e.sidechain")
	}
	ew.window("e.ts", opt.Since, opt.Until, false)
	if !opt.Since.IsZero() {
		ew.add("e.date >= CAST(? AS DATE)", opt.Since.UTC().Format(time.DateOnly))
	}
	if !opt.Until.IsZero() {
		ew.add("e.date <= CAST(? AS DATE)", opt.Until.UTC().Format(time.DateOnly))
	}
	// Session starts in the window.
	var stw where
	stw.add("first_ts IS NOT NULL")
	stw.contains("project", opt.Project)
	stw.window("first_ts", opt.Since, opt.Until, false)

	q := `WITH s AS MATERIALIZED (
  SELECT platform, session_id, coalesce(title, '') AS title, coalesce(project, '') AS project, first_ts
  FROM ` + sessions + sw.sql() + `
)
SELECT ts, kind, platform, project, session_id, title, exchange_number, agent_id, prompt,
  input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens
FROM (
  SELECT e.ts, 'exchange' AS kind, e.platform, coalesce(e.project, s.project, '') AS project, e.session_id,
    coalesce(s.title, '') AS title, e.exchange_number, coalesce(e.agent_id, '') AS agent_id,
    coalesce(split_part(trim(e.prompt), chr(10), 1), '') AS prompt,
    e.input_tokens, e.output_tokens, e.cache_creation_tokens, e.cache_read_tokens, 1 AS ord
  FROM exchanges e LEFT JOIN s USING (platform, session_id)` + ew.sql() + `
  UNION ALL
  SELECT first_ts, 'session_start', platform, project, session_id, title, NULL, '', '', 0, 0, 0, 0, 0
  FROM s` + stw.sql() + `
)
ORDER BY ts DESC, ord DESC, session_id DESC, agent_id DESC, exchange_number DESC`
	args := append(append(sw.args, ew.args...), stw.args...)
	all := &where{args: args}
	q += limit(all, opt.Limit)
	return q, all.args
}
