// Package load is pos-load's library: it writes pos records into the lake.
// A Loader routes each record to its table and writes hive-partitioned
// part files <lake>/indexed/<table>/platform=<p>/date=<d>/part-*.parquet
// (loader.go, lane.go, writer.go, tables.go) under a temporary name, and
// renames each into place once complete, so a reader never sees a partial
// file. Loading is idempotent
// by record id (ids.go): a record already in the lake unchanged is not
// written again. Beside each chunks file it writes its postings and its
// vector sidecar, in the formats of package searchindex (chunks.go).
//
// A load keeps the lake's state in <lake>/_state (state.go,
// watermarks.go, scrubstate.go, lock.go): the run log, the extractors'
// watermarks, how rows were scrubbed, and the writer lock. Readers never
// lock: files only appear by rename.
//
// Once its files are in place, a load has the packages beside it bring
// what is derived from them up to date: it compacts the partitions it
// touched (package compact), the search index's segments (searchindex),
// the usage rollup (rollup) and pos.duckdb (catalog). Those packages, and
// the lake's readers (query, pos-mcp, searchrows), read the lake through
// package layout and never link this one. WriteSummaries writes the
// summaries pos-query makes (summaries.go).
//
// The package reads no flags or environment and never exits.
package load
