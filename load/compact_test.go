package load

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/schema"
)

// Many small loads into the same partitions (an agent hook syncing after
// each turn): the compacted lake holds fewer files and exactly the rows,
// every version included, of a lake loaded the same way without
// compaction.
func TestCompactionKeepsEveryRow(t *testing.T) {
	compacted, plain := t.TempDir(), t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	runs := compactFiles*2 - 1 // the 8th and the 15th runs compact
	var stats, last Stats
	for i := range runs {
		at := day.Add(time.Duration(i) * time.Hour)
		recs := []*schema.Record{
			msg(fmt.Sprintf("m%d", i), "s1", fmt.Sprintf("turn %d", i), day.Add(time.Duration(i)*time.Minute)),
			// a new version of the first message in every run
			msg("m0", "s1", fmt.Sprintf("edited %d", i), day),
			// a raw line, and a record of a kind the lake does not know
			{Schema: schema.Version, Kind: schema.KindRaw, ID: fmt.Sprintf("r%d", i), Platform: "test", TS: day,
				Raw: []byte(fmt.Sprintf(`{"n":%d}`, i))},
			{Schema: schema.Version, Kind: "future_kind", ID: fmt.Sprintf("f%d", i), Platform: "test", TS: day},
		}
		for _, r := range recs {
			r.IngestedAt = at
		}
		st := loadAt(t, compacted, at, recs...)
		last = st
		stats.Compacted += st.Compacted
		stats.Merged += st.Merged
		if st.CompactErr != nil {
			t.Fatalf("run %d: %v", i, st.CompactErr)
		}
		func() {
			saved := compactFiles
			compactFiles = 1 << 30
			defer func() { compactFiles = saved }()
			loadAt(t, plain, at, recs...)
		}()
	}
	if stats.Compacted == 0 || stats.Merged < int64(compactFiles) {
		t.Fatalf("nothing compacted: %+v", stats)
	}
	if last.Compacted == 0 {
		t.Fatalf("the last run compacted nothing: the test checks no staging is left after one")
	}
	for _, table := range []string{TableRaw, TableMessages, TableOther} {
		dirA, dirB := Dir(compacted, table, "test", "2026-05-01"), Dir(plain, table, "test", "2026-05-01")
		a, _ := filepath.Glob(filepath.Join(dirA, "*.parquet"))
		b, _ := filepath.Glob(filepath.Join(dirB, "*.parquet"))
		if len(b) != runs || len(a) >= compactFiles {
			t.Fatalf("%s: %d files compacted, %d not", table, len(a), len(b))
		}
		db := views(t, compacted)
		q := func(d string) string {
			return fmt.Sprintf("SELECT * FROM read_parquet('%s/*.parquet')", d)
		}
		for _, pair := range [][2]string{{dirA, dirB}, {dirB, dirA}} {
			if n := one(t, db, fmt.Sprintf("SELECT count(*) FROM (%s EXCEPT ALL %s)", q(pair[0]), q(pair[1]))); n != "0" {
				t.Fatalf("%s: %s rows of %s are not in %s", table, n, pair[0], pair[1])
			}
		}
		want := map[string]int{TableMessages: 2 * runs, TableRaw: runs, TableOther: runs}[table]
		if n := one(t, db, fmt.Sprintf("SELECT count(*) FROM (%s)", q(dirA))); n != fmt.Sprint(want) {
			t.Fatalf("%s: %s rows", table, n)
		}
	}
	// The views answer the same.
	for _, q := range []string{
		"SELECT count(*) FROM messages",
		"SELECT string_agg(text, ',' ORDER BY id) FROM messages",
		"SELECT count(*) FROM raw",
	} {
		if a, b := one(t, views(t, compacted), q), one(t, views(t, plain), q); a != b {
			t.Fatalf("%s: %s compacted, %s not", q, a, b)
		}
	}
	// Nothing staged is left behind.
	if _, err := os.Stat(filepath.Join(compacted, "_state", compactDir)); !os.IsNotExist(err) {
		t.Fatalf("staging left: %v", err)
	}
}

// What a compaction that died midway staged is removed by the next load,
// and the partitions are as they were.
func TestDeadCompactionIsRemoved(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadAt(t, lake, day, msg("m1", "s1", "one", day))
	stage := filepath.Join(lake, "_state", compactDir, "messages.test.2026-05-01")
	if err := os.MkdirAll(stage, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(stage, "part-x.parquet"), []byte("half"), 0o600)
	loadAt(t, lake, day, msg("m2", "s1", "two", day))
	if _, err := os.Stat(filepath.Join(lake, "_state", compactDir)); !os.IsNotExist(err) {
		t.Fatalf("staging left: %v", err)
	}
	if n := one(t, views(t, lake), "SELECT count(*) FROM messages"); n != "2" {
		t.Fatalf("%s messages", n)
	}
}

// A file of another schema (an older build's) stays as it is, and the
// files of this build's schema around it are merged; a partition holding
// anything but files is left alone.
func TestCompactionKeepsOtherSchemas(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	dir := Dir(lake, TableMessages, "test", "2026-05-01")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	type oldRow struct {
		ID          string `parquet:"id"`
		ContentHash string `parquet:"content_hash"`
		Text        string `parquet:"text"`
	}
	old := filepath.Join(dir, "part-00000000T000000-00000000-00001.parquet")
	if err := parquet.WriteFile(old, []oldRow{{ID: "old", ContentHash: "h", Text: "from an older build"}}); err != nil {
		t.Fatal(err)
	}
	var st Stats
	for i := range compactFiles {
		at := day.Add(time.Duration(i) * time.Hour)
		st = loadAt(t, lake, at, msg(fmt.Sprintf("m%d", i), "s1", "x", day))
	}
	if st.Compacted != 1 || st.Merged != int64(compactFiles) {
		t.Fatalf("%+v", st)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if len(files) != 2 || files[0] != old {
		t.Fatalf("files after compaction: %v", files)
	}
	// A directory in the partition: not compacted, and nothing lost.
	if err := os.Mkdir(filepath.Join(dir, "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range compactFiles {
		at := day.Add(time.Duration(100+i) * time.Hour)
		st = loadAt(t, lake, at, msg(fmt.Sprintf("n%d", i), "s1", "x", day))
		if st.Compacted != 0 {
			t.Fatalf("a partition with a directory in it was compacted: %+v", st)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "keep")); err != nil {
		t.Fatal(err)
	}
}
