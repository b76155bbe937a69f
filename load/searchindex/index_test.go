package searchindex_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"

	"github.com/pos-lake/pos/schema"
)

// indexState lists the lake's segments and checks that the index holds,
// byte for byte, the sidecar of every chunks file.
func indexState(t *testing.T, lake string) []string {
	t.Helper()
	ix, err := searchindex.Open(lake)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	files, err := layout.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{})
	if err != nil || len(files) == 0 {
		t.Fatalf("chunks files: %v %v", files, err)
	}
	for _, f := range files {
		want, err := os.ReadFile(sidecarPath(f))
		if err != nil {
			t.Fatal(err)
		}
		if got := ix.SidecarBytes(f); !bytes.Equal(got, want) {
			t.Fatalf("%s: the index holds %d bytes of its sidecar's %d", f, len(got), len(want))
		}
	}
	names, err := searchindex.SegmentNames(filepath.Join(lake, searchindex.Dir))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// pos-load keeps a search index of every chunks file's sidecar in a few
// segments: a load adds the sidecars of its own files, not the whole index
// again; segments of a size are merged, so many small loads leave few
// segments; compaction's merged files are indexed too; and what the index
// maps reads like the sidecar files.
func TestSearchIndex(t *testing.T) {
	// Segments of any size are tiered by size, as large ones are.
	floor := *searchindex.SegmentFloor
	*searchindex.SegmentFloor = 0
	t.Cleanup(func() { *searchindex.SegmentFloor = floor })
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var first []*schema.Record
	for i := range 300 {
		first = append(first, chunk(fmt.Sprint("c", i), fmt.Sprintf("parquet writer flush number %d of the backfill", i), "m", 8, day.AddDate(0, 0, -i%30)))
	}
	loadtest.LoadWith(t, load.Options{Lake: lake, NoCatalog: true}, first...)
	segs := indexState(t, lake)
	if len(segs) != 1 {
		t.Fatalf("after the first load: segments %v", segs)
	}
	big := segs[0]
	for i := range 20 {
		loadtest.LoadWith(t, load.Options{Lake: lake, NoCatalog: true}, chunk(fmt.Sprint("hook", i), fmt.Sprint("rotate logs after turn ", i), "m", 8, day))
		segs = indexState(t, lake)
		if !slices.Contains(segs, big) {
			t.Fatalf("load %d rewrote the backfill's segment: %v", i, segs)
		}
		if len(segs) > 2*searchindex.SegmentMerge {
			t.Fatalf("load %d: %d segments", i, len(segs))
		}
	}
	// The partition the hooks wrote to was compacted on the way: its
	// merged file is indexed, and the index reads as the files do.
	ix, err := searchindex.Open(lake)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	files, _ := layout.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{})
	for _, f := range files {
		a, err1 := ix.ReadVectors(f, true)
		b, err2 := searchindex.ReadVectors(f, true)
		if err1 != nil || err2 != nil || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("%s: index %v, file %v", f, err1, err2)
		}
		keys := map[int64]bool{}
		for _, k := range b.Keys {
			keys[k] = true
		}
		var fromIndex, fromFile []searchindex.RowMeta
		if err := ix.ReadRowMeta(f, keys, true, func(_ int64, _ time.Time, m searchindex.RowMeta) { fromIndex = append(fromIndex, m) }); err != nil {
			t.Fatal(err)
		}
		if err := (*searchindex.Index)(nil).ReadRowMeta(f, keys, true, func(_ int64, _ time.Time, m searchindex.RowMeta) { fromFile = append(fromFile, m) }); err != nil {
			t.Fatal(err)
		}
		if len(fromIndex) != b.Rows || fmt.Sprint(fromIndex) != fmt.Sprint(fromFile) {
			t.Fatalf("%s: metadata of %d rows from the index, %d from the file", f, len(fromIndex), len(fromFile))
		}
		for _, m := range fromIndex {
			if m.Text == "" || m.ID == "" || m.ParentID != "p-"+m.ID {
				t.Fatalf("%s: metadata %+v", f, m)
			}
		}
	}
}

// A lake loaded before the index existed, or whose segments were deleted,
// gets one at its next load, even one that adds no chunks; a segment cut short is passed over by readers
// and replaced at the next load that writes chunks.
func TestSearchIndexOfAnOlderLake(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadtest.LoadWith(t, load.Options{Lake: lake, NoCatalog: true}, chunk("a", "parquet writer flush", "m", 4, day), chunk("b", "rotate logs", "m", 4, day.AddDate(0, 0, 1)))
	if err := os.RemoveAll(filepath.Join(lake, searchindex.Dir)); err != nil {
		t.Fatal(err)
	}
	loadtest.LoadWith(t, load.Options{Lake: lake, NoCatalog: true})
	segs := indexState(t, lake)
	// Its segments deleted, the directory left.
	if err := os.Remove(filepath.Join(lake, searchindex.Dir, segs[0])); err != nil {
		t.Fatal(err)
	}
	loadtest.LoadWith(t, load.Options{Lake: lake, NoCatalog: true})
	if segs = indexState(t, lake); len(segs) != 1 {
		t.Fatalf("after a load of a lake whose segments were deleted: %v", segs)
	}
	path := filepath.Join(lake, searchindex.Dir, segs[0])
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:len(b)-3], 0o600)
	ix, err := searchindex.Open(lake)
	if err != nil || ix.Segments() != 0 {
		t.Fatalf("a damaged segment mapped: %v", err)
	}
	ix.Close()
	loadtest.LoadWith(t, load.Options{Lake: lake, NoCatalog: true}, chunk("c", "retry the upload", "m", 4, day))
	indexState(t, lake)
}

