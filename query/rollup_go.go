package query

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/pricing"
)

// rollupRow is one row of the usage rollup file (load.RollupColumns).
type rollupRow struct {
	platform, date, session, project, model string
	projectNull, sessionNull                bool
	hour                                    time.Time
	rank                                    int64
	messages, in, out, cw, cr, cw1h, no1h   int64
}

// readRollup reads the rollup file whole. It is small: a row per session,
// model, hour and long-context rank.
func readRollup(path string) ([]rollupRow, error) {
	f, pf, err := load.OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names := []string{"platform", "date", "session_id", "project", "model", "hour", "ctx_rank",
		"messages", "input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
		"cache_creation_1h_tokens", "no1h"}
	idx := make([]int, len(names))
	for i, n := range names {
		c, ok := pf.Schema().Lookup(n)
		if !ok {
			return nil, fmt.Errorf("%s: no column %s", path, n)
		}
		idx[i] = c.ColumnIndex
	}
	out := make([]rollupRow, 0, pf.NumRows())
	buf := make([]parquet.Row, 256)
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		for {
			n, err := rows.ReadRows(buf)
			for _, r := range buf[:n] {
				row, err := rollupRowOf(r, idx)
				if err != nil {
					rows.Close()
					return nil, fmt.Errorf("%s: %w", path, err)
				}
				out = append(out, row)
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		rows.Close()
	}
	return out, nil
}

// rollupRowOf decodes one row; idx gives the column of each field in the
// order readRollup lists them.
func rollupRowOf(r parquet.Row, idx []int) (rollupRow, error) {
	if len(r) <= slices.Max(idx) {
		return rollupRow{}, fmt.Errorf("a row of %d columns", len(r))
	}
	str := func(i int) string { return string(r[idx[i]].ByteArray()) }
	num := func(i int) int64 {
		v := r[idx[i]]
		switch v.Kind() {
		case parquet.Int32:
			return int64(v.Int32())
		case parquet.Int64:
			return v.Int64()
		}
		return 0
	}
	row := rollupRow{platform: str(0), session: str(2), project: str(3), projectNull: r[idx[3]].IsNull(), sessionNull: r[idx[2]].IsNull(), model: str(4),
		rank: num(6), messages: num(7), in: num(8), out: num(9), cw: num(10), cr: num(11), cw1h: num(12), no1h: num(13)}
	// date: a DATE (days since 1970) or, as hive columns can be, text.
	if d := r[idx[1]]; d.Kind() == parquet.Int32 {
		row.date = time.Unix(int64(d.Int32())*86400, 0).UTC().Format(time.DateOnly)
	} else {
		row.date = string(d.ByteArray())
	}
	// hour: a TIMESTAMP WITH TIME ZONE, in microseconds.
	if h := r[idx[5]]; h.Kind() != parquet.Int64 {
		return rollupRow{}, fmt.Errorf("hour is %v, not a timestamp", h.Kind())
	} else {
		row.hour = time.UnixMicro(h.Int64()).UTC()
	}
	return row, nil
}

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
	rows, err := readRollup(p.path)
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
		if opt.Platform != "" && r.platform != opt.Platform ||
			opt.Project != "" && (r.projectNull || !strings.Contains(r.project, opt.Project)) ||
			since != "" && (r.date < since || r.hour.Before(p.from)) ||
			until != "" && (r.date > until || !r.hour.Before(p.to)) ||
			drop[r.platform+"/"+r.date] {
			continue
		}
		for j, k := range opt.By {
			key[j] = rollupKey(r, k)
		}
		gk := strings.Join(key, "\x00")
		g := groups[gk]
		if g == nil {
			g = &statsGroup{row: StatsRow{Key: slices.Clone(key)}, sessions: map[string]struct{}{}, unpriced: map[string]int64{}}
			groups[gk] = g
			order = append(order, g)
		}
		g.row.Messages += r.messages
		if !r.sessionNull {
			g.sessions[r.session] = struct{}{}
		}
		g.row.Input += r.in
		g.row.Output += r.out
		g.row.CacheCreation += r.cw
		g.row.CacheRead += r.cr
		g.row.CacheCreation1h += r.cw1h
		g.no1h += r.no1h
		pr, ok := priceOf[r.model]
		if !ok {
			if m, found := prices.Lookup(r.model); found {
				pr.m = m
				if lc := m.LongContext; lc != nil {
					pr.lcRank = int64(slices.Index(p.thresholds, lc.Above) + 1)
				}
			}
			priceOf[r.model] = pr
		}
		if pr.m == nil {
			g.row.Unpriced += r.messages
			g.unpriced[r.model] += r.messages
			continue
		}
		rt := pr.m.Rates
		if lc := pr.m.LongContext; lc != nil && pr.lcRank > 0 && r.rank >= pr.lcRank && (lc.Until.IsZero() || r.hour.Before(lc.Until)) {
			rt = lc.Rates
		}
		cIn := float64(r.in) * rt.Input / 1e6
		cOut := float64(r.out) * rt.Output / 1e6
		cW := (float64(r.cw-r.cw1h)*rt.CacheWrite5m + float64(r.cw1h)*rt.CacheWrite1h) / 1e6
		cR := float64(r.cr) * rt.CacheRead / 1e6
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
// computes it.
func rollupKey(r *rollupRow, k string) string {
	switch k {
	case "day":
		return r.date
	case "week":
		d, err := time.Parse(time.DateOnly, r.date)
		if err != nil {
			return r.date
		}
		// The Monday of the ISO week.
		return d.AddDate(0, 0, -(int(d.Weekday())+6)%7).Format(time.DateOnly)
	case "month":
		return r.date[:min(7, len(r.date))]
	case "model":
		return r.model
	case "project":
		return r.project
	case "platform":
		return r.platform
	case "session":
		return r.session
	}
	return ""
}
