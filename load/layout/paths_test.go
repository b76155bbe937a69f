package layout_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/layout"
)

// A writer killed before its rename leaves a temporary file: the next run
// on the lake removes it, wherever pos writes temporary files in the lake,
// and never the file of a writer that is still running.
func TestTempsOfKilledWritersAreRemoved(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadtest.Load(t, lake, loadtest.Msg("m1", "s", "x", day))
	dead := strconv.Itoa(loadtest.DeadPid(t))
	live := strconv.Itoa(os.Getpid())
	sdir := filepath.Join(lake, "indexed", layout.TableSummaries, "platform=test", "date=2026-05-01")
	os.MkdirAll(sdir, 0o700)
	schemaDirs, _ := filepath.Glob(filepath.Join(lake, "_schema", "*", layout.TableMessages, "*", "*"))
	if len(schemaDirs) != 1 {
		t.Fatalf("schema dirs %v", schemaDirs)
	}
	stale := []string{
		filepath.Join(lake, "_state", ".catalog.hash.pid"+dead+"-123.tmp"),
		filepath.Join(lake, "_state", ".watermarks.json.pid"+dead+"-9.tmp"),
		filepath.Join(lake, layout.RollupDir, ".usage-1.parquet.pid"+dead+"-0.tmp"),
		filepath.Join(schemaDirs[0], ".messages.pid"+dead+"-77.tmp"),
		filepath.Join(sdir, ".part-x-s0001.parquet.pid"+dead+"-0.tmp"),
		filepath.Join(lake, "_state", ".catalog.hash.4242.tmp"), // an older build's, an hour old
	}
	keep := []string{
		filepath.Join(lake, "_state", ".catalog.hash.pid"+live+"-5.tmp"), // a live writer's
		filepath.Join(lake, "_state", ".schemas.json.1.tmp"),             // an older build's, new
		filepath.Join(lake, "_state", "catalog.hash"),
	}
	for _, p := range append(stale, keep[:2]...) {
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stale[len(stale)-1], old, old)
	// A clean lake (the last run ended well): the temporary files go all
	// the same.
	loadtest.Load(t, lake, loadtest.Msg("m2", "s", "y", day))
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("left behind: %s (%v)", p, err)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("removed: %s", p)
		}
	}
	// A reader sweeps too.
	p := filepath.Join(lake, layout.RollupDir, ".sessions-parts-1.parquet.pid"+dead+"-0.tmp")
	os.WriteFile(p, nil, 0o600)
	if err := layout.SweepTemps(lake); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("SweepTemps left %s", p)
	}
	// Every temporary file pos writes in the lake is named so.
	n := 0
	filepath.WalkDir(lake, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".tmp") && !layout.TempRE().MatchString(d.Name()) && d.Name() != ".schemas.json.1.tmp" {
			t.Errorf("a temporary file without its writer's pid: %s", path)
		}
		n++
		return nil
	})
	if pat := layout.TempPattern("x"); !layout.TempRE().MatchString(strings.Replace(pat, "*", "123", 1)) {
		t.Errorf("TempPattern %q does not match the sweep's pattern", pat)
	}
	if !layout.TempRE().MatchString(filepath.Base(layout.TempName("/l/usage-1.parquet"))) {
		t.Errorf("TempName %q does not match the sweep's pattern", layout.TempName("/l/usage-1.parquet"))
	}
}
