package query

import "github.com/pos-lake/pos/pricing"

// Exported for tests: the SQL the lookups run, to EXPLAIN it.

// StatsSQLArgs is the query of Stats with an empty price table (no
// parameters for prices).
func StatsSQLArgs(opt StatsOptions) (string, []any) {
	none, _ := pricing.Parse([]byte(`{"models": []}`))
	return statsQuery(opt, none, splitNone, nil)
}

func StatsSQL(opt StatsOptions) string {
	q, _ := StatsSQLArgs(opt)
	return q
}

var TimelineSQLArgs = timelineQuery

// NoRollup makes Stats read the messages only, never the usage rollup.
func NoRollup(d *DB) { d.noRollup = true }

// UsesRollup reports whether Stats would read the usage rollup for opt.
func UsesRollup(d *DB, opt StatsOptions) bool {
	prices := opt.Prices
	if prices == nil {
		prices = pricing.Default()
	}
	return d.rollupPlan(opt, prices) != nil
}
