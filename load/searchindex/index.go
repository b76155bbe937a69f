package searchindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unsafe"
)

// The search index: the vector sidecars of the lake's chunks files, copied
// into a few segment files under <lake>/searchindex, so that a search maps
// a few files instead of opening one sidecar per chunks file (a lake of a
// million chunks has thousands, one or more per day partition).
//
// A segment holds the sidecars of the chunks files it names, byte for
// byte. Chunks files are immutable and their names unique, so a segment's
// copy of a file's sidecar stays right for as long as the file exists; a
// search uses it for the files of its window that a segment names, and
// reads the sidecar files of the others (a chunks file loaded by an older
// build, or since the last index update). An entry whose chunks file is
// gone (compaction merged it into another) is dead weight, dropped when
// its segment is next merged.
//
// pos-load adds a segment with the sidecars of the chunks files no
// segment names (each run that writes chunks, and the first run on a lake
// without an index), then merges segments of about the same size once
// there are segmentMerge of them: an incremental load writes only its own
// files' sidecars again, and a sidecar is copied about log(lake / load)
// times in all. Segments are written under a temporary name and renamed
// into place; the segments a merge replaces are removed after, and a
// reader that finds two segments naming one file uses either.
//
// Layout, little endian: magic "POSIDX04", entries u32 (N), TOC bytes u32,
// where the merged term index starts u64 (0: none; see lexicon.go), the
// segment's size u64 (one cut short is not read), then
// N entries (path length u16, the chunks file's path relative to the
// lake with slashes, offset u64 and length u64 of its sidecar's bytes in
// the segment, head length u16 and a copy of the sidecar's header
// through its model names, or none), then the sidecars, each at an offset
// that is a multiple of 8, then the merged term index. The header copies
// spare a search that reads a part of every sidecar one read per sidecar.
// Segments of older layouts are read as before and replaced at the next
// load: POSIDX02 has no header copies, and POSIDX01 no merged term index
// either (its files are searched one by one).
const (
	Dir            = "searchindex"
	segmentMagic   = "POSIDX04"
	segmentMagicV2 = "POSIDX02" // without header copies
	segmentMagicV1 = "POSIDX01" // without a merged term index
	segmentExt     = ".idx"
	// segmentMerge segments of about the same size are merged into one.
	segmentMerge = 4
)

// segmentFloor is the size under which segments count as one tier (a
// variable for tests).
var segmentFloor int64 = 4 << 20

// Index is a lake's search index: its segments, mapped (the merged
// term indexes are read through the mapping) and open (the sidecars are
// read with pread). Its sidecars are read by ReadSignCodes, ReadVectors,
// ReadLexicalQuery and ReadRowMeta; a nil Index has none (they read
// the sidecar files).
type Index struct {
	lake string
	segs []*mappedSegment // a file's sidecar is looked up in each in turn
}

type mappedSegment struct {
	name  string
	b     []byte // the mapping
	unmap func() error
	lex   *Lexicon // nil: none (an older segment, or one it could not read)
	// f is the segment, open: sidecars are read from it with pread (see
	// SignCodes).
	f *os.File
	// entries are its TOC's, and byPath their indices by path (nil when
	// the TOC lists them by path already, as this build writes it): a
	// file's sidecar is found by binary search.
	entries []segEntry
	byPath  []int32
}

// indexed is an index's copy of a chunks file's sidecar: its bytes, and
// its segment and entry.
type indexed struct {
	b     []byte
	head  []byte // the TOC's copy of the sidecar's header, or nil
	seg   *mappedSegment
	entry int
	off   int64 // where b starts in the segment
}

type segEntry struct {
	path   string // relative to the lake, with slashes
	src    string // the file the bytes are in
	off, n int64
	head   []byte // the sidecar's header through its model names, when known
}

// Key names the lake's current segments: a reader that keeps an
// open Index opens it again when the key changes.
func Key(lake string) string {
	names, _ := segmentNames(filepath.Join(lake, Dir))
	return strings.Join(names, "\n")
}

func segmentNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), segmentExt) && e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Open maps the lake's segments. A segment that cannot be read
// (removed meanwhile by a load's merge, or damaged) is passed over: the
// files it named are read from their sidecars. Close lets go of the
// mappings; nothing read from the index may be used after.
func Open(lake string) (*Index, error) {
	abs, err := filepath.Abs(lake)
	if err != nil {
		return nil, err
	}
	ix := &Index{lake: abs}
	dir := filepath.Join(abs, Dir)
	names, err := segmentNames(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		f, b, unmap, entries, lexAt, err := mapSegment(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		ix.add(name, b, unmap, entries, lexAt)
		ix.segs[len(ix.segs)-1].f = f
	}
	return ix, nil
}

// add adds a mapped segment (b) whose entries and merged term index's
// offset readSegmentTOC read.
func (ix *Index) add(name string, b []byte, unmap func() error, entries []segEntry, lexAt int64) {
	seg := &mappedSegment{name: name, b: b, unmap: unmap, entries: entries}
	if lexAt != 0 {
		// A lexicon that cannot be read leaves its files to be searched
		// one by one.
		seg.lex, _ = readLexicon(b, lexAt, len(entries))
	}
	byPath := func(a, b segEntry) int { return strings.Compare(a.path, b.path) }
	if !slices.IsSortedFunc(entries, byPath) {
		seg.byPath = make([]int32, len(entries))
		for i := range seg.byPath {
			seg.byPath[i] = int32(i)
		}
		slices.SortStableFunc(seg.byPath, func(i, j int32) int { return byPath(entries[i], entries[j]) })
	}
	ix.segs = append(ix.segs, seg)
}

// find returns the index of the entry for path, or -1.
func (s *mappedSegment) find(path string) int {
	n := len(s.entries)
	at := func(k int) int {
		if s.byPath != nil {
			return int(s.byPath[k])
		}
		return k
	}
	k, ok := sort.Find(n, func(k int) int { return strings.Compare(path, s.entries[at(k)].path) })
	if !ok {
		return -1
	}
	return at(k)
}

// mapSegment opens and maps a segment and reads its table of contents; the
// file stays open for the reads that copy rather than map (see
// mappedSegment.f).
func mapSegment(path string) (*os.File, []byte, func() error, []segEntry, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, nil, 0, err
	}
	fail := func(err error) (*os.File, []byte, func() error, []segEntry, int64, error) {
		f.Close()
		return nil, nil, nil, nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	entries, lexAt, err := readSegmentTOC(f, path, fi.Size())
	if err != nil && !errors.Is(err, errOldSegment) {
		return fail(err)
	}
	b, unmap, err := mapFile(f, fi.Size())
	if err != nil {
		return fail(err)
	}
	return f, b, unmap, entries, lexAt, nil
}

// errOldSegment is returned for a segment of an older layout, which a
// load replaces.
var errOldSegment = errors.New("a search index segment of an older build")

// readSegmentTOC reads a segment's entries and checks they lie within it;
// lexAt is where its merged term index starts (0: none). The entries of a
// segment of an older layout come with errOldSegment wrapped.
func readSegmentTOC(r io.ReaderAt, path string, size int64) (entries []segEntry, lexAt int64, err error) {
	bad := func(what string) error { return fmt.Errorf("%s: %s", path, what) }
	head := make([]byte, 32)
	if size < 16 {
		return nil, 0, bad("not a search index segment")
	}
	if _, err := r.ReadAt(head[:16], 0); err != nil {
		return nil, 0, err
	}
	le := binary.LittleEndian
	at := int64(16)
	heads := false
	switch string(head[:8]) {
	case segmentMagic, segmentMagicV2:
		heads = string(head[:8]) == segmentMagic
		if size < 32 {
			return nil, 0, bad("truncated")
		}
		if _, err := r.ReadAt(head[16:], 16); err != nil {
			return nil, 0, err
		}
		at, lexAt = 32, int64(le.Uint64(head[16:]))
		if n := int64(le.Uint64(head[24:])); n != size {
			return nil, 0, bad(fmt.Sprintf("%d bytes, want %d", size, n))
		}
		if lexAt < 0 || lexAt > size {
			return nil, 0, bad("bad merged term index offset")
		}
	case segmentMagicV1:
	default:
		return nil, 0, bad("not a search index segment of this build")
	}
	n, tocLen := int64(le.Uint32(head[8:])), int64(le.Uint32(head[12:]))
	if at+tocLen > size || n*18 > tocLen {
		return nil, 0, bad("truncated")
	}
	toc := make([]byte, tocLen)
	if _, err := r.ReadAt(toc, at); err != nil {
		return nil, 0, err
	}
	out := make([]segEntry, 0, n)
	p := 0
	for range n {
		if p+2 > len(toc) {
			return nil, 0, bad("bad table of contents")
		}
		l := int(le.Uint16(toc[p:]))
		if p+2+l+16 > len(toc) {
			return nil, 0, bad("bad table of contents")
		}
		// The path shares the TOC's bytes, which are not written again.
		e := segEntry{path: unsafe.String(unsafe.SliceData(toc[p+2:]), l), src: path}
		e.off, e.n = int64(le.Uint64(toc[p+2+l:])), int64(le.Uint64(toc[p+10+l:]))
		p += 2 + l + 16
		if heads {
			if p+2 > len(toc) {
				return nil, 0, bad("bad table of contents")
			}
			h := int(le.Uint16(toc[p:]))
			if p+2+h > len(toc) || int64(h) > e.n {
				return nil, 0, bad("bad table of contents")
			}
			if h > 0 {
				e.head = toc[p+2 : p+2+h : p+2+h]
			}
			p += 2 + h
		}
		if e.off < at+tocLen || e.n < 0 || e.off+e.n > size || e.off+e.n < e.off || e.off%8 != 0 ||
			lexAt != 0 && e.off+e.n > lexAt {
			return nil, 0, bad("an entry outside the segment")
		}
		out = append(out, e)
	}
	if !heads {
		return out, lexAt, fmt.Errorf("%s: %w", path, errOldSegment)
	}
	return out, lexAt, nil
}

// Close unmaps the segments.
func (ix *Index) Close() error {
	if ix == nil {
		return nil
	}
	var errs []error
	for _, s := range ix.segs {
		errs = append(errs, s.unmap())
		if s.f != nil {
			errs = append(errs, s.f.Close())
		}
	}
	ix.segs = nil
	return errors.Join(errs...)
}

// Covers reports whether the index holds the sidecar of a chunks file.
func (ix *Index) Covers(chunksPath string) bool { return ix.sidecar(chunksPath) != nil }

// Segments is how many segments the index maps.
func (ix *Index) Segments() int {
	if ix == nil {
		return 0
	}
	return len(ix.segs)
}

// sidecar returns the index's copy of a chunks file's sidecar, or nil.
func (ix *Index) sidecar(chunksPath string) []byte {
	return ix.lookup(chunksPath).b
}

func (ix *Index) lookup(chunksPath string) indexed {
	if ix == nil || len(ix.segs) == 0 {
		return indexed{}
	}
	rel, ok := strings.CutPrefix(chunksPath, ix.lake+string(filepath.Separator))
	if !ok {
		return indexed{}
	}
	rel = filepath.ToSlash(rel)
	for _, seg := range ix.segs {
		if i := seg.find(rel); i >= 0 {
			e := seg.entries[i]
			return indexed{b: seg.b[e.off : e.off+e.n : e.off+e.n], head: e.head, seg: seg, entry: i, off: e.off}
		}
	}
	return indexed{}
}

// MergedFiles are chunks files that a segment's lexicon holds: their
// indices in the list asked about, and their entries in the lexicon.
type MergedFiles struct {
	Lex     *Lexicon
	Files   []int
	Entries []int
}

// Merged sorts files into those that segments' lexicons hold, by segment,
// and the rest (indices into files), which are searched one by one.
func (ix *Index) Merged(files []string) (sets []MergedFiles, rest []int) {
	at := map[*Lexicon]int{}
	for i, f := range files {
		x := ix.lookup(f)
		if x.seg == nil || x.seg.lex == nil || x.entry >= len(x.seg.lex.Entries) || x.seg.lex.Entries[x.entry].Version == 0 {
			rest = append(rest, i)
			continue
		}
		j, ok := at[x.seg.lex]
		if !ok {
			j = len(sets)
			at[x.seg.lex] = j
			sets = append(sets, MergedFiles{Lex: x.seg.lex})
		}
		sets[j].Files, sets[j].Entries = append(sets[j].Files, i), append(sets[j].Entries, x.entry)
	}
	return sets, rest
}
