package query

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// FileSession is one session that touched the files a path names.
type FileSession struct {
	SessionHead
	Refs    int64    `json:"refs"`    // references to the files
	Actions string   `json:"actions"` // "edit 3, read 5"
	Paths   []string `json:"paths"`   // the files, as the tools named them
}

// FilesOptions select the sessions of Files.
type FilesOptions struct {
	// Path is matched against every referenced file: an exact path, a
	// suffix ("auth.ts", "src/auth.ts") or any part of one.
	Path         string
	Since, Until time.Time
	Platform     string
	Project      string
	Limit        int
}

// Files lists the sessions whose tools read, wrote, edited, deleted or
// searched a file matching the path, the most recent first.
func (d *DB) Files(ctx context.Context, opt FilesOptions) ([]FileSession, error) {
	if err := d.need(ctx, "file_refs"); err != nil {
		return nil, err
	}
	if opt.Path == "" {
		return nil, argErrorf("no path given")
	}
	if err := checkWindow(opt.Since, opt.Until); err != nil {
		return nil, err
	}
	var w where
	w.add("contains(path, ?)", opt.Path)
	w.eq("platform", opt.Platform)
	w.contains("project", opt.Project)
	w.window("ts", opt.Since, opt.Until, true)
	q := `WITH f AS (
  SELECT platform, session_id, max(ts) AS last_ts, min(ts) AS first_ts, count(*) AS refs,
    string_agg(action || ' ' || n, ', ' ORDER BY n DESC, action) AS actions, list_sort(list_distinct(flatten(list(paths)))) AS paths
  FROM (
    SELECT platform, session_id, action, count(*) AS n, max(ts) AS ts, min(ts) AS first_ts, list(DISTINCT path) AS paths
    FROM file_refs` + w.sql() + `
    GROUP BY ALL
  ) GROUP BY ALL
)
SELECT f.last_ts, f.first_ts, f.platform, f.session_id, coalesce(s.title, ''), coalesce(s.project, ''), f.refs, f.actions, f.paths
FROM f LEFT JOIN {sessions} s USING (platform, session_id)
ORDER BY f.last_ts DESC, f.session_id` + limit(&w, opt.Limit)
	rows, err := d.querySessions(ctx, func(from string) (string, []any) { return strings.ReplaceAll(q, "{sessions}", from), w.args })
	if err != nil {
		return nil, sqlErr(err)
	}
	return scanAll(rows, func(s *FileSession) error {
		return s.scan(rows, &s.Refs, &s.Actions, (*stringList)(&s.Paths))
	})
}

// Decision is one row of Decisions.
type Decision struct {
	TS         time.Time `json:"ts"`
	Confidence float64   `json:"confidence"`
	Status     string    `json:"status"`
	Text       string    `json:"text"`
	Context    string    `json:"context"` // the prompt it answered
	Role       string    `json:"role"`
	Platform   string    `json:"platform"`
	SessionID  string    `json:"session_id"`
	Title      string    `json:"title"`
	Project    string    `json:"project"`
	Patterns   []string  `json:"patterns"`
	ExchangeID string    `json:"exchange_id"`
}

// DecisionsOptions select Decisions.
type DecisionsOptions struct {
	Since, Until time.Time
	Platform     string
	Project      string
	Session      string // a session id (resolved by the caller)
	// MinConfidence keeps decisions at least this sure; 0 means 0.8 (the
	// decisions, not the candidates).
	MinConfidence float64
	Limit         int
}

// Decisions lists the decisions found in the conversations, the most
// recent first.
func (d *DB) Decisions(ctx context.Context, opt DecisionsOptions) ([]Decision, error) {
	if err := d.need(ctx, "decisions"); err != nil {
		return nil, err
	}
	if err := checkWindow(opt.Since, opt.Until); err != nil {
		return nil, err
	}
	if opt.MinConfidence == 0 {
		opt.MinConfidence = 0.8
	}
	var w where
	w.add("confidence >= ?", opt.MinConfidence)
	w.eq("platform", opt.Platform)
	w.eq("session_id", opt.Session)
	w.contains("project", opt.Project)
	w.window("ts", opt.Since, opt.Until, true)
	q := `SELECT d.ts, d.confidence, d.status, d.text, coalesce(d.context, ''), d.role, d.platform, d.session_id,
  coalesce(s.title, ''), coalesce(d.project, ''), coalesce(d.patterns, []), coalesce(d.exchange_id, '')
FROM (SELECT * FROM decisions` + w.sql() + `) d
LEFT JOIN (SELECT platform, session_id, title FROM {sessions}) s USING (platform, session_id)
ORDER BY d.ts DESC, d.id` + limit(&w, opt.Limit)
	rows, err := d.querySessions(ctx, func(from string) (string, []any) { return strings.ReplaceAll(q, "{sessions}", from), w.args })
	if err != nil {
		return nil, sqlErr(err)
	}
	return scanAll(rows, func(x *Decision) error {
		var ts sql.NullTime
		if err := rows.Scan(&ts, &x.Confidence, &x.Status, &x.Text, &x.Context, &x.Role, &x.Platform, &x.SessionID,
			&x.Title, &x.Project, (*stringList)(&x.Patterns), &x.ExchangeID); err != nil {
			return err
		}
		x.TS = utc(ts)
		return nil
	})
}
