// Package layout is the lake's layout on disk, shared by its writer
// (package load) and its readers (query, pos-mcp, the catalog, the rollup):
// the tables and their row types, where each table's hive partitions and
// part files lie (Dir, TableDir, Partitions, PartitionFiles, Listing and
// the listings it keeps), the files in <lake>/_state that say what a load
// changed (StateStamp, Versioned, the tables' schema fingerprints), how
// temporary files are named and swept, and the Parquet settings every file
// of the lake is written and opened with.
//
// It holds no SQL and no writer of pos-load's part files; a reader of the
// lake's files needs only this package.
package layout
