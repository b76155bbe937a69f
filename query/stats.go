package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/pricing"
)

// StatsKeys are the keys Stats can group by (see rollupKey for what each
// stands for).
var StatsKeys = []string{"day", "week", "month", "model", "project", "platform", "session"}

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
	// Location is the time zone of the day, week and month keys: a
	// message counts on the day its time has there, as ccusage's
	// --timezone counts it. nil: UTC.
	Location *time.Location
	// WeekStart is the day a week key starts on (its value is that day's
	// date). The zero value, Sunday, is ccusage weekly's default.
	WeekStart time.Weekday
}

// Costs are a group's cost in USD, by component, summed over its messages
// (a long-context tier applies to each request on its own). A cost is
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
	// Total sums Rows (its sessions counted once each); its Key is empty.
	Total StatsRow
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
		t.Rows[i] = statsValues(row.Key, &row)
	}
	return t
}

// TotalRow is the row of Table's layout that totals the result: "total"
// under the first key, the others empty.
func (r *StatsResult) TotalRow() []any {
	key := make([]string, len(r.By))
	if len(key) > 0 {
		key[0] = "total"
	}
	return statsValues(key, &r.Total)
}

// statsValues are a row's values in Table's order, with key as its keys.
func statsValues(key []string, row *StatsRow) []any {
	vals := make([]any, 0, len(key)+len(statsCountCols)+len(statsCostCols)+1)
	for _, k := range key {
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
	return append(vals, row.Unpriced)
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

// ParseWeekday reads the day a week starts on: sunday … saturday (or
// their first three letters), any case; "" is Sunday, as in ccusage.
func ParseWeekday(s string) (time.Weekday, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return time.Sunday, nil
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := strings.ToLower(d.String())
		if s == name || s == name[:3] {
			return d, nil
		}
	}
	return 0, argErrorf("unknown day %q (use sunday, monday, tuesday, wednesday, thursday, friday or saturday)", s)
}

func checkBy(by []string) error {
	for i, k := range by {
		if !slices.Contains(StatsKeys, k) {
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
// It reads rows at the usage rollup's grain (a platform, date, session,
// project, model, hour and long-context rank, with their token sums):
// from the rollup file, in Go, for the window's whole hours and the
// partitions the file is current for, and from the messages, rolled up by
// SQL, for the rest. statsAcc then groups and prices them all alike, the
// model names looked up with pricing.Normalize.
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
	thresholds := statsThresholds(prices)
	var rows []rollup.RollupRow
	ru := d.rollupPlan(opt, prices)
	if ru != nil {
		var err error
		if rows, err = rollupRows(opt, ru); err != nil {
			// A damaged file: the messages answer alone.
			ru, rows = nil, nil
		} else {
			thresholds = ru.thresholds
		}
	}
	var notes []string
	// Whether the rows are an hour's messages each (the rollup's grain)
	// rather than one message each.
	hourly := true
	if ru == nil || ru.readsMessages(opt) {
		if err := d.need(ctx, "messages"); err != nil {
			return nil, err
		}
		var parts []where
		if ru != nil {
			parts = ru.messageParts(opt)
		}
		// Without a rollup, a price tier that ends within an hour needs
		// each message's time, not its hour.
		exact := ru == nil && !tiersEndOnHours(prices)
		hourly = !exact
		q, args := statsRowsQuery(opt, splitColumn, thresholds, exact, parts)
		msgs, err := d.statsRows(ctx, q, args)
		if err != nil && strings.Contains(err.Error(), Column1h) {
			// A lake written before the column (which has no rollup
			// either): the messages answer alone.
			how := splitNone
			if opt.Platform == "" || opt.Platform == "claude_code" {
				how = splitRaw
				notes = append(notes, "this lake predates the "+Column1h+" column: the 1-hour share of cache writes is read from the raw layer, which is slower; a lake loaded by a newer pos-load has it")
				if err := d.need(ctx, "raw"); err != nil {
					return nil, err
				}
			}
			rows, thresholds = nil, statsThresholds(prices)
			// Outside UTC, each message's time places it on its day.
			exact := !tiersEndOnHours(prices) || statsZone(opt) != time.UTC
			hourly = !exact
			q, args := statsRowsQuery(opt, how, thresholds, exact, nil)
			msgs, err = d.statsRows(ctx, q, args)
		}
		if err != nil {
			return nil, sqlErr(err)
		}
		rows = append(rows, msgs...)
		// Costs are summed in the rollup file's order of rows.
		slices.SortFunc(rows, rollup.CompareRollupRows)
	}
	if hourly && statsZone(opt) != time.UTC && slices.ContainsFunc(opt.By, isDateKey) {
		var err error
		if rows, err = d.splitStraddles(ctx, opt, rows, thresholds); err != nil {
			return nil, err
		}
	}
	acc := newStatsAcc(opt, prices, thresholds)
	if slices.ContainsFunc(rows, func(r rollup.RollupRow) bool { return r.Platform == RecordedPlatform }) {
		// Sessions that record their own cost price their unpriced messages.
		var err error
		if acc.recorded, err = d.recordedCosts(ctx); err != nil {
			return nil, sqlErr(err)
		}
	}
	for i := range rows {
		acc.add(&rows[i])
	}
	res, no1h := acc.result()
	if acc.recordedMessages > 0 {
		notes = append(notes, recordedNote(acc.recordedMessages))
	}
	res.Notes = notes
	return statsNotes(res, no1h), nil
}

func isDateKey(k string) bool { return k == "day" || k == "week" || k == "month" }

// splitStraddles replaces the rows of the hours that cross a midnight of
// opt's zone (straddlesDay) by their messages, one row each, so that each
// counts on its own day. Only a zone whose offset is not a whole number
// of hours has such hours; the messages are read from the partitions
// those rows come from, for those hours only.
func (d *DB) splitStraddles(ctx context.Context, opt StatsOptions, rows []rollup.RollupRow, thresholds []int64) ([]rollup.RollupRow, error) {
	loc := statsZone(opt)
	first := slices.IndexFunc(rows, func(r rollup.RollupRow) bool { return straddlesDay(r.Hour, loc) })
	if first < 0 {
		return rows, nil // the usual case: a zone of whole hours
	}
	var parts []string
	var hours []time.Time
	seenPart, seenHour := map[string]bool{}, map[int64]bool{}
	kept := slices.Grow(rows[:0:0], len(rows))
	kept = append(kept, rows[:first]...)
	for _, r := range rows[first:] {
		if !straddlesDay(r.Hour, loc) {
			kept = append(kept, r)
			continue
		}
		if p := r.Platform + "/" + r.DateString(); !seenPart[p] {
			seenPart[p] = true
			parts = append(parts, p)
		}
		if h := r.Hour.Unix(); !seenHour[h] {
			seenHour[h] = true
			hours = append(hours, r.Hour)
		}
	}
	if len(hours) == 0 {
		return rows, nil
	}
	if err := d.need(ctx, "messages"); err != nil {
		return nil, err
	}
	var w where
	w.add(rollup.PartitionFilter(parts))
	var ors []string
	for _, h := range hours {
		ors = append(ors, "ts >= CAST(? AS TIMESTAMPTZ) AND ts < CAST(? AS TIMESTAMPTZ)")
		w.args = append(w.args, h, h.Add(time.Hour))
	}
	w.conds = append(w.conds, "("+strings.Join(ors, "\n        OR ")+")")
	q, args := statsRowsQuery(opt, splitColumn, thresholds, true, []where{w})
	msgs, err := d.statsRows(ctx, q, args)
	if err != nil {
		return nil, sqlErr(err)
	}
	kept = append(kept, msgs...)
	slices.SortFunc(kept, rollup.CompareRollupRows)
	return kept, nil
}

// statsThresholds are the long-context thresholds Stats ranks messages by
// when it reads them alone: the rollup's and those of prices' tiers, so
// that its rows are the rollup's.
func statsThresholds(prices *pricing.Table) []int64 {
	ts := rollup.RollupThresholds()
	for _, k := range prices.Keys() {
		if lc := k.Model.LongContext; lc != nil && !slices.Contains(ts, lc.Above) {
			ts = append(ts, lc.Above)
		}
	}
	slices.Sort(ts)
	return ts
}

// tiersEndOnHours reports whether every long-context tier of prices that
// ends does so on an hour, so that a message's hour tells whether it
// applies.
func tiersEndOnHours(prices *pricing.Table) bool {
	for _, k := range prices.Keys() {
		if lc := k.Model.LongContext; lc != nil && !lc.Until.Truncate(time.Hour).Equal(lc.Until) {
			return false
		}
	}
	return true
}

// statsRows runs a query of statsRowsQuery and reads its rows.
func (d *DB) statsRows(ctx context.Context, q string, args []any) ([]rollup.RollupRow, error) {
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []rollup.RollupRow
	for rows.Next() {
		var r rollup.RollupRow
		var date time.Time
		var rank int64
		if err := rows.Scan(&r.Platform, &date, &r.SessionID, &r.Project, &r.Model, &r.Hour, &rank,
			&r.Messages, &r.Input, &r.Output, &r.CacheCreation, &r.CacheRead, &r.CacheCreation1h, &r.No1h); err != nil {
			return nil, err
		}
		r.Date = int32(date.Unix() / 86400)
		r.CtxRank = uint8(rank)
		out = append(out, r)
	}
	return out, rows.Err()
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
				label = NoModel
			}
			parts = append(parts, fmt.Sprintf("%s (%d messages)", label, res.Unpriced[name]))
		}
		res.Notes = append(res.Notes, "unknown model, no price: "+strings.Join(parts, ", ")+
			"; their cost is left out (empty, not 0) and counted in unpriced_messages; price them with --pricing FILE or $"+pricing.EnvVar)
	}
	return res
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// statsFilter is the WHERE clause of opt's filters and window on the
// messages, beside the rollup's own (rollup.RollupSelect); alias qualifies
// the columns ("m." or "").
func statsFilter(opt StatsOptions, alias string) where {
	var w where
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

// statsRowsQuery is the SQL that rolls up the messages Stats reads to the
// rows of the usage rollup (rollup.RollupSelect): the messages in opt's
// filters and window, and in one of parts when there are parts. how says
// where the 1-hour share of cache writes comes from; thresholds rank the
// prompts; exact puts each message's time in the hour column instead of
// its hour. The grouping keys and prices apply in Go; filter values are
// parameters.
func statsRowsQuery(opt StatsOptions, how split, thresholds []int64, exact bool, parts []where) (string, []any) {
	src := rollup.RollupSource{From: "messages", Thresholds: thresholds, ExactTime: exact}
	var args, fromArgs []any
	switch how {
	case splitRaw:
		src.Alias, src.OneHour = "m.", "r.cc1h"
	case splitNone:
		src.OneHour = "0"
	}
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
		src.From = `messages m
    LEFT JOIN (
      SELECT source_path, native_id, j[1] AS request_id, arg_max(TRY_CAST(j[2] AS BIGINT), source_offset) AS cc1h
      FROM (
        -- one JSON parse per line for both paths
        SELECT source_path, native_id, source_offset,
          json_extract_string(raw, ['$.requestId', '$.message.usage.cache_creation.ephemeral_1h_input_tokens']) AS j
        FROM raw` + strings.ReplaceAll(rw.sql(), "\n", "\n        ") + `
      )
      GROUP BY ALL
    ) r ON m.platform = 'claude_code' AND r.source_path = m.source_path AND r.native_id = m.native_id
      AND r.request_id IS NOT DISTINCT FROM m.request_id`
		fromArgs = rw.args
	}
	if len(parts) == 0 {
		parts = []where{{}}
	}
	var conds []string
	for _, p := range parts {
		w := statsFilter(opt, src.Alias)
		w.conds = append(w.conds, p.conds...)
		w.args = append(w.args, p.args...)
		conds = append(conds, strings.Join(w.conds, "\n      AND "))
		args = append(append(args, fromArgs...), w.args...)
	}
	return rollup.RollupSelect(src, conds...), args
}
