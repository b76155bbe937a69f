package query

import "github.com/pos-lake/pos/pricing"

// Exported for tests: the SQL the lookups run, to EXPLAIN it.

// StatsSQLArgs is the query of Stats with an empty price table (no
// parameters for prices).
func StatsSQLArgs(opt StatsOptions) (string, []any) {
	none, _ := pricing.Parse([]byte(`{"models": []}`))
	return statsQuery(opt, none, splitNone)
}

func StatsSQL(opt StatsOptions) string {
	q, _ := StatsSQLArgs(opt)
	return q
}

var TimelineSQLArgs = timelineQuery
