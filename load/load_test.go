package load_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/schema"
)

func TestEmptyLakeHasEveryView(t *testing.T) {
	lake := t.TempDir()
	db := loadtest.Views(t, lake)
	for _, v := range []string{"raw", "messages", "exchanges", "sessions", "documents", "other"} {
		if n := loadtest.One(t, db, "SELECT count(*) FROM "+v); n != "0" {
			t.Fatalf("%s has %s rows", v, n)
		}
	}
	// The columns are there even without data.
	if got := loadtest.One(t, db, "SELECT count(*) FROM messages WHERE platform = 'x' AND date = DATE '2026-01-01' AND input_tokens > 0"); got != "0" {
		t.Fatal(got)
	}
}

func TestVersionsAndDuplicates(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	st := loadtest.Load(t, lake, loadtest.Msg("m1", "s", "first", day), loadtest.Msg("m2", "s", "second", day.Add(time.Hour)))
	if st.Rows[layout.TableMessages] != 2 || st.Files != 1 {
		t.Fatalf("first load: %+v", st)
	}
	// Same records again: nothing written. m1 changed: a new version.
	st = loadtest.Load(t, lake, loadtest.Msg("m1", "s", "first, edited", day), loadtest.Msg("m2", "s", "second", day.Add(time.Hour)))
	if st.Rows[layout.TableMessages] != 1 || st.Duplicates != 1 || st.Versions != 1 {
		t.Fatalf("second load: %+v", st)
	}
	db := loadtest.Views(t, lake)
	if got := loadtest.One(t, db, "SELECT string_agg(text, '|' ORDER BY id) FROM messages"); got != "first, edited|second" {
		t.Fatalf("views show %q", got)
	}
	// A replay into another session (same id and content) is not stored.
	st = loadtest.Load(t, lake, loadtest.Msg("m2", "other-session", "second", day.Add(time.Hour)))
	if st.Duplicates != 1 || st.Rows[layout.TableMessages] != 0 {
		t.Fatalf("replay: %+v", st)
	}
	files, _ := filepath.Glob(filepath.Join(lake, "indexed", "messages", "platform=test", "date=2026-05-01", "*.parquet"))
	if len(files) != 2 {
		t.Fatalf("files %v", files)
	}
	for _, f := range files {
		if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %v", f, fi.Mode())
		}
	}
}

