package query

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/english"
	"github.com/pos-lake/pos/load/catalog"
)

// segment is one piece of a session in time order: an exchange, a
// subagent's report or a compaction summary.
type segment struct {
	kind      string // exchange, report, compaction
	number    int64  // the exchange's number in its thread
	agent     string // the thread's agent, for subagent exchanges
	ts        time.Time
	end       time.Time // an exchange's last message
	title     string    // a report's
	prompt    string
	response  string // an exchange's answer; a report's or compaction's text
	tools     []string
	toolCount int64
	files     []string
}

// material is what a summary is made from.
type material struct {
	ref       SessionRef
	segments  []segment
	labels    []string
	exchanges int
	first     time.Time
	last      time.Time
}

// summaryMaterial reads a session's exchanges (the main thread's, or its
// subagents' when it has no main thread in the lake), its subagents'
// reports, its compaction summaries and its labels.
func (d *DB) summaryMaterial(ctx context.Context, ref SessionRef) (*material, error) {
	m := &material{ref: ref}
	messages, exchangeRows, err := d.sessionViews(ctx, ref)
	if err != nil {
		return nil, err
	}
	exchanges := func(subagents bool) error {
		rows, err := d.db.QueryContext(ctx, `SELECT exchange_number, ts, ts_end, coalesce(agent_id, ''), coalesce(prompt, ''),
  coalesce(response, ''), coalesce(tools, []), tool_count, coalesce(files, [])
FROM `+catalog.OneSessionExchangesFrom(exchangeRows)+`
WHERE $3 OR NOT sidechain
ORDER BY ts, id`, ref.Platform, ref.SessionID, subagents)
		if err != nil {
			return sqlErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			s := segment{kind: "exchange"}
			var ts, end sql.NullTime
			if err := rows.Scan(&s.number, &ts, &end, &s.agent, &s.prompt, &s.response, (*stringList)(&s.tools), &s.toolCount,
				(*stringList)(&s.files)); err != nil {
				return sqlErr(err)
			}
			s.ts, s.end = utc(ts), utc(end)
			m.segments = append(m.segments, s)
			m.exchanges++
		}
		return sqlErr(rows.Err())
	}
	if err := exchanges(false); err != nil {
		return nil, err
	}
	if m.exchanges == 0 {
		// Only subagents' threads: numbered in time order across them.
		if err := exchanges(true); err != nil {
			return nil, err
		}
		for i := range m.segments {
			m.segments[i].number = int64(i + 1)
		}
	}
	texts := func(kind, q string) error {
		rows, err := d.db.QueryContext(ctx, q, ref.Platform, ref.SessionID)
		if err != nil {
			return sqlErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			s := segment{kind: kind}
			var ts sql.NullTime
			if err := rows.Scan(&ts, &s.title, &s.response); err != nil {
				return sqlErr(err)
			}
			s.ts = utc(ts)
			if strings.TrimSpace(s.response) != "" {
				m.segments = append(m.segments, s)
			}
		}
		return sqlErr(rows.Err())
	}
	if err := texts("report", `SELECT ts, coalesce(title, ''), coalesce(text, '') FROM documents
WHERE platform = ? AND session_id = ? AND content_type = 'subagent_summary' ORDER BY ts, id`); err != nil {
		return nil, err
	}
	if err := texts("compaction", `SELECT ts, '', coalesce(text, '') FROM `+messages+`
WHERE platform = ? AND session_id = ? AND content_type = 'compact_summary' ORDER BY ts, id`); err != nil {
		return nil, err
	}
	// In time order; an exchange before the reports and summaries of the
	// same instant.
	kindOrder := map[string]int{"exchange": 0, "report": 1, "compaction": 2}
	slices.SortStableFunc(m.segments, func(a, b segment) int {
		if c := a.ts.Compare(b.ts); c != 0 {
			return c
		}
		return kindOrder[a.kind] - kindOrder[b.kind]
	})
	if _, m.labels, err = d.sessionMeta(ctx, ref); err != nil {
		return nil, err
	}
	for _, s := range m.segments {
		if m.first.IsZero() || s.ts.Before(m.first) {
			m.first = s.ts
		}
		m.last = maxTime(m.last, s.ts)
		m.last = maxTime(m.last, s.end)
	}
	return m, nil
}

// facts is one line about the session: its size and span, the tools it
// used most and the files it touched most.
func (m *material) facts() string {
	var parts []string
	span := english.Plural(m.exchanges, "exchange")
	if !m.first.IsZero() {
		span += " from " + m.first.UTC().Format("2006-01-02 15:04")
		if m.last.Sub(m.first) > time.Minute {
			to := m.last.UTC().Format("2006-01-02 15:04")
			if m.last.UTC().Format(time.DateOnly) == m.first.UTC().Format(time.DateOnly) {
				to = m.last.UTC().Format("15:04")
			}
			span += " to " + to
		}
		span += " UTC"
	}
	parts = append(parts, span)
	var reports, compactions int
	tools, files := counter{}, counter{}
	for _, s := range m.segments {
		switch s.kind {
		case "report":
			reports++
		case "compaction":
			compactions++
		}
		for _, t := range s.tools {
			tools.add(t)
		}
		for _, f := range s.files {
			files.add(relPath(m.ref.Project, f))
		}
	}
	if reports > 0 {
		parts = append(parts, english.Plural(reports, "subagent report"))
	}
	if compactions > 0 {
		parts = append(parts, english.Plural(compactions, "compaction"))
	}
	if top := tools.top(5); len(top) > 0 {
		parts = append(parts, "tools most used: "+strings.Join(top, ", "))
	}
	if top := files.top(5); len(top) > 0 {
		parts = append(parts, "files most touched: "+strings.Join(top, ", "))
	}
	return strings.Join(parts, "; ") + "."
}

// counter counts names in first-seen order.
type counter struct {
	order []string
	n     map[string]int
}

func (c *counter) add(s string) {
	if s == "" {
		return
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[s] == 0 {
		c.order = append(c.order, s)
	}
	c.n[s]++
}

// top lists the k most counted names (ties in first-seen order), with
// their counts: "Bash (12)".
func (c *counter) top(k int) []string {
	names := slices.Clone(c.order)
	slices.SortStableFunc(names, func(a, b string) int { return c.n[b] - c.n[a] })
	var out []string
	for _, n := range names[:min(k, len(names))] {
		out = append(out, fmt.Sprintf("%s (%d)", n, c.n[n]))
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// relPath shows a path under the project relative to it.
func relPath(project, path string) string {
	if project == "" || project == "/" {
		return path
	}
	if path == project {
		return ""
	}
	if rest, ok := strings.CutPrefix(path, strings.TrimSuffix(project, "/")+"/"); ok {
		return rest
	}
	return path
}
