package catalog_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/catalog"
)

// pos.duckdb is rewritten only when its views' statements change: new
// files are read through the globs as they are.
func TestCatalogRewrittenOnlyWhenViewsChange(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadtest.Load(t, lake, loadtest.Msg("m1", "s", "first", day))
	stamp := func() string {
		b, err := os.ReadFile(filepath.Join(lake, "_state", catalog.CatalogStamp))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	count := func() string {
		db, err := sql.Open("duckdb", filepath.Join(lake, catalog.CatalogFile)+"?access_mode=read_only&"+catalog.DSNOptions)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		return loadtest.One(t, db, "SELECT CAST(count(*) AS VARCHAR) || ' ' || string_agg(text, '|' ORDER BY id) FROM messages")
	}
	// Make a rewrite visible: back-date the file.
	cat := filepath.Join(lake, catalog.CatalogFile)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	touch := func() {
		if err := os.Chtimes(cat, old, old); err != nil {
			t.Fatal(err)
		}
	}
	rewritten := func() bool {
		fi, err := os.Stat(cat)
		if err != nil {
			t.Fatal(err)
		}
		return !fi.ModTime().Equal(old)
	}
	s1 := stamp()
	touch()
	// A message on another day: a new partition, the same statements.
	loadtest.Load(t, lake, loadtest.Msg("m2", "s", "second", day.AddDate(0, 0, 1)))
	if rewritten() || stamp() != s1 {
		t.Fatal("pos.duckdb rewritten though its views did not change")
	}
	if got := count(); got != "2 first|second" {
		t.Fatalf("pos.duckdb shows %q", got)
	}
	// A new version of m1: the messages view must pick the latest.
	loadtest.Load(t, lake, loadtest.Msg("m1", "s", "first, edited", day))
	if !rewritten() || stamp() == s1 {
		t.Fatal("pos.duckdb not rewritten for a versioned table")
	}
	if got := count(); got != "2 first, edited|second" {
		t.Fatalf("pos.duckdb shows %q", got)
	}
}