// sidecarReads is what a search reads of each file's sidecar through ix:
// its sign codes with every row's key, time, scale and codes, and its
// rows' metadata and texts.
func sidecarReads(t *testing.T, ix *searchindex.Index, files []string) string {
	t.Helper()
	var b strings.Builder
	var rows searchindex.SignRows
	for _, f := range files {
		sc, err := ix.ReadSignCodes(f, true, true, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := sc.ReadRows(&rows, 0, sc.Rows); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		fmt.Fprintln(&b, f, sc.Rows, sc.Dim, sc.Models, sc.TS, sc.Keys, sc.Bits)
		for i := range sc.Rows {
			key, scale, codes := rows.Row(i)
			fmt.Fprintln(&b, key, scale, codes)
		}
		sc.Close()
		err = ix.ReadRowMeta(f, nil, true, func(key int64, ts time.Time, m searchindex.RowMeta) { fmt.Fprintln(&b, key, ts, m) })
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return b.String()
}

// A segment's TOC carries each sidecar's header through its model names,
// so that a search reads the rest alone. What a search reads is the same
// from the sidecar files, from the index, with the rows read whole or in
// parts, with header copies that do not read as one (the sidecar's own
// is read), and from a segment of the layout before the copies, which the
// next load rewrites.
func TestSearchIndexHeaderCopies(t *testing.T) {
	lake, files := lexLake(t)
	want := sidecarReads(t, nil, files)
	open := func() *searchindex.Index {
		t.Helper()
		ix, err := searchindex.Open(lake)
		if err != nil || ix.Segments() == 0 {
			t.Fatalf("the index: %v", err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	segs := indexState(t, lake)
	path := filepath.Join(lake, searchindex.Dir, segs[0])
	entries, heads, err := searchindex.SegmentHeads(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		side, err := os.ReadFile(filepath.Join(lake, e[:len(e)-len(".parquet")]+searchindex.VectorsExt))
		if err != nil {
			t.Fatal(err)
		}
		if h := heads[i]; len(h) < 48 || !bytes.Equal(h, side[:len(h)]) {
			t.Fatalf("%s: header copy %q", e, h)
		}
	}
	if got := sidecarReads(t, open(), files); got != want {
		t.Fatalf("from the index:\n%s\nfrom the sidecars:\n%s", got, want)
	}
	whole := *searchindex.WholeRead
	*searchindex.WholeRead = 0
	got := sidecarReads(t, open(), files)
	*searchindex.WholeRead = whole
	if got != want {
		t.Fatalf("rows read in parts:\n%s\nfrom the sidecars:\n%s", got, want)
	}
	// Header copies that are not headers.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tocEnd := 32 + int(binary.LittleEndian.Uint32(b[12:]))
	if n := bytes.Count(b[32:tocEnd], []byte(searchindex.VectorsMagic)); n != len(entries) {
		t.Fatalf("%d header copies in the TOC, %d entries", n, len(entries))
	}
	copy(b[32:tocEnd], bytes.ReplaceAll(b[32:tocEnd], []byte(searchindex.VectorsMagic), []byte("NOTAHEAD")))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := sidecarReads(t, open(), files); got != want {
		t.Fatalf("with damaged header copies:\n%s\nfrom the sidecars:\n%s", got, want)
	}
	// The layout before the copies.
	writeOlderSegment(t, lake, files, searchindex.SegmentMagicV2)
	if !searchindex.OlderSegments(lake) {
		t.Fatal("a POSIDX02 segment is not one to rewrite")
	}
	ix := open()
	if _, rest := ix.Merged(files); len(rest) != len(files) || !ix.Covers(files[0]) {
		t.Fatalf("a POSIDX02 segment without a term index: %d files apart", len(rest))
	}
	if got := sidecarReads(t, ix, files); got != want {
		t.Fatalf("from a POSIDX02 segment:\n%s\nfrom the sidecars:\n%s", got, want)
	}
	loadtest.LoadWith(t, load.Options{Lake: lake, NoCatalog: true})
	if searchindex.OlderSegments(lake) {
		t.Fatal("a load left the POSIDX02 segment")
	}
	if got := sidecarReads(t, open(), files); got != want {
		t.Fatalf("after a load:\n%s\nfrom the sidecars:\n%s", got, want)
	}
}
