package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// StatsKeys are the keys Stats can group by, each with the column
// expression it stands for. Only these expressions are ever written into
// the SQL; every value goes in as a parameter.
var StatsKeys = []string{"day", "week", "month", "model", "project", "platform", "session"}

var statsExpr = map[string]string{
	"day":      "strftime(date, '%Y-%m-%d')",                     // the UTC day (the date partition)
	"week":     "strftime(date_trunc('week', date), '%Y-%m-%d')", // the Monday the ISO week starts on
	"month":    "strftime(date, '%Y-%m')",
	"model":    "coalesce(model, '')",
	"project":  "coalesce(project, '')",
	"platform": "platform",
	"session":  "session_id",
}

// StatsOptions choose what Stats counts and how it groups.
type StatsOptions struct {
	// By lists the grouping keys, in order (see StatsKeys). None: one row
	// of totals.
	By []string
	// Since and Until bound the window [Since, Until) on message time.
	Since, Until time.Time
	Platform     string // exact platform name
	Project      string // part of the project path
	Limit        int    // at most this many rows; 0: all
}

// StatsRow is one group's counts.
type StatsRow struct {
	Key      []string `json:"key"`      // the group's value of each key of By, in order
	Messages int64    `json:"messages"` // assistant messages
	Sessions int64    `json:"sessions"` // distinct sessions
	Tokens
}

// StatsResult holds the rows of Stats, ordered by the keys.
type StatsResult struct {
	By   []string
	Rows []StatsRow
}

// Table lays the result out with a column per key, then the counts.
func (r *StatsResult) Table() *Table {
	t := &Table{}
	for _, k := range r.By {
		t.Columns = append(t.Columns, Column{Name: k, Type: "VARCHAR"})
	}
	for _, c := range []string{"messages", "sessions", "input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens"} {
		t.Columns = append(t.Columns, Column{Name: c, Type: "BIGINT"})
	}
	t.Rows = make([][]any, len(r.Rows))
	for i, row := range r.Rows {
		vals := make([]any, 0, len(t.Columns))
		for _, k := range row.Key {
			vals = append(vals, k)
		}
		t.Rows[i] = append(vals, row.Messages, row.Sessions, row.Input, row.Output, row.CacheCreation, row.CacheRead)
	}
	return t
}

// ParseBy splits a comma-separated list of grouping keys and checks it.
func ParseBy(s string) ([]string, error) {
	var by []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(strings.ToLower(k)); k != "" {
			by = append(by, k)
		}
	}
	return by, checkBy(by)
}

func checkBy(by []string) error {
	for i, k := range by {
		if _, ok := statsExpr[k]; !ok {
			return argErrorf("cannot group by %q (use %s)", k, strings.Join(StatsKeys, ", "))
		}
		if slices.Contains(by[:i], k) {
			return argErrorf("grouping key %q given twice", k)
		}
	}
	return nil
}

// Stats sums the tokens of assistant messages (the placeholder model
// "<synthetic>" left out) and counts them, grouped by the keys of By.
// Time filters use the date partition, so only the files of the window
// are read.
func (d *DB) Stats(ctx context.Context, opt StatsOptions) (*StatsResult, error) {
	if err := checkBy(opt.By); err != nil {
		return nil, err
	}
	if err := checkWindow(opt.Since, opt.Until); err != nil {
		return nil, err
	}
	q, args := statsQuery(opt)
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	res := &StatsResult{By: slices.Clone(opt.By), Rows: []StatsRow{}}
	for rows.Next() {
		r := StatsRow{Key: make([]string, len(opt.By))}
		dest := make([]any, 0, len(opt.By)+6)
		for i := range r.Key {
			dest = append(dest, &r.Key[i])
		}
		dest = append(dest, &r.Messages, &r.Sessions, &r.Input, &r.Output, &r.CacheCreation, &r.CacheRead)
		if err := rows.Scan(dest...); err != nil {
			return nil, sqlErr(err)
		}
		res.Rows = append(res.Rows, r)
	}
	return res, sqlErr(rows.Err())
}

// statsQuery builds the SQL of Stats: the grouping keys come from the
// whitelist, every value is a parameter.
func statsQuery(opt StatsOptions) (string, []any) {
	var w where
	w.add("role = 'assistant'")
	w.add("coalesce(model, '') <> '<synthetic>'")
	w.eq("platform", opt.Platform)
	w.contains("project", opt.Project)
	w.window("ts", opt.Since, opt.Until, true)
	var sel []string
	for _, k := range opt.By {
		sel = append(sel, fmt.Sprintf("%s AS %q", statsExpr[k], k))
	}
	sel = append(sel, `count(*) AS messages`, `count(DISTINCT session_id) AS sessions`,
		`CAST(coalesce(sum(input_tokens), 0) AS BIGINT)`, `CAST(coalesce(sum(output_tokens), 0) AS BIGINT)`,
		`CAST(coalesce(sum(cache_creation_tokens), 0) AS BIGINT)`, `CAST(coalesce(sum(cache_read_tokens), 0) AS BIGINT)`)
	q := "SELECT " + strings.Join(sel, ", ") + "\nFROM messages" + w.sql()
	if n := len(opt.By); n > 0 {
		pos := make([]string, n)
		for i := range pos {
			pos[i] = fmt.Sprint(i + 1)
		}
		q += "\nGROUP BY " + strings.Join(pos, ", ") + "\nORDER BY " + strings.Join(pos, ", ")
	}
	q += limit(&w, opt.Limit)
	return q, w.args
}
