// Package embed is pos-embed's library: it finds the indexable units in a
// stream of pos records (exchanges, the user prompts that open them, summary
// labels, compaction summaries, subagent reports and plans), splits each into
// token-bounded chunks that overlap, and writes a chunk record with a vector
// after the record it came from. Every record passes through unchanged.
//
// Vectors come from a Provider: Hash (the default: local, deterministic,
// feature-hashed lexical vectors, no model files, no network) or OpenAI (any
// server that speaks the OpenAI embeddings API, with batching, bounded
// concurrency and retries). A Cache in the lake keeps every vector by model,
// dimension and text hash, so embedding the same text again costs nothing.
//
// A chunk's vector is of its text under its unit's heading (the first line
// of an exchange's prompt, a document's title), so a chunk from the middle
// of a long answer still says what it is about; the chunk record's text,
// which pos-load indexes for lexical search, is the chunk alone.
//
// Chunk ids derive from the unit's id, its content type and the chunk's
// position, so re-running the pipeline gives the same ids and pos-load keeps
// one row per chunk. The package never reads flags or the environment and
// never exits; it touches the network only through the OpenAI provider.
package embed
