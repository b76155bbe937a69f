package searchindex

import (
	"testing"
)

// What the tests in package searchindex_test see of the package's
// insides.
var (
	SegmentFloor     = &segmentFloor
	WholeRead        = &wholeRead
	SegmentNames     = segmentNames
	StripPostings    = stripPostings
	ReadSegmentBytes = readSegmentBytes
)

const (
	SegmentMerge   = segmentMerge
	SegmentMagicV1 = segmentMagicV1
	SegmentMagicV2 = segmentMagicV2
	VectorsMagic   = vectorsMagic
)

// SidecarBytes is the index's copy of a chunks file's sidecar, or nil.
func (ix *Index) SidecarBytes(chunksPath string) []byte { return ix.sidecar(chunksPath) }

// ScaleBytes are the rows' scales as the sidecar holds them.
func (v *Vectors) ScaleBytes() []byte { return v.scale }

// PostingsAt is where the postings of a chunks file's sidecar start.
func PostingsAt(t *testing.T, chunksPath string) int64 {
	t.Helper()
	sc, err := (*Index)(nil).openSidecar(chunksPath)
	if err != nil {
		t.Fatal(err)
	}
	sc.close()
	return sc.postAt
}

// SegmentHeads lists the entries of the segment at path: each one's path
// and the TOC's copy of its sidecar's header.
func SegmentHeads(path string) (paths []string, heads [][]byte, err error) {
	entries, err := segmentEntries(path)
	for _, e := range entries {
		paths, heads = append(paths, e.path), append(heads, e.head)
	}
	return paths, heads, err
}
