package query

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
)

// Tokens are token counts as the platform reported them.
type Tokens struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheCreation int64 `json:"cache_creation_tokens"`
	CacheRead     int64 `json:"cache_read_tokens"`
}

// SessionHead starts each row of a list of sessions, the most recently
// active first (Sessions, Files): when the session was last and first
// active, and which session it is.
type SessionHead struct {
	LastTS    time.Time `json:"last_ts"`
	FirstTS   time.Time `json:"first_ts"`
	Platform  string    `json:"platform"`
	SessionID string    `json:"session_id"`
	Title     string    `json:"title"`
	Project   string    `json:"project"`
}

// scan scans a row of rows that holds the head's columns in its order,
// then more, into h and more's destinations.
func (h *SessionHead) scan(rows *sql.Rows, more ...any) error {
	var last, first sql.NullTime
	if err := rows.Scan(append([]any{&last, &first, &h.Platform, &h.SessionID, &h.Title, &h.Project}, more...)...); err != nil {
		return err
	}
	h.LastTS, h.FirstTS = utc(last), utc(first)
	return nil
}

// Session is one row of Sessions.
type Session struct {
	SessionHead
	Exchanges   int64 `json:"exchange_count"` // main-thread prompts and what followed each
	Messages    int64 `json:"message_count"`
	ToolCalls   int64 `json:"tool_count"`
	Subagents   int64 `json:"subagents"`
	Compactions int64 `json:"compactions"`
	Tokens
	Models    []string `json:"models"`
	GitBranch string   `json:"git_branch"`
	Cwd       string   `json:"cwd"`
	// PullRequests are the pull requests the session linked, by URL.
	PullRequests []string `json:"pull_requests"`
}

// SessionFilter selects sessions. Zero fields select everything.
type SessionFilter struct {
	Platform string // exact platform name (claude_code, codex …)
	Project  string // part of the project path
	// Since and Until keep the sessions active within [Since, Until): the
	// last message at or after Since, the first before Until.
	Since, Until time.Time
	Limit        int // at most this many, the most recently active first; 0: all
}

// Sessions lists sessions, the most recently active first. A session with
// neither a message nor a title (a Cursor composer opened and left empty)
// is no session to list: the sessions listed are those stats and
// capabilities count.
func (d *DB) Sessions(ctx context.Context, f SessionFilter) ([]Session, error) {
	if err := checkWindow(f.Since, f.Until); err != nil {
		return nil, err
	}
	var w where
	w.add("(message_count > 0 OR coalesce(title, '') <> '')")
	w.eq("platform", f.Platform)
	w.contains("project", f.Project)
	if !f.Since.IsZero() {
		w.add("last_ts >= CAST(? AS TIMESTAMPTZ)", f.Since.UTC())
	}
	if !f.Until.IsZero() {
		w.add("first_ts < CAST(? AS TIMESTAMPTZ)", f.Until.UTC())
	}
	lim := limit(&w, f.Limit)
	rows, err := d.querySessions(ctx, func(from string) (string, []any) {
		return `SELECT last_ts, first_ts, platform, session_id, coalesce(title, ''), coalesce(project, ''),
  exchange_count, message_count, CAST(tool_count AS BIGINT), subagents, compactions,
  CAST(input_tokens AS BIGINT), CAST(output_tokens AS BIGINT),
  CAST(cache_creation_tokens AS BIGINT), CAST(cache_read_tokens AS BIGINT),
  coalesce(models, []), coalesce(git_branch, ''), coalesce(cwd, ''), coalesce(pull_requests, [])
FROM ` + from + w.sql() + `
ORDER BY last_ts DESC NULLS LAST, session_id` + lim, w.args
	})
	if err != nil {
		return nil, sqlErr(err)
	}
	return scanAll(rows, func(s *Session) error {
		return s.scan(rows, &s.Exchanges, &s.Messages, &s.ToolCalls, &s.Subagents, &s.Compactions,
			&s.Input, &s.Output, &s.CacheCreation, &s.CacheRead,
			(*stringList)(&s.Models), &s.GitBranch, &s.Cwd, (*stringList)(&s.PullRequests))
	})
}

