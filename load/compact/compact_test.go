package compact_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/compact"
	"github.com/pos-lake/pos/load/internal/indextest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/schema"
)

// Many small loads into the same partitions (an agent hook syncing after
// each turn): the compacted lake holds fewer files and exactly the rows,
// every version included, of a lake loaded the same way without
// compaction.
func TestCompactionKeepsEveryRow(t *testing.T) {
	compacted, plain := t.TempDir(), t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	runs := compact.CompactFiles*2 - 1 // the 8th and the 15th runs compact
	var stats, last load.Stats
	for i := range runs {
		at := day.Add(time.Duration(i) * time.Hour)
		recs := []*schema.Record{
			loadtest.Msg(fmt.Sprintf("m%d", i), "s1", fmt.Sprintf("turn %d", i), day.Add(time.Duration(i)*time.Minute)),
			// a new version of the first message in every run
			loadtest.Msg("m0", "s1", fmt.Sprintf("edited %d", i), day),
			// a raw line, and a record of a kind the lake does not know
			{Schema: schema.Version, Kind: schema.KindRaw, ID: fmt.Sprintf("r%d", i), Platform: "test", TS: day,
				Raw: []byte(fmt.Sprintf(`{"n":%d}`, i))},
			{Schema: schema.Version, Kind: "future_kind", ID: fmt.Sprintf("f%d", i), Platform: "test", TS: day},
		}
		for _, r := range recs {
			r.IngestedAt = at
		}
		st := loadtest.LoadAt(t, compacted, at, recs...)
		last = st
		stats.Compacted += st.Compacted
		stats.Merged += st.Merged
		if st.CompactErr != nil {
			t.Fatalf("run %d: %v", i, st.CompactErr)
		}
		if st := loadtest.LoadWith(t, load.Options{Lake: plain, Now: func() time.Time { return at }, NoCompact: true}, recs...); st.Compacted != 0 {
			t.Fatalf("compacted with NoCompact: %+v", st)
		}
	}
	if stats.Compacted == 0 || stats.Merged < int64(compact.CompactFiles) {
		t.Fatalf("nothing compacted: %+v", stats)
	}
	if last.Compacted == 0 {
		t.Fatalf("the last run compacted nothing: the test checks no staging is left after one")
	}
	for _, table := range []string{layout.TableRaw, layout.TableMessages, layout.TableOther} {
		dirA, dirB := layout.Dir(compacted, table, "test", "2026-05-01"), layout.Dir(plain, table, "test", "2026-05-01")
		a, _ := filepath.Glob(filepath.Join(dirA, "*.parquet"))
		b, _ := filepath.Glob(filepath.Join(dirB, "*.parquet"))
		if len(b) != runs || len(a) >= compact.CompactFiles {
			t.Fatalf("%s: %d files compacted, %d not", table, len(a), len(b))
		}
		db := loadtest.Views(t, compacted)
		q := func(d string) string {
			return fmt.Sprintf("SELECT * FROM read_parquet('%s/*.parquet')", d)
		}
		for _, pair := range [][2]string{{dirA, dirB}, {dirB, dirA}} {
			if n := loadtest.One(t, db, fmt.Sprintf("SELECT count(*) FROM (%s EXCEPT ALL %s)", q(pair[0]), q(pair[1]))); n != "0" {
				t.Fatalf("%s: %s rows of %s are not in %s", table, n, pair[0], pair[1])
			}
		}
		want := map[string]int{layout.TableMessages: 2 * runs, layout.TableRaw: runs, layout.TableOther: runs}[table]
		if n := loadtest.One(t, db, fmt.Sprintf("SELECT count(*) FROM (%s)", q(dirA))); n != fmt.Sprint(want) {
			t.Fatalf("%s: %s rows", table, n)
		}
	}
	// The views answer the same.
	for _, q := range []string{
		"SELECT count(*) FROM messages",
		"SELECT string_agg(text, ',' ORDER BY id) FROM messages",
		"SELECT count(*) FROM raw",
	} {
		if a, b := loadtest.One(t, loadtest.Views(t, compacted), q), loadtest.One(t, loadtest.Views(t, plain), q); a != b {
			t.Fatalf("%s: %s compacted, %s not", q, a, b)
		}
	}
	// Nothing staged is left behind.
	if _, err := os.Stat(filepath.Join(compacted, "_state", layout.CompactDir)); !os.IsNotExist(err) {
		t.Fatalf("staging left: %v", err)
	}
}

// What a compaction that died midway staged is removed by the next load,
// and the partitions are as they were.
func TestDeadCompactionIsRemoved(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadtest.LoadAt(t, lake, day, loadtest.Msg("m1", "s1", "one", day))
	stage := filepath.Join(lake, "_state", layout.CompactDir, "messages.test.2026-05-01")
	if err := os.MkdirAll(stage, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(stage, "part-x.parquet"), []byte("half"), 0o600)
	loadtest.LoadAt(t, lake, day, loadtest.Msg("m2", "s1", "two", day))
	if _, err := os.Stat(filepath.Join(lake, "_state", layout.CompactDir)); !os.IsNotExist(err) {
		t.Fatalf("staging left: %v", err)
	}
	if n := loadtest.One(t, loadtest.Views(t, lake), "SELECT count(*) FROM messages"); n != "2" {
		t.Fatalf("%s messages", n)
	}
}

