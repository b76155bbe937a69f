package layout_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/internal/indextest"
	"github.com/pos-lake/pos/load/layout"
)

// A Listing answers as PartitionFiles does; it sees the files of a load
// that completed since its last answer, and after Forget a file gone
// without a load (one a load under way merged).
func TestListing(t *testing.T) {
	lake, day := twoDayLake(t)
	l := layout.NewListing()
	same := func(platform string, since, until time.Time) []string {
		t.Helper()
		want, err := layout.PartitionFiles(lake, layout.TableChunks, platform, since, until)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // answered, then kept
			got, err := l.PartitionFiles(lake, layout.TableChunks, platform, since, until)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("%q %v %v: %v %v, want %v", platform, since, until, got, err, want)
			}
		}
		return want
	}
	if all := same("", time.Time{}, time.Time{}); len(all) != 2 {
		t.Fatalf("files %v", all)
	}
	if one := same("", day.AddDate(0, 0, 1), time.Time{}); len(one) != 1 {
		t.Fatalf("files since the next day %v", one)
	}
	if none := same("other", time.Time{}, time.Time{}); len(none) != 0 {
		t.Fatalf("files of another platform %v", none)
	}
	// A load into a partition listed before, and into a new one.
	loadtest.Load(t, lake, indextest.Chunk("c3", "flush groups", "m", 4, day.Add(time.Hour)), indextest.Chunk("c4", "zstd pages", "m", 4, day.AddDate(0, 0, 5)))
	all := same("", time.Time{}, time.Time{})
	if len(all) != 4 {
		t.Fatalf("after a second load: %v", all)
	}
	// A file removed while no load completed: kept until Forget.
	if err := os.Remove(all[0]); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{}); len(got) != 4 {
		t.Fatalf("kept: %v", got)
	}
	l.Forget()
	if got, _ := l.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{}); len(got) != 3 || slices.Contains(got, all[0]) {
		t.Fatalf("after Forget: %v", got)
	}
}

// twoDayLake loads two chunks three days apart into a new lake: the
// listing tests' fixture. day is the first chunk's time.
func twoDayLake(t *testing.T) (lake string, day time.Time) {
	t.Helper()
	lake = t.TempDir()
	day = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadtest.Load(t, lake, indextest.Chunk("c1", "parquet writer", "m", 4, day), indextest.Chunk("c2", "rotate logs", "m", 4, day.AddDate(0, 0, 3)))
	return lake, day
}
