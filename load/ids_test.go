package load_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/schema"
)

// readIDs reads what DuckDB reads: every id and content hash of a part
// file.
func TestReadIDsAgreesWithDuckDB(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var recs []*schema.Record
	for i := range 5000 {
		recs = append(recs, loadtest.Msg(fmt.Sprintf("m%05d", i), "s1", fmt.Sprintf("text %d", i%7), day.Add(time.Duration(i)*time.Second)))
	}
	if st := loadtest.Load(t, lake, recs...); st.Rows[layout.TableMessages] != 5000 {
		t.Fatalf("rows %v", st.Rows)
	}
	files, _ := filepath.Glob(filepath.Join(layout.Dir(lake, layout.TableMessages, "test", "2026-03-01"), "*.parquet"))
	if len(files) == 0 {
		t.Fatal("no part file")
	}
	db := loadtest.Views(t, lake)
	for _, f := range files {
		got := map[uint64]uint64{}
		if err := load.ReadIDs(nil, f, got); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Query(`SELECT id, content_hash FROM read_parquet(?)`, f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var id, h string
			rows.Scan(&id, &h)
			if got[xxhash.Sum64String(id)] != xxhash.Sum64String(h) {
				t.Fatalf("%s: id %s: content hash differs", f, id)
			}
			n++
		}
		rows.Close()
		if n != len(got) || n == 0 {
			t.Fatalf("%s: DuckDB reads %d ids, readIDs %d", f, n, len(got))
		}
	}
	// A file that is not Parquet is an error naming it, not an empty index.
	bad := filepath.Join(t.TempDir(), "bad.parquet")
	writeFile(t, bad, "not parquet")
	if err := load.ReadIDs(nil, bad, map[uint64]uint64{}); err == nil {
		t.Fatal("no error for a file that is not Parquet")
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Loads that share an IDCache, as a resident pos-sync's do, find what the
// partition holds as loads that read every file do: the same records again
// are duplicates, changed ones new versions, and a file replaced under the
// same name is read again.
func TestIDCache(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	msgs := func(n int, text string) []*schema.Record {
		var recs []*schema.Record
		for i := range n {
			recs = append(recs, loadtest.Msg(fmt.Sprintf("m%03d", i), "s1", fmt.Sprintf("%s %d", text, i), day.Add(time.Duration(i)*time.Second)))
		}
		return recs
	}
	cache := load.NewIDCache(1 << 20)
	opt := load.Options{Lake: lake, IDs: cache, NoCompact: true}
	loadtest.LoadWith(t, opt, msgs(100, "first")...)
	st := loadtest.LoadWith(t, opt, msgs(100, "first")...)
	if st.Rows[layout.TableMessages] != 0 || st.Duplicates != 100 {
		t.Fatalf("the same records again: rows %v, duplicates %d; want none, 100", st.Rows, st.Duplicates)
	}
	st = loadtest.LoadWith(t, opt, msgs(50, "second")...)
	if st.Rows[layout.TableMessages] != 50 || st.Versions != 50 {
		t.Fatalf("changed records: rows %v, versions %d; want 50 new versions", st.Rows, st.Versions)
	}
	hits := load.CacheHits(cache)
	if hits == 0 {
		t.Fatal("the third load read every file again: no file served from the cache")
	}

	// A file replaced under the same name (another size and time) is read
	// again, not answered from the cache.
	files, _ := filepath.Glob(filepath.Join(layout.Dir(lake, layout.TableMessages, "test", "2026-03-01"), "*.parquet"))
	if len(files) < 2 {
		t.Fatalf("want two part files at least, have %d", len(files))
	}
	a, b := files[0], files[len(files)-1]
	want := map[uint64]uint64{}
	if err := load.ReadIDs(nil, b, want); err != nil {
		t.Fatal(err)
	}
	got := map[uint64]uint64{}
	if err := load.ReadIDs(cache, a, got); err != nil {
		t.Fatal(err)
	}
	hits = load.CacheHits(cache)
	tmp := a + ".new"
	data, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, tmp, string(data))
	if err := os.Rename(tmp, a); err != nil {
		t.Fatal(err)
	}
	got = map[uint64]uint64{}
	if err := load.ReadIDs(cache, a, got); err != nil {
		t.Fatal(err)
	}
	if load.CacheHits(cache) != hits {
		t.Error("a replaced file was answered from the cache")
	}
	if !maps.Equal(got, want) {
		t.Errorf("a replaced file: %d ids, want the new file's %d", len(got), len(want))
	}

	// A cache too small for a file keeps nothing and still answers.
	small := load.NewIDCache(10)
	for range 2 {
		got = map[uint64]uint64{}
		if err := load.ReadIDs(small, b, got); err != nil || !maps.Equal(got, want) {
			t.Fatalf("through a small cache: %d ids, %v; want %d", len(got), err, len(want))
		}
	}
	if load.CacheHits(small) != 0 {
		t.Error("a file larger than the cache was kept")
	}
}
