package query

import (
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/pricing"
)

// Stats counts, groups and prices rows at the usage rollup's grain
// (rollup.RollupRow: a platform, date, session, project, model, hour and
// long-context rank, with its token sums), whether they come from the
// rollup file or from the messages (statsRowsQuery). This file holds
// those rules, once for every source.

// statsGroup accumulates one group of the result.
type statsGroup struct {
	row      StatsRow
	sessions map[string]struct{}
	costs    [5]float64 // total, input, output, cache write, cache read
	priced   bool
	unpriced map[string]int64
	no1h     int64
}

// statsPrice is a model's price as the rows can apply it.
type statsPrice struct {
	m      *pricing.Model // nil: no price
	lcRank int64          // the rank from which the long-context tier applies; 0: none
}

// statsAcc groups and prices rows for Stats.
type statsAcc struct {
	opt        StatsOptions
	prices     *pricing.Table
	thresholds []int64 // the long-context thresholds the rows' ranks count
	priceOf    map[string]statsPrice
	groups     map[string]*statsGroup
	order      []*statsGroup
	key        []string
	// recorded are the sessions that record their own cost, which their
	// unpriced messages bear (nil: none); recordedMessages counts those.
	recorded         map[string]recordedCost
	recordedMessages int64
}

func newStatsAcc(opt StatsOptions, prices *pricing.Table, thresholds []int64) *statsAcc {
	a := &statsAcc{opt: opt, prices: prices, thresholds: thresholds, priceOf: map[string]statsPrice{},
		groups: map[string]*statsGroup{}, key: make([]string, len(opt.By))}
	if len(opt.By) == 0 {
		// One row of totals, even of nothing.
		a.group([]string{})
	}
	return a
}

func (a *statsAcc) group(key []string) *statsGroup {
	gk := strings.Join(key, "\x00")
	g := a.groups[gk]
	if g == nil {
		g = &statsGroup{row: StatsRow{Key: slices.Clone(key)}, sessions: map[string]struct{}{}, unpriced: map[string]int64{}}
		a.groups[gk] = g
		a.order = append(a.order, g)
	}
	return g
}

// price looks a model up once.
func (a *statsAcc) price(model string) statsPrice {
	pr, ok := a.priceOf[model]
	if !ok {
		if m, found := a.prices.Lookup(model); found {
			pr.m = m
			if lc := m.LongContext; lc != nil {
				pr.lcRank = int64(slices.Index(a.thresholds, lc.Above) + 1)
			}
		}
		a.priceOf[model] = pr
	}
	return pr
}

// add counts and prices one row. A row's tokens are priced at once: its
// messages share a model, an hour and a long-context rank, so one rate
// applies to all of them.
func (a *statsAcc) add(r *rollup.RollupRow) {
	date := r.DateString()
	for j, k := range a.opt.By {
		a.key[j] = rollupKey(r, date, k)
	}
	g := a.group(a.key)
	g.row.Messages += r.Messages
	g.sessions[r.SessionID] = struct{}{}
	g.row.Input += r.Input
	g.row.Output += r.Output
	g.row.CacheCreation += r.CacheCreation
	g.row.CacheRead += r.CacheRead
	g.row.CacheCreation1h += r.CacheCreation1h
	g.no1h += r.No1h
	pr := a.price(r.Model)
	if c, ok := a.recorded[r.SessionID]; ok && pr.m == nil && r.Platform == RecordedPlatform {
		g.costs[0] += recordedShare(c, r)
		g.priced = true
		a.recordedMessages += r.Messages
		return
	}
	if pr.m == nil {
		g.row.Unpriced += r.Messages
		g.unpriced[r.Model] += r.Messages
		return
	}
	rt := pr.m.Rates
	if lc := pr.m.LongContext; lc != nil && pr.lcRank > 0 && int64(r.CtxRank) >= pr.lcRank && (lc.Until.IsZero() || r.Hour.Before(lc.Until)) {
		rt = lc.Rates
	}
	cIn := float64(r.Input) * rt.Input / 1e6
	cOut := float64(r.Output) * rt.Output / 1e6
	cW := (float64(r.CacheCreation-r.CacheCreation1h)*rt.CacheWrite5m + float64(r.CacheCreation1h)*rt.CacheWrite1h) / 1e6
	cR := float64(r.CacheRead) * rt.CacheRead / 1e6
	g.costs[0] += cIn + cOut + cW + cR
	g.costs[1] += cIn
	g.costs[2] += cOut
	g.costs[3] += cW
	g.costs[4] += cR
	g.priced = true
}

