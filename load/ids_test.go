package load_test

import (
	"fmt"
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
		if err := load.ReadIDs(f, got); err != nil {
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
	if err := load.ReadIDs(bad, map[uint64]uint64{}); err == nil {
		t.Fatal("no error for a file that is not Parquet")
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
