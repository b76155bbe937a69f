// Package searchrows reads in Go, without DuckDB, what search shows of its
// hits from the lake's Parquet files: the exchanges' heads, the sessions'
// titles and parts, the messages of a story, and the metadata of chunks.
// It sits beside package searchindex, which reads the index the hits are
// found in: searchindex knows the lake only as paths, and this package
// reads the tables' files through package layout.
package searchrows