// SessionRef names a session.
type SessionRef struct {
	Platform  string    `json:"platform"`
	SessionID string    `json:"session_id"`
	Title     string    `json:"title"`
	Project   string    `json:"project"`
	FirstTS   time.Time `json:"first_ts"`
	LastTS    time.Time `json:"last_ts"`
}

// maxCandidates bounds the sessions an ambiguous prefix error lists.
const maxCandidates = 10

// ResolveSession finds the session a full id or an id prefix names
// (narrowed to a platform if one is given), or with an empty id the most
// recently active session (narrowed to the platform and project if given).
// A prefix that matches no session or several is an *ArgError listing the
// candidates.
func (d *DB) ResolveSession(ctx context.Context, id, platform, project string) (SessionRef, error) {
	var w where
	w.eq("platform", platform)
	if id == "" {
		w.contains("project", project)
		ref, err := d.latestSession(ctx, w, platform)
		if err == sql.ErrNoRows {
			what := "the lake has no sessions"
			if platform != "" || project != "" {
				what = "no session matches the platform and project given"
			}
			return SessionRef{}, argErrorf("%s", what)
		}
		if err != nil {
			return SessionRef{}, sqlErr(err)
		}
		return d.describe(ctx, ref)
	}
	w.add("starts_with(session_id, ?)", id)
	// The sessions whose ids start so, and their last message: from the
	// session cache's parts (a row per partition and session) when there
	// is one, else from every message of the lake.
	q := ""
	if !d.noSessionCache {
		if parts, _, err := d.sessionSources(ctx); err == nil {
			q = `SELECT platform, session_id, max(last_ts) AS last FROM ` + parts
			w.add("message_count IS NOT NULL")
		}
	}
	if q == "" {
		if err := d.need(ctx, "messages"); err != nil {
			return SessionRef{}, err
		}
		q = `SELECT platform, session_id, max(ts) AS last FROM messages`
	}
	rows, err := d.db.QueryContext(ctx, q+w.sql()+
		` GROUP BY ALL ORDER BY last DESC, session_id LIMIT `+fmt.Sprint(maxCandidates+1), w.args...)
	if err != nil {
		return SessionRef{}, sqlErr(err)
	}
	defer rows.Close()
	var cands, exact []SessionRef
	for rows.Next() {
		var c SessionRef
		var last sql.NullTime
		if err := rows.Scan(&c.Platform, &c.SessionID, &last); err != nil {
			return SessionRef{}, sqlErr(err)
		}
		c.LastTS = utc(last)
		cands = append(cands, c)
		if c.SessionID == id {
			exact = append(exact, c)
		}
	}
	if err := rows.Err(); err != nil {
		return SessionRef{}, sqlErr(err)
	}
	switch {
	case len(exact) == 1:
		return d.describe(ctx, exact[0])
	case len(cands) == 1:
		return d.describe(ctx, cands[0])
	case len(cands) == 0:
		where := ""
		if platform != "" {
			where = " on platform " + platform
		}
		return SessionRef{}, argErrorf("no session%s has an id starting with %q", where, id)
	}
	if len(exact) > 1 {
		cands = exact
	}
	var list []string
	for i, c := range cands {
		if i == maxCandidates {
			list = append(list, "…")
			break
		}
		list = append(list, fmt.Sprintf("%s (%s, last active %s)", c.SessionID, c.Platform, c.LastTS.Format("2006-01-02 15:04")))
	}
	return SessionRef{}, argErrorf("session %q is ambiguous: it matches %s", id, strings.Join(list, ", "))
}

