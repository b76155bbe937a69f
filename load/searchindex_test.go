package load

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pos-lake/pos/schema"
)

// indexState lists the lake's segments and checks that the index holds,
// byte for byte, the sidecar of every chunks file.
func indexState(t *testing.T, lake string) []string {
	t.Helper()
	ix, err := OpenSearchIndex(lake)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	files, err := PartitionFiles(lake, TableChunks, "", time.Time{}, time.Time{})
	if err != nil || len(files) == 0 {
		t.Fatalf("chunks files: %v %v", files, err)
	}
	for _, f := range files {
		want, err := os.ReadFile(sidecarPath(f))
		if err != nil {
			t.Fatal(err)
		}
		if got := ix.sidecar(f); !bytes.Equal(got, want) {
			t.Fatalf("%s: the index holds %d bytes of its sidecar's %d", f, len(got), len(want))
		}
	}
	names, err := segmentNames(filepath.Join(lake, SearchIndexDir))
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
	floor := segmentFloor
	segmentFloor = 0
	t.Cleanup(func() { segmentFloor = floor })
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var first []*schema.Record
	for i := range 300 {
		first = append(first, chunk(fmt.Sprint("c", i), fmt.Sprintf("parquet writer flush number %d of the backfill", i), "m", 8, day.AddDate(0, 0, -i%30)))
	}
	loadWith(t, Options{Lake: lake, NoCatalog: true}, first...)
	segs := indexState(t, lake)
	if len(segs) != 1 {
		t.Fatalf("after the first load: segments %v", segs)
	}
	big := segs[0]
	for i := range 20 {
		loadWith(t, Options{Lake: lake, NoCatalog: true}, chunk(fmt.Sprint("hook", i), fmt.Sprint("rotate logs after turn ", i), "m", 8, day))
		segs = indexState(t, lake)
		if !slices.Contains(segs, big) {
			t.Fatalf("load %d rewrote the backfill's segment: %v", i, segs)
		}
		if len(segs) > 2*segmentMerge {
			t.Fatalf("load %d: %d segments", i, len(segs))
		}
	}
	// The partition the hooks wrote to was compacted on the way: its
	// merged file is indexed, and the index reads as the files do.
	ix, err := OpenSearchIndex(lake)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	files, _ := PartitionFiles(lake, TableChunks, "", time.Time{}, time.Time{})
	for _, f := range files {
		a, err1 := ix.ReadVectors(f, true)
		b, err2 := ReadVectors(f, true)
		if err1 != nil || err2 != nil || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("%s: index %v, file %v", f, err1, err2)
		}
		keys := map[int64]bool{}
		for _, k := range b.Keys {
			keys[k] = true
		}
		var fromIndex, fromFile []RowMeta
		if err := ix.ReadRowMeta(f, keys, true, func(_ int64, _ time.Time, m RowMeta) { fromIndex = append(fromIndex, m) }); err != nil {
			t.Fatal(err)
		}
		if err := (*SearchIndex)(nil).ReadRowMeta(f, keys, true, func(_ int64, _ time.Time, m RowMeta) { fromFile = append(fromFile, m) }); err != nil {
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

// A lake loaded before the index existed gets one at its next load, even
// one that adds no chunks; a segment cut short is passed over by readers
// and replaced at the next load that writes chunks.
func TestSearchIndexOfAnOlderLake(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadWith(t, Options{Lake: lake, NoCatalog: true}, chunk("a", "parquet writer flush", "m", 4, day), chunk("b", "rotate logs", "m", 4, day.AddDate(0, 0, 1)))
	if err := os.RemoveAll(filepath.Join(lake, SearchIndexDir)); err != nil {
		t.Fatal(err)
	}
	loadWith(t, Options{Lake: lake, NoCatalog: true})
	segs := indexState(t, lake)
	path := filepath.Join(lake, SearchIndexDir, segs[0])
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:len(b)-3], 0o600)
	ix, err := OpenSearchIndex(lake)
	if err != nil || ix.Segments() != 0 {
		t.Fatalf("a damaged segment mapped: %v", err)
	}
	ix.Close()
	loadWith(t, Options{Lake: lake, NoCatalog: true}, chunk("c", "retry the upload", "m", 4, day))
	indexState(t, lake)
}
