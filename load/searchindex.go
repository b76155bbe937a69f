package load

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
// where the merged term index starts u64 (0: none; see lexindex.go), the
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
	SearchIndexDir = "searchindex"
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

// SearchIndex is a lake's search index: its segments, mapped (the merged
// term indexes are read through the mapping) and open (the sidecars are
// read with pread). Its sidecars are read by ReadSignCodes, ReadVectors,
// ReadLexicalQuery and ReadRowMeta; a nil SearchIndex has none (they read
// the sidecar files).
type SearchIndex struct {
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

// SearchIndexKey names the lake's current segments: a reader that keeps an
// open SearchIndex opens it again when the key changes.
func SearchIndexKey(lake string) string {
	names, _ := segmentNames(filepath.Join(lake, SearchIndexDir))
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

// OpenSearchIndex maps the lake's segments. A segment that cannot be read
// (removed meanwhile by a load's merge, or damaged) is passed over: the
// files it named are read from their sidecars. Close lets go of the
// mappings; nothing read from the index may be used after.
func OpenSearchIndex(lake string) (*SearchIndex, error) {
	abs, err := filepath.Abs(lake)
	if err != nil {
		return nil, err
	}
	ix := &SearchIndex{lake: abs}
	dir := filepath.Join(abs, SearchIndexDir)
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
func (ix *SearchIndex) add(name string, b []byte, unmap func() error, entries []segEntry, lexAt int64) {
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
func (ix *SearchIndex) Close() error {
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
func (ix *SearchIndex) Covers(chunksPath string) bool { return ix.sidecar(chunksPath) != nil }

// Segments is how many segments the index maps.
func (ix *SearchIndex) Segments() int {
	if ix == nil {
		return 0
	}
	return len(ix.segs)
}

// sidecar returns the index's copy of a chunks file's sidecar, or nil.
func (ix *SearchIndex) sidecar(chunksPath string) []byte {
	return ix.lookup(chunksPath).b
}

func (ix *SearchIndex) lookup(chunksPath string) indexed {
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
func (ix *SearchIndex) Merged(files []string) (sets []MergedFiles, rest []int) {
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

// UpdateSearchIndex adds a segment with the sidecars of the lake's chunks
// files that no segment names, then merges segments (see SearchIndexDir).
// The caller holds the lake's lock; run names the new segments.
func UpdateSearchIndex(lake, run string) error {
	dir := filepath.Join(lake, SearchIndexDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// Temporary files of a dead run (we hold the lock).
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".tmp") {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	parts, err := tablePartitions(lake, TableChunks)
	if err != nil {
		return err
	}
	live := map[string]string{} // relative path -> its sidecar's path
	for _, p := range parts {
		files, err := appendParquetFiles(nil, Dir(lake, TableChunks, p.platform, p.date))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, f := range files {
			rel, err := filepath.Rel(lake, f)
			if err != nil {
				return err
			}
			live[filepath.ToSlash(rel)] = strings.TrimSuffix(f, ".parquet") + VectorsExt
		}
	}
	names, err := segmentNames(dir)
	if err != nil {
		return err
	}
	type seg struct {
		name      string
		live      []segEntry
		liveBytes int64
		deadBytes int64
	}
	var segs []*seg
	covered := map[string]bool{}
	for _, name := range names {
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		var entries []segEntry
		if err == nil {
			entries, _, err = readSegmentTOC(f, path, fi.Size())
		}
		f.Close()
		if err != nil {
			// A damaged segment, or an older build's, is replaced by the
			// sidecars it named.
			if err := os.Remove(path); err != nil {
				return err
			}
			continue
		}
		s := &seg{name: name}
		for _, e := range entries {
			if _, ok := live[e.path]; ok && !covered[e.path] {
				covered[e.path] = true
				s.live, s.liveBytes = append(s.live, e), s.liveBytes+e.n
			} else {
				s.deadBytes += e.n
			}
		}
		segs = append(segs, s)
	}
	var fresh []segEntry
	for rel, vec := range live {
		if covered[rel] {
			continue
		}
		fi, err := os.Stat(vec)
		if errors.Is(err, fs.ErrNotExist) {
			continue // no sidecar: search scores the file with DuckDB
		}
		if err != nil {
			return err
		}
		fresh = append(fresh, segEntry{path: rel, src: vec, n: fi.Size()})
	}
	seq := 0
	newName := func() string {
		seq++
		return fmt.Sprintf("seg-%s-%03d%s", run, seq, segmentExt)
	}
	if len(fresh) > 0 {
		slices.SortFunc(fresh, func(a, b segEntry) int { return strings.Compare(a.path, b.path) })
		name := newName()
		if err := writeSegment(lake, filepath.Join(dir, name), fresh); err != nil {
			return err
		}
		var n int64
		for _, e := range fresh {
			n += e.n
		}
		segs = append(segs, &seg{name: name, live: fresh, liveBytes: n})
	}
	// Segments with more dead bytes than live ones are merged whatever
	// their size; then runs of segmentMerge of about the same size.
	for {
		slices.SortFunc(segs, func(a, b *seg) int { return cmpInt64(a.liveBytes, b.liveBytes) })
		var group []*seg
		for _, s := range segs {
			if s.deadBytes > s.liveBytes {
				group = append(group, s)
			}
		}
		if len(group) == 0 {
			for i := 0; i+segmentMerge <= len(segs) && group == nil; i++ {
				lo := max(segs[i].liveBytes, segmentFloor)
				j := i
				for j < len(segs) && segs[j].liveBytes <= 4*lo {
					j++
				}
				if j-i >= segmentMerge {
					group = slices.Clone(segs[i:j])
				}
			}
		}
		if len(group) == 0 {
			return nil
		}
		var entries []segEntry
		var n int64
		for _, s := range group {
			entries, n = append(entries, s.live...), n+s.liveBytes
		}
		merged := &seg{live: entries, liveBytes: n}
		if len(entries) > 0 {
			slices.SortFunc(entries, func(a, b segEntry) int { return strings.Compare(a.path, b.path) })
			merged.name = newName()
			if err := writeSegment(lake, filepath.Join(dir, merged.name), entries); err != nil {
				return err
			}
			// The entries now point into the merged segment.
			if merged.live, err = segmentEntries(filepath.Join(dir, merged.name)); err != nil {
				return err
			}
		}
		for _, s := range group {
			if err := os.Remove(filepath.Join(dir, s.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		segs = slices.DeleteFunc(segs, func(s *seg) bool { return slices.Contains(group, s) })
		if merged.name != "" {
			segs = append(segs, merged)
		}
	}
}

// hasSegments reports whether the lake's search index has a segment: a
// lake without one (loaded before the index existed, or whose segments
// were deleted) gets one at its next load.
func hasSegments(lake string) bool {
	names, _ := segmentNames(filepath.Join(lake, SearchIndexDir))
	return len(names) > 0
}

// olderSegments reports whether a segment of the lake's search index is
// of an older layout (or not a segment): any load then rewrites it, not
// only one that writes chunks.
func olderSegments(lake string) bool {
	dir := filepath.Join(lake, SearchIndexDir)
	names, _ := segmentNames(dir)
	for _, name := range names {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		head := make([]byte, 8)
		_, err = io.ReadFull(f, head)
		f.Close()
		if err == nil && string(head) != segmentMagic {
			return true
		}
	}
	return false
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func segmentEntries(path string) ([]segEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	entries, _, err := readSegmentTOC(f, path, fi.Size())
	return entries, err
}

// writeSegment writes a segment of entries (each copied from its src at
// off) under a temporary name, syncs it and renames it into place.
func writeSegment(lake, path string, entries []segEntry) error {
	le := binary.LittleEndian
	heads := make([][]byte, len(entries))
	for i, e := range entries {
		h, err := sidecarHeadCopy(e)
		if err != nil {
			return fmt.Errorf("writing the search index %s: %w", path, err)
		}
		heads[i] = h
	}
	var toc []byte
	for i, e := range entries {
		toc = le.AppendUint16(toc, uint16(len(e.path)))
		toc = append(toc, e.path...)
		toc = le.AppendUint64(toc, 0)
		toc = le.AppendUint64(toc, 0)
		toc = le.AppendUint16(toc, uint16(len(heads[i])))
		toc = append(toc, heads[i]...)
	}
	at := (32 + int64(len(toc)) + 7) &^ 7
	p := 0
	offs := make([]int64, len(entries))
	for i, e := range entries {
		p += 2 + len(e.path)
		offs[i] = at
		le.PutUint64(toc[p:], uint64(at))
		le.PutUint64(toc[p+8:], uint64(e.n))
		p += 16 + 2 + len(heads[i])
		at = (at + e.n + 7) &^ 7
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = func() error {
		head := []byte(segmentMagic)
		head = le.AppendUint32(head, uint32(len(entries)))
		head = le.AppendUint32(head, uint32(len(toc)))
		head = le.AppendUint64(head, 0) // the merged term index's offset and
		head = le.AppendUint64(head, 0) // the segment's size, below
		head = append(head, toc...)
		w := &countWriter{w: f}
		if _, err := w.Write(head); err != nil {
			return err
		}
		for _, e := range entries {
			if err := w.pad(); err != nil {
				return err
			}
			src, err := os.Open(e.src)
			if err != nil {
				return err
			}
			n, err := io.Copy(w, io.NewSectionReader(src, e.off, e.n))
			src.Close()
			if err == nil && n != e.n {
				err = fmt.Errorf("%s: %d bytes, want %d", e.src, n, e.n)
			}
			if err != nil {
				return err
			}
		}
		// The merged term index, read from the sidecars as written.
		seg, unmap, err := mapFile(f, w.n)
		if err != nil {
			return err
		}
		lexAt, err := writeLexicon(f, w, seg, entries, offs)
		if uerr := unmap(); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
		_, err = f.WriteAt(le.AppendUint64(le.AppendUint64(nil, uint64(lexAt)), uint64(w.n)), 16)
		return err
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncFiles(lake, []string{tmp})
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the search index %s: %w", path, err)
	}
	return syncDirs(lake, map[string]bool{filepath.Dir(path): true})
}

// sidecarHeadCopy returns an entry's sidecar header, through its model
// names, for the segment's TOC: the copy in the segment the entry comes
// from, or read from its sidecar; nil when it does not fit in the bytes a
// search reads of a header, or is not one this build reads (the search
// then reads it from the sidecar, and says what is wrong with it).
func sidecarHeadCopy(e segEntry) ([]byte, error) {
	if len(e.head) > 0 && sidecarHeadLen(e.head) == len(e.head) {
		return e.head, nil
	}
	f, err := os.Open(e.src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, min(e.n, sidecarHeadRead))
	if _, err := f.ReadAt(b, e.off); err != nil {
		return nil, fmt.Errorf("%s: %w", e.src, err)
	}
	return b[:sidecarHeadLen(b)], nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

func (c *countWriter) pad() error {
	if k := (8 - c.n%8) % 8; k > 0 {
		_, err := c.Write(make([]byte, k))
		return err
	}
	return nil
}
