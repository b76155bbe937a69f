// Package query answers questions about a pos lake: the sessions, the last
// turns of a session, a timeline of exchanges, token statistics, and
// arbitrary SQL over the lake's views (raw, messages, exchanges, sessions,
// documents, other).
//
// It reads the lake's Parquet files through an in-memory DuckDB database
// and never writes to the lake's data. Every value a caller passes is bound
// as a SQL parameter; only whitelisted column expressions (the grouping
// keys of Stats) are ever written into SQL text. Filters on platform and
// time use the hive partition columns platform and date, so DuckDB reads
// only the files that can match.
//
// Results are typed (Session, Turn, TimelineEntry, StatsRow); each converts
// to a Table, which Writer prints as an aligned text table, JSON, NDJSON or
// CSV. The package reads no flags or environment and never exits.
package query
