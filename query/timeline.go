package query

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
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
	var sess SessionRef
	if opt.Session != "" {
		var err error
		if sess, err = d.ResolveSession(ctx, opt.Session, opt.Platform, ""); err != nil {
			return nil, err
		}
		opt.Platform = sess.Platform
	}
	if opt.Limit > 0 && sess.SessionID == "" && !d.noSessionCache {
		// The latest entries are in the latest partitions: read those
		// first, and number the exchanges found over their sessions only.
		parts, _ := layout.Partitions(d.lake, layout.TableExchanges, opt.Platform) // newest first
		dates := layout.DatesOf(parts)
		for _, n := range []int{8, 64} {
			if n >= len(dates) {
				break
			}
			out, ok, err := d.timelineSince(ctx, opt, parts, dates[n-1])
			if err != nil {
				return nil, err
			}
			if ok {
				return out, nil
			}
		}
	}
	if err := d.need(ctx, "exchanges"); err != nil {
		return nil, err
	}
	out, _, err := d.timeline(ctx, opt, sess.SessionID, "exchanges", "")
	return out, err
}

// timelineSince is Timeline over the exchanges of the date partitions
// (of parts, newest first) from cut on, their files named one by one. ok
// says that is the answer: the window's latest Limit entries
// are all there (the last of them is from cut on; every exchange before cut
// is older).
func (d *DB) timelineSince(ctx context.Context, opt TimelineOptions, parts []layout.Partition, cut string) ([]TimelineEntry, bool, error) {
	day, err := time.Parse(time.DateOnly, cut)
	if err != nil {
		return nil, false, nil
	}
	recent, err := catalog.PartitionSource(d.lake, "exchange_rows", fromDate(parts, cut))
	if err != nil {
		return nil, false, err
	}
	out, ids, err := d.timeline(ctx, opt, "", recent, cut)
	if err != nil || len(out) < opt.Limit || out[0].TS.Before(day) {
		return nil, false, err
	}
	// Number the exchanges over their sessions' partitions.
	var refs []SessionRef
	for _, e := range out {
		if r := (SessionRef{Platform: e.Platform, SessionID: e.SessionID}); e.Kind == KindExchange && !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	if len(refs) == 0 {
		return out, true, nil
	}
	_, ps, ok := d.partitionsOf(ctx, refs)
	if !ok {
		return nil, false, nil
	}
	src, err := catalog.PartitionSource(d.lake, "exchange_rows", ps)
	if err != nil {
		return nil, false, nil
	}
	match, args := sessionsMatch(refs)
	rows, err := d.db.QueryContext(ctx, `SELECT id, `+catalog.ExchangeNumber+`
FROM `+src+`
WHERE `+match, args...)
	if err != nil {
		return nil, false, nil
	}
	defer rows.Close()
	numbers := map[string]int64{}
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, false, nil
		}
		numbers[id] = n
	}
	if rows.Err() != nil {
		return nil, false, nil
	}
	for i := range out {
		if out[i].Kind != KindExchange {
			continue
		}
		n, ok := numbers[ids[i]]
		if !ok {
			return nil, false, nil
		}
		out[i].ExchangeNumber = &n
	}
	return out, true, nil
}

// timeline runs Timeline's query (see timelineQuery) over the exchanges
// source and returns the entries, oldest first, with the exchanges' ids.
func (d *DB) timeline(ctx context.Context, opt TimelineOptions, session, exchanges, cut string) ([]TimelineEntry, []string, error) {
	rows, err := d.querySessions(ctx, func(from string) (string, []any) {
		return timelineQuery(opt, session, from, exchanges, cut)
	})
	if err != nil {
		return nil, nil, sqlErr(err)
	}
	defer rows.Close()
	out := []TimelineEntry{}
	var ids []string
	for rows.Next() {
		var e TimelineEntry
		var ts sql.NullTime
		var num sql.NullInt64
		var id string
		if err := rows.Scan(&ts, &e.Kind, &e.Platform, &e.Project, &e.SessionID, &e.Title, &num, &e.AgentID,
			&e.Prompt, &e.Input, &e.Output, &e.CacheCreation, &e.CacheRead, &id); err != nil {
			return nil, nil, sqlErr(err)
		}
		e.TS = utc(ts)
		if num.Valid {
			e.ExchangeNumber = &num.Int64
		}
		out = append(out, e)
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, sqlErr(err)
	}
	slices.Reverse(out)
	slices.Reverse(ids)
	return out, ids, nil
}

// timelineQuery builds the SQL of Timeline for one session or (session
// "") all, reading the sessions view's rows from sessions (the view, or
// its query over the session cache) and the exchanges from exchanges (the
// view). With cut (a date), exchanges is a source of exchange_rows from
// cut on, read unnumbered and ordered by id where the view orders by
// number (the same order: a thread is numbered by time, then id); its last
// column is each exchange's id.
func timelineQuery(opt TimelineOptions, session, sessions, exchanges, cut string) (string, []any) {
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
	number, order := "e.exchange_number", "exchange_number DESC"
	if cut != "" {
		number, order = "CAST(NULL AS BIGINT)", "id DESC"
		ew.add("e.date >= CAST(? AS DATE)", cut)
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
  input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, id
FROM (
  SELECT e.ts, 'exchange' AS kind, e.platform, coalesce(e.project, s.project, '') AS project, e.session_id,
    coalesce(s.title, '') AS title, ` + number + ` AS exchange_number, coalesce(e.agent_id, '') AS agent_id,
    coalesce(split_part(trim(e.prompt), chr(10), 1), '') AS prompt,
    e.input_tokens, e.output_tokens, e.cache_creation_tokens, e.cache_read_tokens, 1 AS ord, e.id
  FROM ` + exchanges + ` e LEFT JOIN s USING (platform, session_id)` + ew.sql() + `
  UNION ALL
  SELECT first_ts, 'session_start', platform, project, session_id, title, NULL, '', '', 0, 0, 0, 0, 0, ''
  FROM s` + stw.sql() + `
)
ORDER BY ts DESC, ord DESC, session_id DESC, agent_id DESC, ` + order
	args := append(append(sw.args, ew.args...), stw.args...)
	all := &where{args: args}
	q += limit(all, opt.Limit)
	return q, all.args
}