func TestCheckpointsCommittedOnlyOnClose(t *testing.T) {
	lake := t.TempDir()
	l, err := load.Open(context.Background(), load.Options{Lake: lake, NoCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	cp := schema.New(schema.KindCheckpoint)
	cp.Checkpoint = &schema.Checkpoint{Platform: "test", Path: "/h/a.jsonl", Size: 10, Resume: 5, Seen: 10}
	l.Add(loadtest.Msg("m1", "s", "x", time.Now()))
	l.Add(cp)
	state := filepath.Join(lake, "_state", "watermarks.json")
	if _, err := os.Stat(state); err == nil {
		t.Fatal("watermark written before the data was in place")
	}
	l.Abort()
	if _, err := os.Stat(state); err == nil {
		t.Fatal("an aborted load committed its watermarks")
	}
	tmps, _ := filepath.Glob(filepath.Join(lake, "indexed", "*", "*", "*", "*.tmp"))
	if len(tmps) != 0 {
		t.Fatalf("abort left %v", tmps)
	}
	l, _ = load.Open(context.Background(), load.Options{Lake: lake, NoCatalog: true})
	l.Add(loadtest.Msg("m1", "s", "x", time.Now()))
	l.Add(cp)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(state)
	if err != nil || !strings.Contains(string(b), `"/h/a.jsonl"`) {
		t.Fatalf("watermarks: %s %v", b, err)
	}
}

func TestSecondLoaderWaitsForTheLock(t *testing.T) {
	lake := t.TempDir()
	l, err := load.Open(context.Background(), load.Options{Lake: lake, NoCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Abort()
	_, err = load.Open(context.Background(), load.Options{Lake: lake, NoCatalog: true, LockTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "locked by another pos-load") {
		t.Fatalf("second loader: %v", err)
	}
}

func TestUnknownKindsAreKept(t *testing.T) {
	lake := t.TempDir()
	r := schema.New("hologram")
	r.Platform, r.Extra = "test", []schema.Field{{Key: "beam", Value: []byte(`{"x":1}`)}}
	st := loadtest.Load(t, lake, r)
	if st.Rows[layout.TableOther] != 1 {
		t.Fatalf("%+v", st)
	}
	if got := loadtest.One(t, loadtest.Views(t, lake), "SELECT record->>'$.beam.x' FROM other WHERE kind = 'hologram'"); got != "1" {
		t.Fatalf("record not kept whole: %q", got)
	}
}

func TestViewsUnionSchemasOnlyWhenTheyDiffer(t *testing.T) {
	lake := t.TempDir()
	loadtest.Load(t, lake, loadtest.Msg("m1", "s", "x", time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)))
	stmts, err := catalog.ViewSQL(lake)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(stmts, "\n")
	if strings.Contains(all, "union_by_name = true") {
		t.Fatalf("one schema per table: %s", all)
	}
	// A lake holding files of an older schema too reads them by name, and
	// the views still have every column of this build's schema.
	os.WriteFile(filepath.Join(lake, "_state", "schemas.json"), []byte(`{"messages":["old","`+layout.SchemaFingerprint(layout.TableMessages)+`"]}`), 0o600)
	stmts, _ = catalog.ViewSQL(lake)
	if all := strings.Join(stmts, "\n"); !strings.Contains(all, "union_by_name = true") {
		t.Fatalf("two schemas: %s", all)
	}
	if n := loadtest.One(t, loadtest.Views(t, lake), "SELECT count(*) FROM messages WHERE tool_count = 0"); n != "1" {
		t.Fatalf("rows %s", n)
	}
}

// A lake written before a column existed (here: every messages file lacks
// tool_count, and nothing records the schemas) still answers views that
// name the column.
func TestOldLakeMissingColumn(t *testing.T) {
	lake := t.TempDir()
	dir := layout.Dir(lake, layout.TableMessages, "test", "2026-05-01")
	os.MkdirAll(dir, 0o700)
	type oldRow struct {
		ID          string    `parquet:"id"`
		Platform    string    `parquet:"platform"`
		SessionID   string    `parquet:"session_id"`
		TS          time.Time `parquet:"ts,timestamp(millisecond)"`
		IngestedAt  time.Time `parquet:"ingested_at,timestamp(millisecond)"`
		ContentHash string    `parquet:"content_hash"`
	}
	f, _ := os.Create(filepath.Join(dir, "part-old.parquet"))
	w := parquet.NewGenericWriter[oldRow](f)
	w.Write([]oldRow{{ID: "m1", Platform: "test", SessionID: "s", TS: time.Now(), IngestedAt: time.Now(), ContentHash: "h"}})
	w.Close()
	f.Close()
	db := loadtest.Views(t, lake)
	if n := loadtest.One(t, db, "SELECT count(*) FROM messages WHERE tool_count IS NULL"); n != "1" {
		t.Fatalf("rows %s", n)
	}
	if n := loadtest.One(t, db, "SELECT count(*) FROM sessions"); n != "1" {
		t.Fatalf("sessions %s", n)
	}
}

func TestUnwritableLakeViews(t *testing.T) {
	lake := t.TempDir()
	// _schema cannot be created (a file is in the way, as unwritable as a
	// read-only lake is, even for root): the views still get their columns.
	os.WriteFile(filepath.Join(lake, "_schema"), nil, 0o400)
	db := loadtest.Views(t, lake)
	if n := loadtest.One(t, db, "SELECT count(*) FROM messages WHERE input_tokens > 0"); n != "0" {
		t.Fatal(n)
	}
}

// A run that ends cleanly empties the lock file; one that did not (killed:
// its pid is still there) makes the next run remove the temporary files it
// may have left, and only then is the lake walked for them.
func TestTempsOfADeadRunAreRemoved(t *testing.T) {
	lake := t.TempDir()
	loadtest.Load(t, lake, loadtest.Msg("m1", "s", "x", time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)))
	lockFile := filepath.Join(lake, "_state", "lock")
	if b, err := os.ReadFile(lockFile); err != nil || len(b) != 0 {
		t.Fatalf("lock file after a clean run: %q, %v", b, err)
	}
	dir := layout.Dir(lake, layout.TableMessages, "test", "2026-05-01")
	stray := filepath.Join(dir, "part-dead.parquet.tmp")
	write := func() {
		if err := os.WriteFile(stray, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write()
	loadtest.Load(t, lake, loadtest.Msg("m2", "s", "y", time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)))
	if _, err := os.Stat(stray); err != nil {
		t.Fatalf("a clean lake was walked for temporary files: %v", err)
	}
	// A dead run's pid stays in the lock file.
	if err := os.WriteFile(lockFile, []byte("12345\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	loadtest.Load(t, lake, loadtest.Msg("m3", "s", "z", time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC)))
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatalf("the dead run's temporary file is still there: %v", err)
	}
	// An aborted run leaves its pid too: the next one checks again.
	l, err := load.Open(context.Background(), load.Options{Lake: lake, NoCatalog: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Add(loadtest.Msg("m4", "s", "w", time.Now()))
	l.Abort()
	if b, _ := os.ReadFile(lockFile); len(b) == 0 {
		t.Fatal("an aborted run emptied the lock file")
	}
	write()
	loadtest.Load(t, lake, loadtest.Msg("m5", "s", "v", time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)))
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatalf("temporary file left after an aborted run: %v", err)
	}
}

func TestPartValue(t *testing.T) {
	for in, want := range map[string]string{
		"claude_code": "claude_code", "": "unknown", "a/b c": "a_b_c", "é-1.x": "_-1.x", "../x": ".._x",
	} {
		if got := layout.PartValue(in); got != want {
			t.Errorf("partValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// A session rollup is filed under the day of its latest activity: a sync
// that reads new lines of sessions begun on many days writes their rollups
// to one partition; the sessions view combines a session's rollups from
// every partition.
func TestSessionRollupPartition(t *testing.T) {
	lake := t.TempDir()
	day1 := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	day2 := time.Date(2026, 3, 7, 9, 0, 0, 0, time.UTC)
	rollup := func(first, last time.Time, labels ...string) *schema.Record {
		r := schema.New(schema.KindSession)
		r.ID, r.Platform, r.SessionID, r.TS = schema.ID("test", "session", "s1"), "test", "s1", first
		r.Session = &schema.Session{FirstTS: first, LastTS: last, Labels: labels, Slug: "slug"}
		return r
	}
	// The first sync saw the session's first day; the second, a day two
	// months later (its rollup's ts is the first line it read).
	loadtest.Load(t, lake, loadtest.Msg("m1", "s1", "hello", day1), rollup(day1, day1, "start"))
	loadtest.Load(t, lake, loadtest.Msg("m2", "s1", "again", day2), rollup(day2.AddDate(0, 0, -6), day2, "later"))
	for _, d := range []string{"2026-01-05", "2026-03-07"} {
		if files, _ := filepath.Glob(filepath.Join(layout.Dir(lake, layout.TableSessions, "test", d), "*.parquet")); len(files) != 1 {
			t.Errorf("sessions date=%s: %d files, want 1", d, len(files))
		}
	}
	if files, _ := filepath.Glob(filepath.Join(layout.Dir(lake, layout.TableSessions, "test", "2026-03-01"), "*.parquet")); len(files) != 0 {
		t.Errorf("a rollup filed under its ts's day, not its last activity's")
	}
	db := loadtest.Views(t, lake)
	if got := loadtest.One(t, db, `SELECT count(*) || ' ' || min(first_ts)::DATE || ' ' || max(last_ts)::DATE || ' ' || max(message_count) || ' ' || list_sort(first(labels))::VARCHAR || ' ' || first(date) FROM sessions`); got != "1 2026-01-05 2026-03-07 2 [later, start] 2026-01-05" {
		t.Errorf("sessions view: %s", got)
	}
	// The same input again adds nothing.
	before := loadtest.One(t, db, `SELECT count(*) FROM session_rows`)
	loadtest.Load(t, lake, loadtest.Msg("m2", "s1", "again", day2), rollup(day2.AddDate(0, 0, -6), day2, "later"))
	if after := loadtest.One(t, loadtest.Views(t, lake), `SELECT count(*) FROM session_rows`); after != before {
		t.Errorf("session rows %s, then %s after the same load", before, after)
	}
}

// A partition source has the view's rows of those partitions: the latest
// version of each, every column even over files of an older schema, and
// none (with every column) for partitions without files.
func TestPartitionSource(t *testing.T) {
	lake := t.TempDir()
	d1 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	d2 := d1.AddDate(0, 0, 1)
	loadtest.Load(t, lake, loadtest.Msg("m1", "s", "first", d1), loadtest.Msg("m2", "s", "second", d2), loadtest.Msg("m3", "s", "third", d2.AddDate(0, 0, 1)))
	loadtest.Load(t, lake, loadtest.Msg("m1", "s", "first, edited", d1))
	db := loadtest.Views(t, lake)
	check := func(parts []layout.Partition, want string) {
		t.Helper()
		src, err := catalog.PartitionSource(lake, "messages", parts)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(src, "*.parquet") {
			t.Fatalf("a glob: %s", src)
		}
		// (The filter names a column: every one is there, rows or not.)
		got := loadtest.One(t, db, "SELECT coalesce(string_agg(text, '|' ORDER BY id), '') FROM "+src+" WHERE tool_count >= 0 OR tool_count IS NULL")
		view := loadtest.One(t, db, "SELECT coalesce(string_agg(text, '|' ORDER BY id), '') FROM messages WHERE (platform || '/' || strftime(date, '%Y-%m-%d')) IN (SELECT unnest(?::VARCHAR[]))",
			func() []string {
				var s []string
				for _, p := range parts {
					s = append(s, p.Platform+"/"+p.Date)
				}
				return s
			}())
		if got != want || view != want {
			t.Fatalf("%v: source %q, view %q, want %q", parts, got, view, want)
		}
	}
	check([]layout.Partition{{Platform: "test", Date: "2026-05-01"}, {Platform: "test", Date: "2026-05-02"}}, "first, edited|second")
	check([]layout.Partition{{Platform: "test", Date: "2026-05-03"}}, "third")
	check([]layout.Partition{{Platform: "test", Date: "2026-06-01"}, {Platform: "other", Date: "2026-05-01"}}, "")
	check(nil, "")
	// Files of another schema too: read by name with this build's.
	os.WriteFile(filepath.Join(lake, "_state", "schemas.json"), []byte(`{"messages":["old","`+layout.SchemaFingerprint(layout.TableMessages)+`"]}`), 0o600)
	check([]layout.Partition{{Platform: "test", Date: "2026-05-01"}}, "first, edited")
	if _, err := catalog.PartitionSource(lake, "sessions", nil); err == nil {
		t.Fatal("a source for a view it cannot narrow")
	}
	got, err := layout.Partitions(lake, layout.TableMessages, "")
	if err != nil || len(got) != 3 || got[0].Date != "2026-05-03" || got[2].Date != "2026-05-01" {
		t.Fatalf("partitions %v, %v", got, err)
	}
	if got, _ := layout.Partitions(lake, layout.TableMessages, "other"); len(got) != 0 {
		t.Fatalf("partitions of another platform: %v", got)
	}
}
