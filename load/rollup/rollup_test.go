package rollup_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/schema"
)

func assistant(id, session, model string, ts time.Time, in, cacheRead int64) *schema.Record {
	r := loadtest.Msg(id, session, "answer", ts)
	r.Role, r.Model = schema.RoleAssistant, model
	r.Usage = &schema.Usage{Input: in, Output: 10, CacheRead: cacheRead}
	return r
}

// pos-load keeps the usage rollup: the sums of the assistant messages per
// partition, session, model, hour and long-context rank, recomputed only
// for the partitions a load changed; a load that writes nothing leaves it.
func TestRollupFollowsLoads(t *testing.T) {
	lake := t.TempDir()
	d1 := time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)
	d2 := time.Date(2026, 3, 2, 23, 59, 0, 0, time.UTC)
	loadtest.Load(t, lake,
		assistant("a1", "s1", "m", d1, 100, 0),
		assistant("a2", "s1", "m", d1.Add(10*time.Minute), 50, 140_000), // above 100k and 128k, not 150k
		assistant("a3", "s2", "<synthetic>", d1, 7, 0),
		loadtest.Msg("u1", "s1", "question", d1),
		assistant("b1", "s3", "m", d2, 1, 0))
	st, err := rollup.ReadRollup(lake)
	if err != nil || st == nil {
		t.Fatalf("no rollup after a load: %v", err)
	}
	if len(st.Stale)+len(st.Gone) != 0 || len(st.Manifest.Partitions) != 2 {
		t.Fatalf("stale %v, gone %v, partitions %v", st.Stale, st.Gone, st.Manifest.Partitions)
	}
	db := loadtest.Views(t, lake)
	sum := func() string {
		return loadtest.One(t, db, `SELECT string_agg(concat_ws(' ', date, session_id, model, strftime(hour, '%H'), ctx_rank, messages, input_tokens, cache_read_tokens), '; ' ORDER BY date, session_id, ctx_rank)
			FROM read_parquet(?)`, st.Path)
	}
	want := "2026-03-01 s1 m 10 0 1 100 0; 2026-03-01 s1 m 10 2 1 50 140000; 2026-03-02 s3 m 23 0 1 1 0"
	if got := sum(); got != want {
		t.Fatalf("rollup rows\n got %s\nwant %s", got, want)
	}

	// Nothing new: the same file.
	loadtest.Load(t, lake, assistant("b1", "s3", "m", d2, 1, 0))
	if st2, _ := rollup.ReadRollup(lake); st2 == nil || st2.Path != st.Path {
		t.Fatalf("a load that wrote nothing rewrote the rollup: %v", st2)
	}

	// A message more on the second day: its partition is recomputed, the
	// first day's rows are kept.
	loadtest.Load(t, lake, assistant("b2", "s3", "m", d2.Add(30*time.Second), 2, 0))
	if st, err = rollup.ReadRollup(lake); err != nil || st == nil || len(st.Stale) != 0 {
		t.Fatalf("after a second load: %+v, %v", st, err)
	}
	want = "2026-03-01 s1 m 10 0 1 100 0; 2026-03-01 s1 m 10 2 1 50 140000; 2026-03-02 s3 m 23 0 2 3 0"
	if got := sum(); got != want {
		t.Fatalf("rollup rows after a second load\n got %s\nwant %s", got, want)
	}
	if fi, err := os.Stat(st.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("rollup file mode: %v, %v", fi, err)
	}

	// Files an older pos-load added, unknown to the rollup, make their
	// partition stale; a partition removed from the lake is gone.
	dir := layout.Dir(lake, layout.TableMessages, "test", "2026-03-01")
	if err := os.WriteFile(filepath.Join(dir, "part-older-00001.parquet"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(layout.Dir(lake, layout.TableMessages, "test", "2026-03-02")); err != nil {
		t.Fatal(err)
	}
	if st, err = rollup.ReadRollup(lake); err != nil || len(st.Stale) != 1 || st.Stale[0] != "test/2026-03-01" || len(st.Gone) != 1 || st.Gone[0] != "test/2026-03-02" {
		t.Fatalf("stale %v, gone %v, %v", st.Stale, st.Gone, err)
	}
}

func rollupText(t *testing.T, db *sql.DB, from string) string {
	t.Helper()
	return loadtest.One(t, db, fmt.Sprintf(rollup.RollupTextSQL, from))
}

// RollupRowsMatchSQL fails unless the rollup file pos-load wrote in Go has
// the rows rollup.RollupSelect computes from the lake's messages view.
func RollupRowsMatchSQL(t *testing.T, lake string) {
	t.Helper()
	st, err := rollup.ReadRollup(lake)
	if err != nil || st == nil || len(st.Stale)+len(st.Gone) != 0 {
		t.Fatalf("no current rollup: %+v, %v", st, err)
	}
	db := loadtest.Views(t, lake)
	goRows := rollupText(t, db, "read_parquet("+layout.SQLString(st.Path)+")")
	sqlRows := rollupText(t, db, "("+rollup.RollupSelect(rollup.RollupSource{From: "messages", Thresholds: st.Manifest.Thresholds})+")")
	if goRows != sqlRows {
		t.Fatalf("rollup rows differ\nwritten:\n%s\nby SQL:\n%s", goRows, sqlRows)
	}
	if goRows == "" {
		t.Fatal("an empty rollup")
	}
}

// A message loaded again with other content is a new version: the rollup
// counts the latest, as the messages view does.
func TestRollupVersions(t *testing.T) {
	lake := t.TempDir()
	d := time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)
	loadtest.Load(t, lake, assistant("a1", "s1", "m", d, 100, 0), assistant("a2", "s1", "m", d, 5, 0))
	RollupRowsMatchSQL(t, lake)
	loadtest.Load(t, lake, assistant("a1", "s1", "m", d, 300, 150_000))
	if !layout.Versioned(lake)[layout.TableMessages] {
		t.Fatal("a second version did not make the messages versioned")
	}
	RollupRowsMatchSQL(t, lake)
	db := loadtest.Views(t, lake)
	st, _ := rollup.ReadRollup(lake)
	if got := loadtest.One(t, db, `SELECT sum(messages) || ' ' || sum(input_tokens) FROM read_parquet(?)`, st.Path); got != "2 305" {
		t.Fatalf("messages and input tokens %s, want the latest version's: 2 305", got)
	}
}

