package durable

import (
	"maps"
	"slices"
	"testing"
)

// A partition directory a run created is synced with its parents up to the
// lake, so that its own entry is durable; a directory outside the lake is
// synced alone.
func TestSyncDirsWithParents(t *testing.T) {
	got := slices.Sorted(maps.Keys(withParents("/l/lake/", map[string]bool{
		"/l/lake/indexed/messages/platform=x/date=2026-01-02": true,
		"/l/lake/indexed/messages/platform=x/date=2026-01-03": true,
		"/l/lake/raw/platform=x/date=2026-01-02/":             true,
		"/elsewhere/summaries":                                true,
	})))
	want := []string{
		"/elsewhere/summaries",
		"/l/lake",
		"/l/lake/indexed",
		"/l/lake/indexed/messages",
		"/l/lake/indexed/messages/platform=x",
		"/l/lake/indexed/messages/platform=x/date=2026-01-02",
		"/l/lake/indexed/messages/platform=x/date=2026-01-03",
		"/l/lake/raw",
		"/l/lake/raw/platform=x",
		"/l/lake/raw/platform=x/date=2026-01-02",
	}
	if !slices.Equal(got, want) {
		t.Errorf("withParents:\n got %q\nwant %q", got, want)
	}
	if got := withParents("/l/lakehouse", map[string]bool{"/l/lake/a": true}); len(got) != 1 {
		t.Errorf("a directory beside the lake with a common prefix: %v, want itself alone", got)
	}
}

// Synced one by one or with one syncfs, every file and directory must
// exist: a run's list naming a missing one is an error, not a skip.
func TestSyncFilesMissing(t *testing.T) {
	dir := t.TempDir()
	if err := SyncFiles(dir, []string{dir + "/gone.parquet"}); err == nil {
		t.Error("SyncFiles of a missing file: no error")
	}
	if err := SyncDirs(dir, map[string]bool{dir: true}); err != nil {
		t.Errorf("SyncDirs of the lake itself: %v", err)
	}
}