// latestSession returns the session of the latest message that w keeps.
// The newest date partitions are read first: a message found there with
// a time is later than any in older partitions (a message's date
// partition is its UTC day), so most lookups read a few files instead of
// every one.
func (d *DB) latestSession(ctx context.Context, w where, platform string) (SessionRef, error) {
	const q = `SELECT platform, session_id, ts IS NOT NULL FROM %s%s ORDER BY ts DESC, session_id LIMIT 1`
	var ref SessionRef
	parts, _ := layout.Partitions(d.lake, layout.TableMessages, platform) // newest first
	dates := layout.DatesOf(parts)
	for _, n := range []int{1, 8, 64} {
		if n >= len(dates) {
			break
		}
		// The partitions' files named one by one: no glob of the table.
		src, err := catalog.PartitionSource(d.lake, "messages", fromDate(parts, dates[n-1]))
		if err != nil {
			break
		}
		var timed bool
		err = d.db.QueryRowContext(ctx, fmt.Sprintf(q, src, w.sql()), w.args...).Scan(&ref.Platform, &ref.SessionID, &timed)
		if err == nil && timed {
			return ref, nil
		}
		if err != nil && err != sql.ErrNoRows {
			return ref, err
		}
	}
	if err := d.need(ctx, "messages"); err != nil {
		return ref, err
	}
	var timed bool
	err := d.db.QueryRowContext(ctx, fmt.Sprintf(q, "messages", w.sql()), w.args...).Scan(&ref.Platform, &ref.SessionID, &timed)
	return ref, err
}

// fromDate returns the partitions of date cut and later of parts, which
// are newest first.
func fromDate(parts []layout.Partition, cut string) []layout.Partition {
	k := 0
	for k < len(parts) && parts[k].Date >= cut {
		k++
	}
	return parts[:k]
}

// describe fills in a session's title, project and times.
func (d *DB) describe(ctx context.Context, ref SessionRef) (SessionRef, error) {
	var first, last sql.NullTime
	if err := d.oneSession(ctx, ref, `coalesce(title, ''), coalesce(project, ''), first_ts, last_ts`,
		&ref.Title, &ref.Project, &first, &last); err != nil {
		return ref, err
	}
	ref.FirstTS, ref.LastTS = utc(first), utc(last)
	return ref, nil
}

// sessionMeta returns a session's plan slug and summary labels.
func (d *DB) sessionMeta(ctx context.Context, ref SessionRef) (string, []string, error) {
	var slug sql.NullString
	var labels []string
	err := d.oneSession(ctx, ref, `slug, coalesce(labels, [])`, &slug, (*stringList)(&labels))
	return slug.String, labels, err
}

// oneSession scans columns of a session's row of the sessions view, read
// from the session cache or from that session's rows only; a session not
// in the lake leaves dest as it is.
func (d *DB) oneSession(ctx context.Context, ref SessionRef, cols string, dest ...any) error {
	if !d.noSessionCache {
		// From the session cache: two small files, not every partition.
		if parts, meta, err := d.sessionSources(ctx); err == nil {
			// Each file's rows of this session only, before the sessions'
			// aggregates: after them, DuckDB would aggregate every session.
			one := func(src string) string { return "(SELECT * FROM " + src + " WHERE platform = $1 AND session_id = $2)" }
			err := d.db.QueryRowContext(ctx, `SELECT `+cols+` FROM (`+rollup.SessionsFromPartsSQL(one(parts), one(meta))+`)
WHERE platform = $1 AND session_id = $2`, ref.Platform, ref.SessionID).Scan(dest...)
			if err == nil || err == sql.ErrNoRows {
				return nil
			}
		}
	}
	if err := d.need(ctx, "session_rows", "messages", "exchange_rows"); err != nil {
		return err
	}
	err := d.db.QueryRowContext(ctx, `SELECT `+cols+` FROM (`+catalog.OneSessionSQL()+`)`, ref.Platform, ref.SessionID).Scan(dest...)
	if err == sql.ErrNoRows {
		return nil
	}
	return sqlErr(err)
}

