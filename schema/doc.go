// Package schema is the wire contract of pos: the canonical record that every
// filter reads and writes, its NDJSON codec and its enums.
//
// A stream is UTF-8 NDJSON: one JSON object per line, each with "schema"
// ("pos/1" or later) and "kind". The encoder is canonical — known fields in a
// fixed order, then unknown fields sorted by key — so equal records encode to
// equal bytes and golden files compare byte for byte. The decoder reads lines
// of any size with memory bounded by the longest line, keeps unknown fields
// (Record.Extra) so they pass through a filter untouched, and reports a bad
// line as a *SyntaxError without losing its place in the stream.
//
// Two decoders give the same records: the member-by-member decoder in Go,
// and sonic's, which is faster in bulk but compiles its decoder on first
// use, a cost in CPU that every stage of a small incremental sync would pay
// and never earn back. sonic comes in a *jsontext.Fast, which the binaries
// that stream records make once per process (package
// internal/jsontext/fastjson) and pass to their stages: its first 16 MB of
// records are decoded in Go, the rest by sonic. The lake's readers
// (pos-query, pos-mcp) pass none, decode in Go alone and start without
// sonic. The package holds no mutable state of its own.
//
// The JSON reading beneath the member decoder (jsontext.Reader) is package
// internal/jsontext's; this package holds the records' member tables and
// what a record's values must be (strict raw values, times in range).
//
// Paths ending in ".zst" are read and written zstd-compressed.
//
// The package does no I/O of its own beyond the readers and writers it is
// handed; it never exits or reads flags or the environment.
package schema
