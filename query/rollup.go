package query

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/pricing"
)

// rollupPlan says how Stats reads the usage rollup pos-load keeps
// (load.UpdateRollup): which file, with which long-context ranks, and which
// partitions come from the messages instead.
type rollupPlan struct {
	path       string
	thresholds []int64
	stale      []string // partitions whose messages changed since the rollup: read from the messages
	drop       []string // partitions whose rollup rows are left out: stale, and gone from the lake
	// The rollup answers for the whole hours in [from, to) (zero: no
	// bound); the messages answer for the window's parts outside.
	from, to time.Time
}

// rollupPlan returns how Stats can use the rollup for opt, or nil when it
// cannot give exactly what the messages would: no rollup, a price tier
// that starts at a threshold the rollup does not rank by or ends within an
// hour, most partitions changed since it was computed, a window shorter
// than an hour.
func (d *DB) rollupPlan(opt StatsOptions, prices *pricing.Table) *rollupPlan {
	if d.noRollup {
		return nil
	}
	st, err := load.ReadRollup(d.lake)
	if err != nil || st == nil {
		return nil
	}
	for _, k := range prices.Keys() {
		if lc := k.Model.LongContext; lc != nil {
			if !slices.Contains(st.Manifest.Thresholds, lc.Above) {
				return nil
			}
			if !lc.Until.IsZero() && !lc.Until.Truncate(time.Hour).Equal(lc.Until) {
				return nil
			}
		}
	}
	if len(st.Stale) > len(st.Manifest.Partitions)/2 {
		return nil
	}
	p := &rollupPlan{path: st.Path, thresholds: st.Manifest.Thresholds, stale: st.Stale,
		drop: append(slices.Clone(st.Stale), st.Gone...)}
	if !opt.Since.IsZero() {
		p.from = opt.Since.UTC().Truncate(time.Hour)
		if p.from.Before(opt.Since) {
			p.from = p.from.Add(time.Hour)
		}
	}
	if !opt.Until.IsZero() {
		p.to = opt.Until.UTC().Truncate(time.Hour)
	}
	if !p.from.IsZero() && !p.to.IsZero() && !p.from.Before(p.to) {
		return nil
	}
	return p
}

// readsMessages reports whether the plan reads messages too.
func (p *rollupPlan) readsMessages(opt StatsOptions) bool {
	return len(p.stale) > 0 || !p.from.IsZero() && !p.from.Equal(opt.Since) || !p.to.IsZero() && !p.to.Equal(opt.Until)
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// rollupT is the body of Stats' t (one row per message or rollup row,
// with the columns statsQuery expects) read from the rollup, plus the
// messages of the stale partitions and of the window's partial hours. Each
// part filters its own rows, so none is counted twice.
func rollupT(opt StatsOptions, p *rollupPlan) (string, []any) {
	var keys []string
	for i, k := range opt.By {
		keys = append(keys, fmt.Sprintf("%s AS k%d", statsExpr[k], i))
	}
	rollCols := append(slices.Clone(keys), "session_id", "model", "hour AS ts",
		"input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
		"cache_creation_1h_tokens AS cc1h", "no1h", "messages AS n", "ctx_rank")
	msgCols := append(slices.Clone(keys), "session_id", "coalesce(model, '') AS model", "ts",
		"coalesce(input_tokens, 0) AS input_tokens", "coalesce(output_tokens, 0) AS output_tokens",
		"coalesce(cache_creation_tokens, 0) AS cache_creation_tokens", "coalesce(cache_read_tokens, 0) AS cache_read_tokens",
		"least(coalesce("+Column1h+", 0), coalesce(cache_creation_tokens, 0)) AS cc1h",
		"CAST("+Column1h+" IS NULL AND platform = 'claude_code' AND coalesce(cache_creation_tokens, 0) > 0 AS BIGINT) AS no1h",
		"CAST(1 AS BIGINT) AS n", load.RollupRank(p.thresholds)+" AS ctx_rank")

	var parts []string
	var args []any
	var rw where
	rw.eq("platform", opt.Platform)
	rw.contains("project", opt.Project)
	if !opt.Since.IsZero() {
		rw.add("date >= CAST(? AS DATE)", opt.Since.UTC().Format(time.DateOnly))
		rw.add("hour >= CAST(? AS TIMESTAMPTZ)", p.from)
	}
	if !opt.Until.IsZero() {
		rw.add("date <= CAST(? AS DATE)", opt.Until.UTC().Format(time.DateOnly))
		rw.add("hour < CAST(? AS TIMESTAMPTZ)", p.to)
	}
	if len(p.drop) > 0 {
		rw.add("NOT " + load.PartitionFilter(p.drop))
	}
	parts = append(parts, "SELECT "+strings.Join(rollCols, ", ")+" FROM read_parquet("+sqlQuote(load.GlobLiteral(p.path))+")"+rw.sql())
	args = append(args, rw.args...)

	msgs := func(extra ...func(w *where)) {
		w := statsFilter(opt, "")
		for _, f := range extra {
			f(&w)
		}
		parts = append(parts, "SELECT "+strings.Join(msgCols, ", ")+" FROM messages"+w.sql())
		args = append(args, w.args...)
	}
	notStale := func(w *where) {
		if len(p.stale) > 0 {
			w.add("NOT " + load.PartitionFilter(p.stale))
		}
	}
	if len(p.stale) > 0 {
		msgs(func(w *where) { w.add(load.PartitionFilter(p.stale)) })
	}
	if !p.from.IsZero() && !p.from.Equal(opt.Since) {
		// The hour the window starts in.
		msgs(notStale, func(w *where) {
			w.add("date <= CAST(? AS DATE)", p.from.Format(time.DateOnly))
			w.add("ts < CAST(? AS TIMESTAMPTZ)", p.from)
		})
	}
	if !p.to.IsZero() && !p.to.Equal(opt.Until) {
		// The hour the window ends in.
		msgs(notStale, func(w *where) {
			w.add("date >= CAST(? AS DATE)", p.to.Format(time.DateOnly))
			w.add("ts >= CAST(? AS TIMESTAMPTZ)", p.to)
		})
	}
	return strings.Join(parts, "\n  UNION ALL\n  "), args
}
