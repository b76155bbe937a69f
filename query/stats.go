package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/pricing"
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

// Column1h is the messages column that holds the part of
// cache_creation_tokens written to the 1-hour cache (Claude Code's
// usage.cache_creation.ephemeral_1h_input_tokens). A lake written before
// it existed has no such column: Stats then reads the split from the raw
// layer, exactly but more slowly.
const Column1h = "cache_creation_1h_tokens"

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
	// Prices prices the messages; nil: the embedded table
	// (pricing.Default).
	Prices *pricing.Table
}

// Costs are a group's cost in USD, by component, summed over its messages,
// each priced on its own (long-context tiers apply per request). A cost is
// nil when no message of the group has a price; when only some have one,
// it is the cost of those and StatsRow.Unpriced counts the others.
type Costs struct {
	Cost           *float64 `json:"cost"`
	InputCost      *float64 `json:"input_cost"`
	OutputCost     *float64 `json:"output_cost"`
	CacheWriteCost *float64 `json:"cache_creation_cost"`
	CacheReadCost  *float64 `json:"cache_read_cost"`
}

// StatsRow is one group's counts.
type StatsRow struct {
	Key      []string `json:"key"`      // the group's value of each key of By, in order
	Messages int64    `json:"messages"` // assistant messages
	Sessions int64    `json:"sessions"` // distinct sessions
	Tokens
	CacheCreation1h int64 `json:"cache_creation_1h_tokens"` // the part of CacheCreation written for 1 hour
	Costs
	Unpriced int64 `json:"unpriced_messages"` // messages of a model with no price
}

// StatsResult holds the rows of Stats, ordered by the keys.
type StatsResult struct {
	By   []string
	Rows []StatsRow
	// Unpriced counts the messages of each model that has no price.
	Unpriced map[string]int64
	// Notes say how the result was computed when it matters: a split of
	// cache writes read from the raw layer, models without a price.
	Notes []string
}

var statsCountCols = []string{"messages", "sessions", "input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", Column1h}
var statsCostCols = []string{"cost", "input_cost", "output_cost", "cache_creation_cost", "cache_read_cost"}

