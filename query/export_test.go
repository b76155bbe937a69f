package query

// Exported for tests: the SQL the lookups run, to EXPLAIN it.

var StatsSQLArgs = statsQuery

func StatsSQL(opt StatsOptions) string {
	q, _ := statsQuery(opt)
	return q
}

var TimelineSQLArgs = timelineQuery
