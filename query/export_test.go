package query

import (
	"context"
	"maps"
	"slices"

	"github.com/pos-lake/pos/pricing"
)

// Exported for tests: the SQL the lookups run, to EXPLAIN it.

// StatsSQLArgs is the query Stats reads the messages with, when it reads
// them alone.
func StatsSQLArgs(opt StatsOptions) (string, []any) {
	none, _ := pricing.Parse([]byte(`{"models": []}`))
	return statsRowsQuery(opt, splitNone, statsThresholds(none), false, nil)
}

func StatsSQL(opt StatsOptions) string {
	q, _ := StatsSQLArgs(opt)
	return q
}

// TimelineSQLArgs is Timeline's query over the sessions view.
func TimelineSQLArgs(opt TimelineOptions, session string) (string, []any) {
	return timelineQuery(opt, session, "sessions", "exchanges", "")
}

// NoRollup makes Stats read the messages only, never the usage rollup.
func NoRollup(d *DB) { d.noRollup = true }

// RollupInGo reports whether Stats answers opt from the rollup alone, in
// Go, with no query engine.
func RollupInGo(d *DB, opt StatsOptions) bool {
	prices := opt.Prices
	if prices == nil {
		prices = pricing.Default()
	}
	p := d.rollupPlan(opt, prices)
	return p != nil && !p.readsMessages(opt)
}

// Connections is the number of open database connections: none until a
// statement starts DuckDB.
func Connections(d *DB) int { return d.db.Stats().OpenConnections }

// UsesRollup reports whether Stats would read the usage rollup for opt.
func UsesRollup(d *DB, opt StatsOptions) bool {
	prices := opt.Prices
	if prices == nil {
		prices = pricing.Default()
	}
	return d.rollupPlan(opt, prices) != nil
}

// NoSessionCache makes Sessions read the sessions view, never the session
// cache.
func NoSessionCache(d *DB) { d.noSessionCache = true }

// SessionViews is the sources one session's lookups read.
func SessionViews(d *DB, ref SessionRef) (messages, exchanges string) {
	messages, exchanges, _ = d.sessionViews(context.Background(), ref)
	return
}

// CandidatesByDuckDB makes search read its candidates' metadata with
// DuckDB, as a lake whose chunks have versions does, until restore is called.
func CandidatesByDuckDB() (restore func()) {
	candidatesInGo = false
	return func() { candidatesInGo = true }
}

// DefinedViews lists the views d has defined, sorted.
func DefinedViews(d *DB) []string {
	d.vmu.Lock()
	defer d.vmu.Unlock()
	return slices.Sorted(maps.Keys(d.defined))
}

// Refit packs the same items again for another budget, with the caller's
// warnings given, without reading the lake again.
func (p *ContextPack) Refit(budget int, warnings []string) *ContextPack {
	q := &ContextPack{Mode: p.Mode, Budget: budget, now: p.now, Warnings: slices.Clone(warnings)}
	for _, s := range p.Sessions {
		s.Items = slices.Clone(s.Items)
		for i := range s.Items {
			s.Items[i].Included, s.Items[i].Essential = false, false
		}
		q.Sessions = append(q.Sessions, s)
	}
	q.fit()
	return q
}

// SearchFromFiles makes searches read every chunks file's sidecar from its
// file, not from the lake's search index.
func SearchFromFiles(d *DB) { d.ix.off = true }

// SearchIndexCovers reports whether the lake's search index holds the
// sidecar of every chunks file, as a search maps it.
func SearchIndexCovers(d *DB, files []string) bool {
	d.beginSearch()
	defer d.endSearch()
	ix := d.searchIndex()
	for _, f := range files {
		if !ix.Covers(f) {
			return false
		}
	}
	return len(files) > 0
}

// DescribeWithSQL makes Search read what it shows of its hits besides
// their chunks (titles, exchanges, stories) with DuckDB only.
func DescribeWithSQL(d *DB) { d.describeSQL = true }

// ScanExactly makes d's searches score every vector exactly.
func ScanExactly(d *DB, exact bool) { d.exactScan = exact }

// DuckDBOpened reports whether the DB has opened its DuckDB connection.
func DuckDBOpened(d *DB) bool { return d.db.Stats().OpenConnections > 0 }
