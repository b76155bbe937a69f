package query

import (
	"slices"
	"time"

	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/pricing"
)

// rollupPlan says how Stats reads the usage rollup pos-load keeps
// (rollup.UpdateRollup): which file, with which long-context ranks, and which
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
	st, err := rollup.ReadRollup(d.lake)
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

// messageParts are the conditions, beside statsFilter's, of the messages
// the plan reads: those of the stale partitions and of the window's
// partial hours. Each part leaves out the rows of the others and of the
// rollup, so none is counted twice.
func (p *rollupPlan) messageParts(opt StatsOptions) []where {
	var parts []where
	if len(p.stale) > 0 {
		var w where
		w.add(rollup.PartitionFilter(p.stale))
		parts = append(parts, w)
	}
	for _, edge := range []struct {
		at, bound time.Time
		date, ts  string // the conditions on the hour's messages, each with one argument: at
	}{
		{p.from, opt.Since, "date <= CAST(? AS DATE)", "ts < CAST(? AS TIMESTAMPTZ)"}, // the hour the window starts in
		{p.to, opt.Until, "date >= CAST(? AS DATE)", "ts >= CAST(? AS TIMESTAMPTZ)"},  // the hour it ends in
	} {
		if edge.at.IsZero() || edge.at.Equal(edge.bound) {
			continue
		}
		var w where
		if len(p.stale) > 0 {
			w.add("NOT " + rollup.PartitionFilter(p.stale))
		}
		w.add(edge.date, edge.at.Format(time.DateOnly))
		w.add(edge.ts, edge.at)
		parts = append(parts, w)
	}
	return parts
}