// A file of another schema (an older build's) stays as it is, and the
// files of this build's schema around it are merged; a partition holding
// anything but files is left alone.
func TestCompactionKeepsOtherSchemas(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	dir := layout.Dir(lake, layout.TableMessages, "test", "2026-05-01")
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
	var st load.Stats
	for i := range compact.CompactFiles {
		at := day.Add(time.Duration(i) * time.Hour)
		st = loadtest.LoadAt(t, lake, at, loadtest.Msg(fmt.Sprintf("m%d", i), "s1", "x", day))
	}
	if st.Compacted != 1 || st.Merged != int64(compact.CompactFiles) {
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
	for i := range compact.CompactFiles {
		at := day.Add(time.Duration(100+i) * time.Hour)
		st = loadtest.LoadAt(t, lake, at, loadtest.Msg(fmt.Sprintf("n%d", i), "s1", "x", day))
		if st.Compacted != 0 {
			t.Fatalf("a partition with a directory in it was compacted: %+v", st)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "keep")); err != nil {
		t.Fatal(err)
	}
}

// Chunks partitions are compacted with their vector sidecars and their
// postings: the merged lake holds the same chunk rows and postings, every
// chunk keeps its vector, time, length and model, and each postings file
// still pairs with the chunks file of its name.
func TestCompactionOfChunks(t *testing.T) {
	compacted, plain := t.TempDir(), t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	runs := compact.CompactFiles
	var last load.Stats
	for i := range runs {
		at := day.Add(time.Duration(i) * time.Hour)
		recs := []*schema.Record{
			indextest.Chunk(fmt.Sprintf("c%d", i), fmt.Sprintf("rotate the logs %d times, then flush row group %d", i, i*7), "m", 4, at),
			indextest.Chunk(fmt.Sprintf("d%d", i), fmt.Sprintf("parquet writer number %d", i), "m", 4, at.Add(time.Minute)),
		}
		if i == 3 {
			recs[1].Chunk.Embedding, recs[1].Chunk.Model, recs[1].Chunk.Dim = nil, "", 0 // a chunk without a vector
		}
		for _, r := range recs {
			r.IngestedAt = at
		}
		last = loadtest.LoadAt(t, compacted, at, recs...)
		if st := loadtest.LoadWith(t, load.Options{Lake: plain, Now: func() time.Time { return at }, NoCompact: true}, recs...); st.Compacted != 0 {
			t.Fatalf("compacted with NoCompact: %+v", st)
		}
	}
	if last.Compacted == 0 || last.CompactErr != nil {
		t.Fatalf("the last run compacted nothing: %+v", last)
	}
	db := loadtest.Views(t, compacted)
	for _, table := range []string{layout.TableChunks, layout.TablePostings} {
		a, b := layout.Dir(compacted, table, "test", "2026-05-01"), layout.Dir(plain, table, "test", "2026-05-01")
		files, _ := filepath.Glob(filepath.Join(a, "*.parquet"))
		if len(files) != 1 {
			t.Fatalf("%s: %d files after compaction", table, len(files))
		}
		q := func(d string) string { return fmt.Sprintf("SELECT * FROM read_parquet('%s/*.parquet')", d) }
		for _, pair := range [][2]string{{a, b}, {b, a}} {
			if n := loadtest.One(t, db, fmt.Sprintf("SELECT count(*) FROM (%s EXCEPT ALL %s)", q(pair[0]), q(pair[1]))); n != "0" {
				t.Fatalf("%s: %s rows of %s are not in %s", table, n, pair[0], pair[1])
			}
		}
	}
	// The postings file is named as the chunks file it indexes.
	c, _ := filepath.Glob(filepath.Join(layout.Dir(compacted, layout.TableChunks, "test", "2026-05-01"), "*.parquet"))
	p, _ := filepath.Glob(filepath.Join(layout.Dir(compacted, layout.TablePostings, "test", "2026-05-01"), "*.parquet"))
	if filepath.Base(c[0]) != filepath.Base(p[0]) {
		t.Fatalf("chunks %s, postings %s", c[0], p[0])
	}
	vectors := func(lake string) map[int64]string {
		out := map[int64]string{}
		files, _ := filepath.Glob(filepath.Join(layout.Dir(lake, layout.TableChunks, "test", "2026-05-01"), "*.parquet"))
		for _, f := range files {
			v, err := searchindex.ReadVectors(f, true)
			if err != nil {
				t.Fatal(err)
			}
			for i := range v.Rows {
				model := "-"
				if v.Model[i] != searchindex.NoModel {
					model = v.Models[v.Model[i]]
				}
				out[v.Keys[i]] = fmt.Sprint(v.TS[i], v.DL[i], model, v.ScaleAt(i), v.Codes[i*v.Dim:(i+1)*v.Dim])
			}
		}
		return out
	}
	if a, b := vectors(compacted), vectors(plain); fmt.Sprint(a) != fmt.Sprint(b) || len(a) != 2*runs {
		t.Fatalf("vectors after compaction:\n%v\nwithout:\n%v", a, b)
	}
	// The merged sidecar holds the merged postings.
	terms := fileTerms(t, p[0])
	if side, table := postingsOf(t, c[0], terms); len(side) == 0 || fmt.Sprint(side) != fmt.Sprint(table) {
		t.Fatalf("merged sidecar's postings:\n%v\npostings file:\n%v", side, table)
	}
}

// A run that died between the postings and the chunks exchanges: the next
// load puts the staged chunks in place, so both name the merged file.
func TestDeadChunksCompactionIsFinished(t *testing.T) {
	lake := t.TempDir()
	base := filepath.Join(lake, "_state", layout.CompactDir)
	dirC, dirP := filepath.Join(lake, "c"), filepath.Join(lake, "p")
	stC, stP := filepath.Join(base, "sc"), filepath.Join(base, "sp")
	for _, d := range []string{dirC, dirP, stC, stP} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// Postings exchanged (the old postings are in its stage now), chunks not.
	os.WriteFile(filepath.Join(dirP, "merged.parquet"), nil, 0o600)
	os.WriteFile(filepath.Join(stP, "old.parquet"), nil, 0o600)
	os.WriteFile(filepath.Join(dirC, "old.parquet"), nil, 0o600)
	os.WriteFile(filepath.Join(stC, "merged.parquet"), nil, 0o600)
	rel := func(p string) string { r, _ := filepath.Rel(lake, p); return r }
	j := fmt.Sprintf(`{"Chunks":%q,"Postings":%q,"StageC":%q,"StageP":%q,"Merged":"merged.parquet"}`, rel(dirC), rel(dirP), rel(stC), rel(stP))
	os.WriteFile(filepath.Join(base, compact.JournalFile), []byte(j), 0o600)
	if err := compact.Remove(lake); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dirC, dirP} {
		if _, err := os.Stat(filepath.Join(d, "merged.parquet")); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if _, err := os.Stat(filepath.Join(d, "old.parquet")); err == nil {
			t.Fatalf("%s still holds the old file", d)
		}
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Fatalf("staging left: %v", err)
	}
}