// result is the groups ordered by their keys (at most opt.Limit of them),
// and the number of messages without a 1-hour split.
func (a *statsAcc) result() (*StatsResult, int64) {
	order := a.order
	slices.SortFunc(order, func(x, y *statsGroup) int { return slices.Compare(x.row.Key, y.row.Key) })
	if a.opt.Limit > 0 && len(order) > a.opt.Limit {
		order = order[:a.opt.Limit]
	}
	res := &StatsResult{By: slices.Clone(a.opt.By), Rows: make([]StatsRow, 0, len(order)), Unpriced: map[string]int64{}}
	var no1h int64
	for _, g := range order {
		g.row.Sessions = int64(len(g.sessions))
		if g.priced {
			for i, c := range []**float64{&g.row.Cost, &g.row.InputCost, &g.row.OutputCost, &g.row.CacheWriteCost, &g.row.CacheReadCost} {
				v := g.costs[i]
				*c = &v
			}
		}
		for m, n := range g.unpriced {
			res.Unpriced[m] += n
		}
		no1h += g.no1h
		res.Rows = append(res.Rows, g.row)
	}
	return res, no1h
}

// rollupRows reads the rows of the rollup file the plan p answers for:
// those in opt's filters and window's whole hours, outside the
// partitions p reads from the messages or that are gone.
func rollupRows(opt StatsOptions, p *rollupPlan) ([]rollup.RollupRow, error) {
	rows, err := rollup.ReadRollupRows(p.path)
	if err != nil {
		return nil, err
	}
	drop := make(map[string]bool, len(p.drop))
	for _, d := range p.drop {
		drop[d] = true
	}
	var since, until string
	if !opt.Since.IsZero() {
		since = opt.Since.UTC().Format(time.DateOnly)
	}
	if !opt.Until.IsZero() {
		until = opt.Until.UTC().Format(time.DateOnly)
	}
	return slices.DeleteFunc(rows, func(r rollup.RollupRow) bool {
		date := r.DateString()
		// A NULL project reads as "", which no --project matches either.
		return opt.Platform != "" && r.Platform != opt.Platform ||
			opt.Project != "" && !strings.Contains(r.Project, opt.Project) ||
			since != "" && (date < since || r.Hour.Before(p.from)) ||
			until != "" && (date > until || !r.Hour.Before(p.to)) ||
			drop[r.Platform+"/"+date]
	}), nil
}

// rollupKey is a rollup row's value of a grouping key; date is the row's
// date partition. day: the UTC day (the date partition); week: the Monday
// its ISO week starts on; month: YYYY-MM; model, project, platform,
// session: the row's ("" for none).
func rollupKey(r *rollup.RollupRow, date, k string) string {
	switch k {
	case "day":
		return date
	case "week":
		d, err := time.Parse(time.DateOnly, date)
		if err != nil {
			return date
		}
		// The Monday of the ISO week.
		return d.AddDate(0, 0, -(int(d.Weekday())+6)%7).Format(time.DateOnly)
	case "month":
		return date[:min(7, len(date))]
	case "model":
		return r.Model
	case "project":
		return r.Project
	case "platform":
		return r.Platform
	case "session":
		return r.SessionID
	}
	return ""
}
