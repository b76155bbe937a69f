package durable

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
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
	// A partition directory that was there before the run is synced
	// alone: its entry in its parent is already durable.
	got = slices.Sorted(maps.Keys(withParents("/l/lake", map[string]bool{
		"/l/lake/raw/platform=x/date=2026-01-02":      false,
		"/l/lake/indexed/chunks/platform=x/date=2026": true,
	})))
	want = []string{
		"/l/lake",
		"/l/lake/indexed",
		"/l/lake/indexed/chunks",
		"/l/lake/indexed/chunks/platform=x",
		"/l/lake/indexed/chunks/platform=x/date=2026",
		"/l/lake/raw/platform=x/date=2026-01-02",
	}
	if !slices.Equal(got, want) {
		t.Errorf("withParents of a directory that existed:\n got %q\nwant %q", got, want)
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

// MkdirAll says whether it created a directory, so that only new ones
// have their parents synced.
func TestMkdirAllMade(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "a", "b")
	if made, err := MkdirAll(d); err != nil || !made {
		t.Fatalf("MkdirAll of a new directory: made %v, %v; want true", made, err)
	}
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		t.Fatalf("MkdirAll did not create %s: %v", d, err)
	}
	if made, err := MkdirAll(d); err != nil || made {
		t.Errorf("MkdirAll of an existing directory: made %v, %v; want false", made, err)
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o600)
	if _, err := MkdirAll(f); err == nil {
		t.Error("MkdirAll over a file: no error")
	}
	// Many at once, as a load's lanes sync them: each is synced, and a
	// missing one is still an error.
	var paths []string
	for i := range 40 {
		p := filepath.Join(dir, fmt.Sprintf("f%d", i))
		os.WriteFile(p, []byte("x"), 0o600)
		paths = append(paths, p)
	}
	if err := SyncFiles(dir, paths); err != nil {
		t.Errorf("SyncFiles of %d files: %v", len(paths), err)
	}
	if err := SyncFiles(dir, append(paths, filepath.Join(dir, "gone"))); err == nil {
		t.Error("SyncFiles with a missing file among many: no error")
	}
}
