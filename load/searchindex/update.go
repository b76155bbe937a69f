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
	"strings"

	"github.com/pos-lake/pos/load/internal/durable"
)

// Writing the search index: the segments pos-load adds and merges (see
// index.go for what they hold and how they are read).

// Update adds a segment with the sidecars of the lake's chunks files
// (chunks, their paths) that no segment names, then merges segments (see
// Dir). The caller holds the lake's lock; run names the new segments.
func Update(lake, run string, chunks []string) error {
	dir := filepath.Join(lake, Dir)
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
	live := map[string]string{} // relative path -> its sidecar's path
	for _, f := range chunks {
		rel, err := filepath.Rel(lake, f)
		if err != nil {
			return err
		}
		live[filepath.ToSlash(rel)] = strings.TrimSuffix(f, ".parquet") + VectorsExt
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

// HasSegments reports whether the lake's search index has a segment: a
// lake without one (loaded before the index existed, or whose segments
// were deleted) gets one at its next load.
func HasSegments(lake string) bool {
	names, _ := segmentNames(filepath.Join(lake, Dir))
	return len(names) > 0
}

// OlderSegments reports whether a segment of the lake's search index is
// of an older layout (or not a segment): any load then rewrites it, not
// only one that writes chunks.
func OlderSegments(lake string) bool {
	dir := filepath.Join(lake, Dir)
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
		err = durable.SyncFiles(lake, []string{tmp})
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the search index %s: %w", path, err)
	}
	return durable.SyncDirs(lake, map[string]bool{filepath.Dir(path): true})
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