// Loads that share a rollup.Cache and a Listing, as a resident pos-sync's
// do, keep the rollup what loads that list and read everything keep,
// whatever another process loaded in between: a partition directory that
// changed is listed again, a rollup file another load wrote is read.
func TestRollupCache(t *testing.T) {
	lake := t.TempDir()
	ls := layout.NewListing()
	cache := rollup.NewCache()
	cached := load.Options{Lake: lake, Listing: ls, Rollup: cache, NoCompact: true}
	other := load.Options{Lake: lake, NoCompact: true}
	d1 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	d2 := d1.AddDate(0, 0, 1)
	// settle makes every directory of the lake look unchanged for an hour,
	// so the Listing keeps what it reads of them.
	settle := func() {
		old := time.Now().Add(-time.Hour)
		filepath.WalkDir(lake, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chtimes(p, old, old)
			}
			return err
		})
	}
	check := func(step string) {
		t.Helper()
		RollupRowsMatchSQL(t, lake)
		st, _ := rollup.ReadRollup(lake)
		if got := rollup.CacheFile(cache); got != st.Path {
			t.Fatalf("%s: the cache keeps the rows of %q, the rollup is %q", step, got, st.Path)
		}
	}
	loadtest.LoadWith(t, cached, assistant("a1", "s1", "m", d1, 100, 0), assistant("b1", "s2", "m", d2, 5, 0))
	check("first load")
	settle()
	loadtest.LoadWith(t, cached, assistant("b2", "s2", "m", d2.Add(time.Minute), 7, 0))
	check("a second day's message")
	settle()
	// Another process adds to the first day and writes its own rollup.
	loadtest.LoadWith(t, other, assistant("a2", "s1", "m", d1.Add(time.Minute), 11, 0))
	loadtest.LoadWith(t, cached, assistant("b3", "s2", "m", d2.Add(2*time.Minute), 13, 0))
	check("after another process's load")
	db := loadtest.Views(t, lake)
	st, _ := rollup.ReadRollup(lake)
	if got := loadtest.One(t, db, `SELECT CAST(sum(input_tokens) AS VARCHAR) FROM read_parquet(?)`, st.Path); got != "136" {
		t.Fatalf("input tokens in the rollup: %s, want 136", got)
	}
}
