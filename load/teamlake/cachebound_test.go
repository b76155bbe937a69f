package teamlake_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pos-lake/pos/load/teamlake"
)

// The caches beside a fetched one are removed least recently used first,
// until all fit the bound; the fetched cache and directories that are not
// caches are left.
func TestBoundCaches(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	mk := func(name string, size int, used time.Duration, cache bool) string {
		dir := filepath.Join(root, name)
		data := filepath.Join(dir, "indexed", "messages", "platform=x", "date=2026-11-03")
		if err := os.MkdirAll(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "f.parquet"), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		if cache {
			st := filepath.Join(dir, "_state", "teamlake")
			if err := os.MkdirAll(st, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(st, now.Add(-used), now.Add(-used)); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	own := mk("own", 400, 0, true)
	old := mk("old", 300, 3*time.Hour, true)
	recent := mk("recent", 300, time.Hour, true)
	other := mk("not-a-cache", 5000, 5*time.Hour, false)

	removed, size, err := teamlake.BoundCaches(own, 800)
	if err != nil {
		t.Fatal(err)
	}
	if size != 400 || len(removed) != 1 || removed[0].Dir != old || removed[0].Size != 300 {
		t.Fatalf("removed %+v, own %d; want the older cache of 300 bytes removed, own 400", removed, size)
	}
	for _, d := range []string{own, recent, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the least recently used cache is still there: %v", err)
	}
	// A bound the fetched cache alone exceeds: every other cache goes, the
	// fetched one stays.
	removed, size, err = teamlake.BoundCaches(own, 100)
	if err != nil || len(removed) != 1 || removed[0].Dir != recent || size != 400 {
		t.Fatalf("removed %+v, own %d, %v; want the other cache removed", removed, size, err)
	}
	if _, err := os.Stat(own); err != nil {
		t.Errorf("the fetched cache: %v", err)
	}
}