// --compact-all merges the partitions an earlier build (or --no-compact)
// left many small files in, with no input; summaries, which pos-query
// writes without the lake's lock, stay as written.
func TestCompactAll(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for i := range compact.CompactFiles {
		at := day.Add(time.Duration(i) * time.Hour)
		loadtest.LoadWith(t, load.Options{Lake: lake, Now: func() time.Time { return at }, NoCompact: true},
			loadtest.Msg(fmt.Sprintf("m%d", i), "s1", "x", day), indextest.Chunk(fmt.Sprintf("c%d", i), fmt.Sprintf("text %d", i), "m", 4, day))
		err := load.WriteSummaries(context.Background(), lake, []layout.SummaryRow{{Platform: "test", SessionID: "s1", Strategy: "extractive",
			Text: fmt.Sprintf("summary %d", i), LastMessageID: fmt.Sprintf("m%d", i), Date: day}}, at)
		if err != nil {
			t.Fatal(err)
		}
	}
	count := func(table string) int {
		files, _ := filepath.Glob(filepath.Join(layout.Dir(lake, table, "test", "2026-05-01"), "*.parquet"))
		return len(files)
	}
	before := loadtest.One(t, loadtest.Views(t, lake), "SELECT count(*) || '/' || (SELECT count(*) FROM chunks) || '/' || (SELECT count(*) FROM summaries) FROM messages")
	st := loadtest.LoadWith(t, load.Options{Lake: lake, CompactAll: true})
	if st.CompactErr != nil || st.Compacted != 2 {
		t.Fatalf("%+v", st)
	}
	for table, want := range map[string]int{layout.TableMessages: 1, layout.TableChunks: 1, layout.TablePostings: 1, layout.TableSummaries: compact.CompactFiles} {
		if n := count(table); n != want {
			t.Errorf("%s: %d files, want %d", table, n, want)
		}
	}
	if after := loadtest.One(t, loadtest.Views(t, lake), "SELECT count(*) || '/' || (SELECT count(*) FROM chunks) || '/' || (SELECT count(*) FROM summaries) FROM messages"); after != before {
		t.Fatalf("rows %s after, %s before", after, before)
	}
}

func postingsOf(t *testing.T, chunksFile string, terms []string) (sidecar, table []string) {
	t.Helper()
	return indextest.PostingsOf(t, chunksFile, layout.TablePostings, terms)
}

var fileTerms = indextest.FileTerms
