// Package query answers questions about a pos lake: the sessions, the last
// turns of a session, a timeline of exchanges, token and cost statistics,
// the files and decisions of past work, hybrid search over the chunks
// pos-embed added (BM25 over the lake's postings fused with vector
// similarity), token-budgeted context packs, session summaries, and
// arbitrary SQL over the lake's views.
//
// It reads the lake's Parquet files through DuckDB. The one thing it
// writes is a summary (Summarize stores it in the lake's summaries table
// through load.WriteSummaries, unless told not to), so the same summary of
// an unchanged session is made once. Every value a caller passes is bound
// as a SQL parameter; only whitelisted column expressions (the grouping
// keys of Stats) are ever written into SQL text. Filters on platform and
// time use the hive partition columns platform and date, so DuckDB reads
// only the files that can match.
//
// Results are typed (Session, Turn, TimelineEntry, StatsRow, SearchHit,
// ContextPack, Summary); each converts to a Table, which Writer prints as an
// aligned text table, JSON, NDJSON or CSV. Output prints each result as
// pos-query shows it: the columns a terminal's table keeps, search hits
// and turns as wrapped blocks (WriteBlocks), notes for a person on
// stderr. The package reads no flags or environment and never exits: a
// command fills in Output from its own.
package query
