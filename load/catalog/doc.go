// Package catalog is the lake's SQL: the DuckDB views over its Parquet
// files (messages, exchanges, sessions, chunks, summaries and the rest,
// ViewSQL and DefineViews), the sources of a few partitions' or files'
// rows as the views have them (PartitionSource, FilesSource), and
// <lake>/pos.duckdb, which holds the views for ad-hoc SQL (WriteCatalog).
//
// A view reads its table's files through the lake's layout (package
// layout); a table with no data yet is read from a zero-row file of its
// schema. The sessions view is made of the session cache's rules (package
// rollup). The catalog never links pos-load's writer (package load).
package catalog