// where builds a WHERE clause whose values are all parameters.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// eq adds col = v unless v is empty.
func (w *where) eq(col, v string) {
	if v != "" {
		w.add(col+" = ?", v)
	}
}

// contains adds a substring match on col unless v is empty.
func (w *where) contains(col, v string) {
	if v != "" {
		w.add("contains("+col+", ?)", v)
	}
}

// window keeps rows with ts in [since, until). With partitioned set it
// also filters the date partition column, which is what lets DuckDB skip
// the files outside the window (ts alone would not).
func (w *where) window(ts string, since, until time.Time, partitioned bool) {
	if !since.IsZero() {
		if partitioned {
			w.add("date >= CAST(? AS DATE)", since.UTC().Format(time.DateOnly))
		}
		w.add(ts+" >= CAST(? AS TIMESTAMPTZ)", since.UTC())
	}
	if !until.IsZero() {
		if partitioned {
			w.add("date <= CAST(? AS DATE)", until.UTC().Format(time.DateOnly))
		}
		w.add(ts+" < CAST(? AS TIMESTAMPTZ)", until.UTC())
	}
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return "\nWHERE " + strings.Join(w.conds, "\n  AND ")
}

// limit returns a LIMIT clause with its value as a parameter.
func limit(w *where, n int) string {
	if n <= 0 {
		return ""
	}
	w.args = append(w.args, n)
	return "\nLIMIT ?"
}

func utc(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// stringList scans a VARCHAR[].
type stringList []string

func (l *stringList) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*l = []string{}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		*l = out
	default:
		return fmt.Errorf("cannot scan %T into a string list", v)
	}
	return nil
}

func checkWindow(since, until time.Time) error {
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return argErrorf("the window is empty: since (%s) is not before until (%s)",
			since.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))
	}
	return nil
}

// sessionsFrom is the source of the sessions view's rows: the query of
// the view over the session cache (sessionSources) or, with view or should
// the cache fail, the view itself.
func (d *DB) sessionsFrom(ctx context.Context, view bool) (string, error) {
	if !view && !d.noSessionCache {
		if parts, meta, err := d.sessionSources(ctx); err == nil {
			return "(" + rollup.SessionsFromPartsSQL(parts, meta) + ")", nil
		}
	}
	if err := d.need(ctx, "sessions"); err != nil {
		return "", err
	}
	return "sessions", nil
}

// sessionRowsFrom is the source of the session rollups' rows
// (rollup.SessionMetaRowsSQL's columns): the session cache's copy or, with
// view or should the cache fail, the session_rows view.
func (d *DB) sessionRowsFrom(ctx context.Context, view bool) (string, error) {
	if !view && !d.noSessionCache {
		if _, meta, err := d.sessionSources(ctx); err == nil {
			return meta, nil
		}
	}
	if err := d.need(ctx, "session_rows"); err != nil {
		return "", err
	}
	return "session_rows", nil
}

// querySessions runs the query build makes over a source of the sessions
// view's rows (sessionsFrom); see queryCached.
func (d *DB) querySessions(ctx context.Context, build func(from string) (string, []any)) (*sql.Rows, error) {
	return d.queryCached(ctx, func(view bool) (string, error) { return d.sessionsFrom(ctx, view) }, "sessions", build)
}

// queryCached runs the query build makes over source(false), a source the
// session cache answers; should it fail there (a file another process
// replaced meanwhile), it runs again over source(true), the view named
// view.
func (d *DB) queryCached(ctx context.Context, source func(view bool) (string, error), view string,
	build func(from string) (string, []any)) (*sql.Rows, error) {
	from, err := source(false)
	if err != nil {
		return nil, err
	}
	q, args := build(from)
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil && from != view && ctx.Err() == nil {
		if from, err = source(true); err != nil {
			return nil, err
		}
		q, args = build(from)
		rows, err = d.db.QueryContext(ctx, q, args...)
	}
	return rows, err
}