// Table lays the result out with a column per key, then the counts, the
// costs (NULL when unknown) and the number of unpriced messages.
func (r *StatsResult) Table() *Table {
	t := &Table{}
	for _, k := range r.By {
		typ := "VARCHAR"
		if k == "day" || k == "week" || k == "month" {
			typ = "DATE" // a table never cuts it
		}
		t.Columns = append(t.Columns, Column{Name: k, Type: typ})
	}
	for _, c := range statsCountCols {
		t.Columns = append(t.Columns, Column{Name: c, Type: "BIGINT"})
	}
	for _, c := range statsCostCols {
		t.Columns = append(t.Columns, Column{Name: c, Type: "DOUBLE"})
	}
	t.Columns = append(t.Columns, Column{Name: "unpriced_messages", Type: "BIGINT"})
	t.Rows = make([][]any, len(r.Rows))
	for i, row := range r.Rows {
		vals := make([]any, 0, len(t.Columns))
		for _, k := range row.Key {
			vals = append(vals, k)
		}
		vals = append(vals, row.Messages, row.Sessions, row.Input, row.Output, row.CacheCreation, row.CacheRead, row.CacheCreation1h)
		for _, c := range []*float64{row.Cost, row.InputCost, row.OutputCost, row.CacheWriteCost, row.CacheReadCost} {
			if c == nil {
				vals = append(vals, nil)
			} else {
				vals = append(vals, *c)
			}
		}
		t.Rows[i] = append(vals, row.Unpriced)
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

// split says where the 1-hour share of cache writes comes from.
type split int

const (
	splitColumn split = iota // the messages column Column1h
	splitRaw                 // the raw layer (lakes written before the column)
	splitNone                // nowhere: no message in the filter can have one
)

// Stats sums the tokens of assistant messages (the placeholder model
// "<synthetic>" left out), counts them and prices them, grouped by the
// keys of By. Time filters use the date partition, so only the files of
// the window are read.
//
// It is one query: each message is priced by joining its model, reduced
// by pricing.SQLNormalize, to the price table's names, then the costs are
// summed by component.
func (d *DB) Stats(ctx context.Context, opt StatsOptions) (*StatsResult, error) {
	if err := checkBy(opt.By); err != nil {
		return nil, err
	}
	if err := checkWindow(opt.Since, opt.Until); err != nil {
		return nil, err
	}
	prices := opt.Prices
	if prices == nil {
		prices = pricing.Default()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ru := d.rollupPlan(opt, prices)
	if ru != nil && !ru.readsMessages(opt) && !d.sqlRollup {
		// The rollup alone answers: read it in Go, with no query engine
		// to start. Should that fail (a damaged file), SQL answers.
		if res, no1h, err := statsFromRollup(opt, prices, ru); err == nil {
			return statsNotes(res, no1h), nil
		}
	}
	res := &StatsResult{By: slices.Clone(opt.By), Rows: []StatsRow{}, Unpriced: map[string]int64{}}
	var rows *sql.Rows
	var err error
	if ru != nil && (!ru.readsMessages(opt) || d.need(ctx, "messages") == nil) {
		// The usage rollup, with the messages of the window's edge hours
		// and of partitions loaded since it was computed. Should it fail
		// (a damaged file), the messages answer alone.
		q, args := statsQuery(opt, prices, splitColumn, ru)
		rows, err = d.db.QueryContext(ctx, q, args...)
	}
	if rows == nil {
		if err := d.need(ctx, "messages"); err != nil {
			return nil, err
		}
		q, args := statsQuery(opt, prices, splitColumn, nil)
		rows, err = d.db.QueryContext(ctx, q, args...)
	}
	if err != nil && strings.Contains(err.Error(), Column1h) {
		// A lake written before the column.
		how := splitNone
		if opt.Platform == "" || opt.Platform == "claude_code" {
			how = splitRaw
			res.Notes = append(res.Notes, "this lake predates the "+Column1h+" column: the 1-hour share of cache writes is read from the raw layer, which is slower; a lake loaded by a newer pos-load has it")
		}
		if how == splitRaw {
			if err := d.need(ctx, "raw"); err != nil {
				return nil, err
			}
		}
		q, args := statsQuery(opt, prices, how, nil)
		rows, err = d.db.QueryContext(ctx, q, args...)
	}
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	var no1h int64
	for rows.Next() {
		r := StatsRow{Key: make([]string, len(opt.By))}
		dest := make([]any, 0, len(opt.By)+14)
		for i := range r.Key {
			dest = append(dest, &r.Key[i])
		}
		var c [5]sql.NullFloat64
		var unpriced sql.NullString
		var n1h int64
		dest = append(dest, &r.Messages, &r.Sessions, &r.Input, &r.Output, &r.CacheCreation, &r.CacheRead, &r.CacheCreation1h,
			&c[0], &c[1], &c[2], &c[3], &c[4], &r.Unpriced, &unpriced, &n1h)
		if err := rows.Scan(dest...); err != nil {
			return nil, sqlErr(err)
		}
		for i, p := range []**float64{&r.Cost, &r.InputCost, &r.OutputCost, &r.CacheWriteCost, &r.CacheReadCost} {
			if c[i].Valid {
				v := c[i].Float64
				*p = &v
			}
		}
		if unpriced.Valid {
			if err := addUnpriced(res.Unpriced, unpriced.String); err != nil {
				return nil, err
			}
		}
		no1h += n1h
		res.Rows = append(res.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlErr(err)
	}
	return statsNotes(res, no1h), nil
}

// statsNotes adds to res the notes on its messages without a 1-hour split
// (no1h of them) and on its unpriced models.
func statsNotes(res *StatsResult, no1h int64) *StatsResult {
	if no1h > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d Claude Code messages come from files loaded before the %s column: their cache writes are priced as 5-minute ones (reload them with pos-extract --full to price 1-hour writes)", no1h, Column1h))
	}
	if len(res.Unpriced) > 0 {
		var parts []string
		for _, name := range sortedKeys(res.Unpriced) {
			label := name
			if label == "" {
				label = "(no model)"
			}
			parts = append(parts, fmt.Sprintf("%s (%d messages)", label, res.Unpriced[name]))
		}
		res.Notes = append(res.Notes, "unknown model, no price: "+strings.Join(parts, ", ")+
			"; their cost is left out (empty, not 0) and counted in unpriced_messages; price them with --pricing FILE or $"+pricing.EnvVar)
	}
	return res
}

// addUnpriced adds the unpriced messages of a group, per model: a JSON
// object (model: messages) or, from the rollup, a list of {m, n} (a model
// can come more than once).
func addUnpriced(to map[string]int64, js string) error {
	if strings.HasPrefix(js, "[") {
		var l []struct {
			M string `json:"m"`
			N int64  `json:"n"`
		}
		if err := json.Unmarshal([]byte(js), &l); err != nil {
			return err
		}
		for _, e := range l {
			to[e.M] += e.N
		}
		return nil
	}
	var m map[string]int64
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		return err
	}
	for k, n := range m {
		to[k] += n
	}
	return nil
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// statsFilter is the WHERE clause of the messages Stats counts; alias
// qualifies the columns ("m." or "").
func statsFilter(opt StatsOptions, alias string) where {
	var w where
	w.add(alias + "role = 'assistant'")
	w.add("coalesce(" + alias + "model, '') <> '<synthetic>'")
	w.eq(alias+"platform", opt.Platform)
	w.contains(alias+"project", opt.Project)
	// The date partition as well as ts, so that DuckDB skips the files
	// outside the window.
	if !opt.Since.IsZero() {
		w.add(alias+"date >= CAST(? AS DATE)", opt.Since.UTC().Format(time.DateOnly))
		w.add(alias+"ts >= CAST(? AS TIMESTAMPTZ)", opt.Since.UTC())
	}
	if !opt.Until.IsZero() {
		w.add(alias+"date <= CAST(? AS DATE)", opt.Until.UTC().Format(time.DateOnly))
		w.add(alias+"ts < CAST(? AS TIMESTAMPTZ)", opt.Until.UTC())
	}
	return w
}

// statsQuery builds the SQL of Stats. The grouping keys come from the
// whitelist; model names (the price table's, which an override file
// supplies) and filter values are parameters; rates are numbers this code
// formats.
func statsQuery(opt StatsOptions, prices *pricing.Table, how split, ru *rollupPlan) (string, []any) {
	var args []any
	// The price list: every name and alias, normalised.
	num := func(f float64) string { return "CAST(" + strconv.FormatFloat(f, 'g', -1, 64) + " AS DOUBLE)" }
	var vals []string
	for _, k := range prices.Keys() {
		r, lc := k.Model.Rates, k.Model.LongContext
		row := []string{"CAST(? AS VARCHAR)", num(r.Input), num(r.Output), num(r.CacheWrite5m), num(r.CacheWrite1h), num(r.CacheRead)}
		args = append(args, k.Key)
		if lc == nil {
			row = append(row, "CAST(NULL AS BIGINT)", "CAST(NULL AS TIMESTAMPTZ)", num(0), num(0), num(0), num(0), num(0), "CAST(NULL AS INTEGER)")
		} else {
			until := "CAST(NULL AS TIMESTAMPTZ)"
			if !lc.Until.IsZero() {
				until = "CAST('" + lc.Until.UTC().Format(time.RFC3339) + "' AS TIMESTAMPTZ)"
			}
			rank := "CAST(NULL AS INTEGER)"
			if ru != nil {
				// The rollup's rank of messages above this tier's threshold
				// (rollupPlan checked it is one of the rollup's).
				rank = strconv.Itoa(slices.Index(ru.thresholds, lc.Above) + 1)
			}
			row = append(row, strconv.FormatInt(lc.Above, 10), until,
				num(lc.Input), num(lc.Output), num(lc.CacheWrite5m), num(lc.CacheWrite1h), num(lc.CacheRead), rank)
		}
		vals = append(vals, "("+strings.Join(row, ", ")+")")
	}
	if len(vals) == 0 {
		z := num(0)
		vals = append(vals, "(CAST(NULL AS VARCHAR), "+strings.Repeat(z+", ", 5)+"CAST(NULL AS BIGINT), CAST(NULL AS TIMESTAMPTZ), "+strings.Repeat(z+", ", 4)+z+", CAST(NULL AS INTEGER))")
	}

	alias := ""
	if how == splitRaw {
		alias = "m."
	}
	var keys, sel []string
	for i, k := range opt.By {
		keys = append(keys, fmt.Sprintf("k%d", i))
		sel = append(sel, fmt.Sprintf("%s AS k%d", qualify(statsExpr[k], alias), i))
	}
	cc1h := "0"
	switch how {
	case splitColumn:
		cc1h = "coalesce(" + Column1h + ", 0)"
	case splitRaw:
		cc1h = "coalesce(r.cc1h, 0)"
	}
	sel = append(sel, alias+"session_id AS session_id", "coalesce("+alias+"model, '') AS model", alias+"ts AS ts",
		"coalesce("+alias+"input_tokens, 0) AS input_tokens", "coalesce("+alias+"output_tokens, 0) AS output_tokens",
		"coalesce("+alias+"cache_creation_tokens, 0) AS cache_creation_tokens",
		"coalesce("+alias+"cache_read_tokens, 0) AS cache_read_tokens",
		"least("+cc1h+", coalesce("+alias+"cache_creation_tokens, 0)) AS cc1h")
	if how == splitColumn {
		// Files written before the column have NULL there: their cache
		// writes count as 5-minute ones, and a note says how many.
		sel = append(sel, "CAST("+Column1h+" IS NULL AND "+alias+"platform = 'claude_code' AND coalesce("+alias+"cache_creation_tokens, 0) > 0 AS BIGINT) AS no1h")
	} else {
		sel = append(sel, "CAST(0 AS BIGINT) AS no1h")
	}
	sel = append(sel, "CAST(1 AS BIGINT) AS n")
	from := "messages"
	if how == splitRaw {
		// For each assistant message, the value on its last line (the one
		// whose usage pos keeps).
		var rw where
		rw.add("platform = 'claude_code'")
		rw.add("native_type = 'assistant'")
		// A message's lines can straddle midnight: one day of margin.
		if !opt.Since.IsZero() {
			rw.add("date >= CAST(? AS DATE)", opt.Since.UTC().AddDate(0, 0, -1).Format(time.DateOnly))
		}
		if !opt.Until.IsZero() {
			rw.add("date <= CAST(? AS DATE)", opt.Until.UTC().AddDate(0, 0, 1).Format(time.DateOnly))
		}
		from = `messages m
  LEFT JOIN (
    SELECT source_path, native_id, j[1] AS request_id, arg_max(TRY_CAST(j[2] AS BIGINT), source_offset) AS cc1h
    FROM (
      -- one JSON parse per line for both paths
      SELECT source_path, native_id, source_offset,
        json_extract_string(raw, ['$.requestId', '$.message.usage.cache_creation.ephemeral_1h_input_tokens']) AS j
      FROM raw` + strings.ReplaceAll(rw.sql(), "\n", "\n      ") + `
    )
    GROUP BY ALL
  ) r ON m.platform = 'claude_code' AND r.source_path = m.source_path AND r.native_id = m.native_id
    AND r.request_id IS NOT DISTINCT FROM m.request_id`
		args = append(args, rw.args...)
	}
	w := statsFilter(opt, alias)
	body := "SELECT " + strings.Join(sel, ", ") + "\n  FROM " + from + strings.ReplaceAll(w.sql(), "\n", "\n  ")
	args = append(args, w.args...)
	lc := `coalesce(p.lc_above IS NOT NULL AND t.input_tokens + t.cache_creation_tokens + t.cache_read_tokens > p.lc_above
      AND (p.lc_until IS NULL OR t.ts < p.lc_until), false)`
	if ru != nil {
		var rargs []any
		body, rargs = rollupT(opt, ru)
		args = append(args[:len(args)-len(w.args)], rargs...)
		lc = `coalesce(p.lc_rank IS NOT NULL AND t.ctx_rank >= p.lc_rank
      AND (p.lc_until IS NULL OR t.ts < p.lc_until), false)`
	}

	unpricedModels := `CAST(to_json(histogram(model) FILTER (WHERE NOT priced)) AS VARCHAR) AS unpriced_models`
	if ru != nil {
		// A rollup row counts several messages.
		unpricedModels = `CAST(to_json(list({'m': model, 'n': n}) FILTER (WHERE NOT priced)) AS VARCHAR) AS unpriced_models`
	}
	rate := func(std, lc string) string { return "CASE WHEN lc THEN " + lc + " ELSE " + std + " END" }
	out := make([]string, 0, len(opt.By)+14)
	for i, k := range opt.By {
		out = append(out, fmt.Sprintf("k%d AS %q", i, k))
	}
	out = append(out, `CAST(coalesce(sum(n), 0) AS BIGINT) AS messages`, `count(DISTINCT session_id) AS sessions`,
		`CAST(coalesce(sum(input_tokens), 0) AS BIGINT)`, `CAST(coalesce(sum(output_tokens), 0) AS BIGINT)`,
		`CAST(coalesce(sum(cache_creation_tokens), 0) AS BIGINT)`, `CAST(coalesce(sum(cache_read_tokens), 0) AS BIGINT)`,
		`CAST(coalesce(sum(cc1h), 0) AS BIGINT)`,
		`sum(c_in + c_out + c_w + c_r) AS cost`, `sum(c_in) AS input_cost`, `sum(c_out) AS output_cost`,
		`sum(c_w) AS cache_creation_cost`, `sum(c_r) AS cache_read_cost`,
		`CAST(coalesce(sum(n) FILTER (WHERE NOT priced), 0) AS BIGINT) AS unpriced_messages`,
		unpricedModels,
		`CAST(coalesce(sum(no1h), 0) AS BIGINT) AS no1h`)
	q := `WITH prices(key, p_in, p_out, p_w5, p_w1h, p_r, lc_above, lc_until, l_in, l_out, l_w5, l_w1h, l_r, lc_rank) AS (VALUES
  ` + strings.Join(vals, ",\n  ") + `
), t AS (
  ` + body + `
), names AS (
  -- each distinct model name once: the normalisation runs per name, not per message
  SELECT model, ` + pricing.SQLNormalize("model") + ` AS key FROM (SELECT DISTINCT model FROM t)
), b AS (
  SELECT t.*, p.key IS NOT NULL AS priced, p.p_in, p.p_out, p.p_w5, p.p_w1h, p.p_r, p.l_in, p.l_out, p.l_w5, p.l_w1h, p.l_r,
    ` + lc + ` AS lc
  FROM t JOIN names n USING (model) LEFT JOIN prices p ON p.key = n.key
), c AS (
  SELECT *,
    input_tokens * ` + rate("p_in", "l_in") + ` / 1e6 AS c_in,
    output_tokens * ` + rate("p_out", "l_out") + ` / 1e6 AS c_out,
    ((cache_creation_tokens - cc1h) * ` + rate("p_w5", "l_w5") + ` + cc1h * ` + rate("p_w1h", "l_w1h") + `) / 1e6 AS c_w,
    cache_read_tokens * ` + rate("p_r", "l_r") + ` / 1e6 AS c_r
  FROM b
)
SELECT ` + strings.Join(out, ", ") + "\nFROM c"
	if len(keys) > 0 {
		q += "\nGROUP BY " + strings.Join(keys, ", ") + "\nORDER BY " + strings.Join(keys, ", ")
	}
	var lw where
	q += limit(&lw, opt.Limit)
	return q, append(args, lw.args...)
}

// qualify prefixes the column names of a key expression with alias.
func qualify(expr, alias string) string {
	if alias == "" {
		return expr
	}
	for _, c := range []string{"date", "model", "project", "platform", "session_id"} {
		expr = replaceWord(expr, c, alias+c)
	}
	return expr
}

// replaceWord replaces whole-word occurrences of w outside quotes.
func replaceWord(s, w, by string) string {
	var b strings.Builder
	inQuote := false
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\'' {
			inQuote = !inQuote
		}
		if !inQuote && strings.HasPrefix(s[i:], w) && (i == 0 || !isIdent(s[i-1])) && (i+len(w) == len(s) || !isIdent(s[i+len(w)])) {
			b.WriteString(by)
			i += len(w)
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

func isIdent(c byte) bool {
	return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
