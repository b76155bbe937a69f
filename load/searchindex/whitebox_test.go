package searchindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"unsafe"
)

// White-box helpers of the tests, which are in package searchindex_test
// (they build lakes with package load); export_test.go hands them on.

// stripPostings makes a sidecar one of a build that kept no postings in it.
func stripPostings(t *testing.T, chunksFile string) {
	t.Helper()
	sc, err := (*Index)(nil).openSidecar(chunksFile)
	if err != nil {
		t.Fatal(err)
	}
	sc.f.Close()
	path := sc.f.Name()
	end := sc.off + int64(sc.v.Rows*(8+8+4+1+4+sc.v.Dim)) // the codes' end: no sign codes, no postings
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, olderSidecar(t, b[:end], vectorsMagicV2), 0o600); err != nil {
		t.Fatal(err)
	}
}

// olderSidecar rewrites a sidecar in the layout of an older magic
// (POSVEC04: no metadata; POSVEC03, POSVEC02: no tokenizer version in the
// header either).
func olderSidecar(t *testing.T, b []byte, magic string) []byte {
	t.Helper()
	names, off, ok := modelNames(b, 48)
	if !ok || string(b[:8]) != vectorsMagic {
		t.Fatal("not a sidecar of this build")
	}
	if at := binary.LittleEndian.Uint64(b[24:]); at != 0 && at <= uint64(len(b)) {
		b = b[:at]
	}
	hdr := append([]byte(magic), b[8:20]...)
	if magic == vectorsMagicV4 {
		hdr = append(hdr, b[20:24]...)
	}
	for _, m := range names {
		hdr = binary.LittleEndian.AppendUint16(hdr, uint16(len(m)))
		hdr = append(hdr, m...)
	}
	for len(hdr)%8 != 0 {
		hdr = append(hdr, 0)
	}
	return append(hdr, b[off:]...)
}

// aligned copies b to memory aligned as a mapping is.
func aligned(b []byte) []byte {
	w := make([]uint64, (len(b)+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)[:len(b)]
	copy(out, b)
	return out
}

// readSegmentBytes reads b as the search index's only segment and looks
// up terms in it and reads its files' vectors and postings as a search
// does: an error or nothing, never a panic.
func readSegmentBytes(b []byte) {
	b = aligned(b)
	entries, lexAt, err := readSegmentTOC(bytes.NewReader(b), "seg.idx", int64(len(b)))
	if err != nil && !errors.Is(err, errOldSegment) {
		return
	}
	ix := &Index{lake: "/lake"}
	ix.add("seg.idx", b, func() error { return nil }, entries, lexAt)
	var files []string
	for _, e := range entries {
		files = append(files, "/lake/"+e.path)
	}
	sets, _ := ix.Merged(files)
	for _, s := range sets {
		l := s.Lex
		for _, e := range s.Entries {
			ent := l.Entries[e]
			for o := ent.Base; o < ent.Base+ent.Rows; o++ {
				_, _, _ = l.Keys[o], l.TS[o], l.DL[o]
			}
		}
		for _, v := range l.Versions() {
			for _, term := range []Term{{Text: "rotat"}, {Text: "flush"}, {Text: "r", Prefix: true}, {Text: ""}} {
				_ = l.Postings(v, term, func(p Postings) error {
					for i, o := range p.Ords {
						_, _, _ = p.TF(i), l.Keys[o], l.Entries[l.Ent[o]]
					}
					return nil
				})
			}
		}
	}
	for _, f := range files {
		ix.ReadVectors(f, true)
		ix.ReadLexicalQuery(f, func(int) []Term { return []Term{{Text: "flush"}, {Text: "ro", Prefix: true}} }, func(int, int64, int32, int32) {})
	}
}
