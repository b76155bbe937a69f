package query

import (
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/pricing"
)

// statsGroup accumulates one group of the result.
type statsGroup struct {
	row      StatsRow
	sessions map[string]struct{}
	costs    [5]float64 // total, input, output, cache write, cache read
	priced   bool
	unpriced map[string]int64
	no1h     int64
}

// statsFromRollup is Stats computed in Go over the rollup rows alone,
// with no query engine: what the rollup plan gives when the window is in
// whole hours and no partition changed since the rollup was computed
// (!readsMessages). It counts and prices exactly as statsQuery does over
// the same rows; TestStatsRollup holds the two to it.
func statsFromRollup(opt StatsOptions, prices *pricing.Table, p *rollupPlan) (*StatsResult, int64, error) {
	rows, err := load.ReadRollupRows(p.path)
	if err != nil {
		return nil, 0, err
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
	type price struct {
		m      *pricing.Model
		lcRank int64 // the rank from which the long-context tier applies; 0: none
	}
	priceOf := map[string]price{}
	groups := map[string]*statsGroup{}
	var order []*statsGroup
	if len(opt.By) == 0 {
		g := &statsGroup{row: StatsRow{Key: []string{}}, sessions: map[string]struct{}{}, unpriced: map[string]int64{}}
		groups[""] = g
		order = append(order, g)
	}
	key := make([]string, len(opt.By))
	for i := range rows {
		r := &rows[i]
		date := r.DateString()
		// A NULL project reads as "", which no --project matches either.
		if opt.Platform != "" && r.Platform != opt.Platform ||
			opt.Project != "" && !strings.Contains(r.Project, opt.Project) ||
			since != "" && (date < since || r.Hour.Before(p.from)) ||
			until != "" && (date > until || !r.Hour.Before(p.to)) ||
			drop[r.Platform+"/"+date] {
			continue
		}
		for j, k := range opt.By {
			key[j] = rollupKey(r, date, k)
		}
		gk := strings.Join(key, "\x00")
		g := groups[gk]
		if g == nil {
			g = &statsGroup{row: StatsRow{Key: slices.Clone(key)}, sessions: map[string]struct{}{}, unpriced: map[string]int64{}}
			groups[gk] = g
			order = append(order, g)
		}
		g.row.Messages += r.Messages
		g.sessions[r.SessionID] = struct{}{}
		g.row.Input += r.Input
		g.row.Output += r.Output
		g.row.CacheCreation += r.CacheCreation
		g.row.CacheRead += r.CacheRead
		g.row.CacheCreation1h += r.CacheCreation1h
		g.no1h += r.No1h
		pr, ok := priceOf[r.Model]
		if !ok {
			if m, found := prices.Lookup(r.Model); found {
				pr.m = m
				if lc := m.LongContext; lc != nil {
					pr.lcRank = int64(slices.Index(p.thresholds, lc.Above) + 1)
				}
			}
			priceOf[r.Model] = pr
		}
		if pr.m == nil {
			g.row.Unpriced += r.Messages
			g.unpriced[r.Model] += r.Messages
			continue
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
	slices.SortFunc(order, func(a, b *statsGroup) int { return slices.Compare(a.row.Key, b.row.Key) })
	if opt.Limit > 0 && len(order) > opt.Limit {
		order = order[:opt.Limit]
	}
	res := &StatsResult{By: slices.Clone(opt.By), Rows: make([]StatsRow, 0, len(order)), Unpriced: map[string]int64{}}
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
	return res, no1h, nil
}

// rollupKey is a rollup row's value of a grouping key, as statsExpr
// computes it; date is the row's date partition.
func rollupKey(r *load.RollupRow, date, k string) string {
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
