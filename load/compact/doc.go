// Package compact merges the small part files of the lake's partitions.
//
// Each incremental load adds a small part file to every partition it
// touches (an agent hook that syncs after each turn adds one to today's
// partitions and to those of the sessions it continues), and every query
// and every later load opens them all. Once a partition holds
// compactFiles small files, pos-load (package load, through a Run) merges
// them into one.
//
// Readers never see a partition half-compacted: the merged file and links
// to the files that stay are put in a new directory beside the lake's
// files, which then takes the partition directory's place in one atomic
// exchange of the two (renameat2 RENAME_EXCHANGE); the old directory is
// removed after. A run that dies midway leaves only a directory under
// <lake>/_state/compact, which the next load removes (Remove). Where the
// exchange is not available, partitions are not compacted. The files'
// data and renames are made durable (internal/durable) before a Run says
// it is done.
//
// A chunks partition goes with its postings partition (search pairs each
// postings file with the chunks file of its name) and its vector sidecars:
// the two directories are exchanged one after the other, after a journal
// says so; the next load completes the second exchange if a run died
// between them (compactChunks).
package compact
