package load_test

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
)

func TestWriteSummaries(t *testing.T) {
	ctx := context.Background()
	lake := filepath.Join(t.TempDir(), "lake")
	loadtest.Load(t, lake, loadtest.Msg("m1", "s1", "hello", time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)))

	// Before any summary: the view exists and is empty.
	db := loadtest.Views(t, lake)
	if n := loadtest.One(t, db, `SELECT count(*) FROM summaries`); n != "0" {
		t.Fatalf("summaries in a fresh lake: %s", n)
	}

	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	row := layout.SummaryRow{Platform: "test", SessionID: "s1", LastMessageID: "m1", Strategy: "extractive",
		Params: "v1", Text: "first", Notes: []string{"a note"}, Date: day}
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	if err := load.WriteSummaries(ctx, lake, []layout.SummaryRow{row}, t0); err != nil {
		t.Fatal(err)
	}
	// The same key again, later, with another text: the view keeps the newest.
	row.Text = "second"
	if err := load.WriteSummaries(ctx, lake, []layout.SummaryRow{row}, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// Another state of the session: a row of its own.
	row.LastMessageID, row.Text = "m2", "grown"
	if err := load.WriteSummaries(ctx, lake, []layout.SummaryRow{row}, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}

	stmt, err := catalog.SummariesViewSQL(lake)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
	if n := loadtest.One(t, db, `SELECT count(*) FROM summaries`); n != "2" {
		t.Fatalf("rows: %s, want 2", n)
	}
	id := load.SummaryID("test", "s1", "m1", "extractive", "", "v1")
	if got := loadtest.One(t, db, `SELECT text FROM summaries WHERE id = ?`, id); got != "second" {
		t.Fatalf("newest text: %q", got)
	}
	if got := loadtest.One(t, db, `SELECT strftime(date, '%Y-%m-%d') || ' ' || platform || ' ' || notes[1] FROM summaries WHERE id = ?`, id); got != "2026-03-01 test a note" {
		t.Fatalf("partition and notes: %q", got)
	}

	// Private files, no temporary file left behind.
	filepath.WalkDir(layout.TableDir(lake, layout.TableSummaries), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := d.Info()
		switch {
		case strings.HasSuffix(p, ".tmp"):
			t.Errorf("left behind: %s", p)
		case d.IsDir() && fi.Mode().Perm() != 0o700:
			t.Errorf("%s: mode %v", p, fi.Mode().Perm())
		case !d.IsDir() && fi.Mode().Perm() != 0o600:
			t.Errorf("%s: mode %v", p, fi.Mode().Perm())
		}
		return nil
	})

	// A fresh reader sees them through the ordinary views, and so does
	// pos.duckdb, refreshed by the first write.
	if n := loadtest.One(t, loadtest.Views(t, lake), `SELECT count(*) FROM summaries`); n != "2" {
		t.Fatalf("rows in fresh views: %s", n)
	}
	cat, err := sql.Open("duckdb", filepath.Join(lake, catalog.CatalogFile)+"?access_mode=read_only&"+catalogDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if n := loadtest.One(t, cat, `SELECT count(*) FROM summaries`); n != "2" {
		t.Fatalf("rows in pos.duckdb: %s", n)
	}
}

func TestWriteSummariesNeedsKey(t *testing.T) {
	err := load.WriteSummaries(context.Background(), t.TempDir(), []layout.SummaryRow{{Text: "x"}}, time.Now())
	if err == nil {
		t.Fatal("a row without platform and session was written")
	}
	if _, err := os.Stat(filepath.Join(t.TempDir(), "indexed")); err == nil {
		t.Fatal("directory created")
	}
}

// catalogDSN are the options pos.duckdb is opened with (package catalog's
// OpenDB): extensions neither installed nor loaded on demand.
const catalogDSN = "autoinstall_known_extensions=false&autoload_known_extensions=false"
