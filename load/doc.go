// Package load writes pos records into the lake and keeps what is derived
// from its files up to date. It is pos-load's library, and the readers'
// (query, pos-mcp) way to find and read the lake's files.
//
// It does several jobs, each in its own files:
//
//   - Writing Parquet (loader.go, lane.go, writer.go, tables.go): a Loader
//     routes each record to its table, writes hive-partitioned part files
//     <lake>/indexed/<table>/platform=<p>/date=<d>/part-*.parquet under a
//     temporary name and renames each into place once complete, so a reader
//     never sees a partial file. Loading is idempotent by record id: a
//     record already in the lake unchanged is not written again.
//   - The lake's state (state.go, watermarks.go, scrubstate.go, lock.go):
//     <lake>/_state holds the run log, the extractors' watermarks, which
//     tables hold several versions of a record, how rows were scrubbed, and
//     the writer lock. Readers never lock: files only appear by rename.
//   - The DuckDB catalog (catalog.go, views.go, paths.go): the SQL of the
//     lake's views over the files, and <lake>/pos.duckdb, which holds them
//     for ad-hoc SQL.
//   - Rollups and caches (rollup.go, rollup_go.go, session_parts.go,
//     listing.go, listing_kept.go): the usage rollup pos-query stats reads,
//     the session cache's rows, and the kept listings of the chunks
//     partitions.
//   - Compaction (compact.go): merging a partition's small part files into
//     one, swapped in whole so a reader never sees it half done; its
//     files' data and renames are made durable (internal/durable) before
//     a run says it is done.
//   - The chunks and the search index (chunks.go): beside each chunks
//     file its postings and its vector sidecar, and the segments that
//     copy many sidecars together, in the formats of package searchindex,
//     which search reads without this package's writer.
//   - What search reads of its hits in Go, without DuckDB (search_rows.go,
//     chunks_meta.go).
//
// The package reads no flags or environment and never exits.
package load
