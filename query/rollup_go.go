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
	loc        *time.Location   // the zone of the day, week and month keys
	utc        bool             // loc is UTC: a row's day is its date partition
	days       map[int64]string // the day of each hour (UnixNano) seen
	// recorded are the sessions that record their own cost, which their
	// unpriced messages bear (nil: none); recordedMessages counts those.
	recorded         map[string]recordedCost
	recordedMessages int64
}

func newStatsAcc(opt StatsOptions, prices *pricing.Table, thresholds []int64) *statsAcc {
	a := &statsAcc{opt: opt, prices: prices, thresholds: thresholds, priceOf: map[string]statsPrice{},
		groups: map[string]*statsGroup{}, key: make([]string, len(opt.By)), days: map[int64]string{}}
	a.loc = statsZone(opt)
	a.utc = a.loc == time.UTC // time.LoadLocation("UTC") is time.UTC
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
	var day string
	for j, k := range a.opt.By {
		if day == "" && (k == "day" || k == "week" || k == "month") {
			day = a.day(r)
		}
		a.key[j] = rollupKey(r, day, a.opt.WeekStart, k)
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
	// The total of the rows kept: a session of several groups counts
	// once.
	total := statsGroup{row: StatsRow{Key: []string{}}, sessions: map[string]struct{}{}}
	for _, g := range order {
		g.row.Sessions = int64(len(g.sessions))
		g.setCosts()
		for m, n := range g.unpriced {
			res.Unpriced[m] += n
		}
		no1h += g.no1h
		res.Rows = append(res.Rows, g.row)
		total.row.Messages += g.row.Messages
		total.row.Input += g.row.Input
		total.row.Output += g.row.Output
		total.row.CacheCreation += g.row.CacheCreation
		total.row.CacheRead += g.row.CacheRead
		total.row.CacheCreation1h += g.row.CacheCreation1h
		total.row.Unpriced += g.row.Unpriced
		for s := range g.sessions {
			total.sessions[s] = struct{}{}
		}
		for i, c := range g.costs {
			total.costs[i] += c
		}
		total.priced = total.priced || g.priced
	}
	total.row.Sessions = int64(len(total.sessions))
	total.setCosts()
	res.Total = total.row
	return res, no1h
}

// setCosts sets the row's costs from the sums, if any message of the
// group has a price.
func (g *statsGroup) setCosts() {
	if !g.priced {
		return
	}
	for i, c := range []**float64{&g.row.Cost, &g.row.InputCost, &g.row.OutputCost, &g.row.CacheWriteCost, &g.row.CacheReadCost} {
		v := g.costs[i]
		*c = &v
	}
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

// rollupKey is a rollup row's value of a grouping key; day is the row's
// day in the zone of the keys (statsAcc.day). day: that day; week: the
// date of the day its week starts on (start); month: YYYY-MM; model,
// project, platform, session: the row's ("" for none).
func rollupKey(r *rollup.RollupRow, day string, start time.Weekday, k string) string {
	switch k {
	case "day":
		return day
	case "week":
		d, err := time.Parse(time.DateOnly, day)
		if err != nil {
			return day
		}
		return d.AddDate(0, 0, -((int(d.Weekday()) - int(start) + 7) % 7)).Format(time.DateOnly)
	case "month":
		return day[:min(7, len(day))]
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

// statsZone is the time zone of opt's day, week and month keys.
func statsZone(opt StatsOptions) *time.Location {
	if opt.Location == nil {
		return time.UTC
	}
	return opt.Location
}

// day is a row's day in the keys' zone: its date partition in UTC (the
// day of its first line), else the day its hour (or, for a row of one
// message, its time) has in the zone. A row of an hour that crosses the
// zone's midnight never comes here: Stats reads its messages one by one
// (straddlesDay).
func (a *statsAcc) day(r *rollup.RollupRow) string {
	if a.utc {
		return r.DateString()
	}
	at := r.Hour.UnixNano()
	if d, ok := a.days[at]; ok {
		return d
	}
	d := r.Hour.In(a.loc).Format(time.DateOnly)
	a.days[at] = d
	return d
}

// straddlesDay reports whether the hour from h crosses a midnight of loc:
// its messages fall on two days there (a zone whose offset is not a whole
// number of hours, such as Asia/Kolkata's +05:30).
func straddlesDay(h time.Time, loc *time.Location) bool {
	a, b := h.In(loc), h.Add(time.Hour-time.Nanosecond).In(loc)
	return a.YearDay() != b.YearDay() || a.Year() != b.Year()
}
