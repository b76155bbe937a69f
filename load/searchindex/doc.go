// Package searchindex is the lake's search index, its on-disk formats
// and their readers and writers:
//
//   - beside each chunks file, its vector sidecar <part>.vec (sidecar.go):
//     the rows' keys, times and lengths, quantized vectors and sign codes,
//     postings, and metadata and texts, which is what search reads of a
//     chunks file instead of the Parquet file;
//   - the postings table's files (postings.go), the lexical index SQL
//     sees, read by the row groups that can hold a query's terms;
//   - under <lake>/searchindex, the segments (index.go) that copy many
//     sidecars together with a merged term index (lexicon.go), so that a
//     search maps a few files instead of opening one per chunks file.
//
// Search (package query) opens an Index and reads sidecars through it;
// pos-load (package load) writes a chunks file's sidecar with a
// SidecarWriter, merges sidecars when it compacts a partition, and brings
// the segments up to date with Update once a run's files are in place.
// Every file is written under a temporary name and renamed into place
// complete, so a reader never sees one in part. A file damaged or cut
// short is refused with an error, never read past its bounds; a file of
// an older layout is read as that layout says, and its segments are
// replaced at the next load.
//
// The package knows the lake only as paths: which files are chunks files
// is its callers' to say. It reads no flags or environment and never
// exits.
package searchindex
