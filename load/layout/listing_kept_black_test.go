package layout_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/internal/indextest"
	"github.com/pos-lake/pos/load/layout"
)

// A Listing that lists a whole table keeps it in the lake: the next
// process's Listing answers from it, for any platform and window, while no
// load completes; a load, a damaged file and Forget make it list again.
func TestKeptListing(t *testing.T) {
	lake, day := twoDayLake(t)
	all := func(l *layout.Listing) []string {
		t.Helper()
		got, err := l.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := all(nil)
	if got := all(layout.NewListing()); !slices.Equal(got, want) || len(got) != 2 {
		t.Fatalf("first listing %v, want %v", got, want)
	}
	kept := filepath.Join(lake, layout.RollupDir, "listing-"+layout.TableChunks+".txt")
	b, err := os.ReadFile(kept)
	if err != nil {
		t.Fatalf("no kept listing: %v", err)
	}
	// A file put in a partition without a load is not seen by a new
	// process: it answered from the kept listing.
	stray := filepath.Join(filepath.Dir(want[0]), "part-stray.parquet")
	if err := os.WriteFile(stray, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l := layout.NewListing()
	if got := all(l); !slices.Equal(got, want) {
		t.Fatalf("from the kept listing %v, want %v", got, want)
	}
	// Its windows and platforms answer as a listing of the directories.
	for _, w := range []struct {
		platform     string
		since, until time.Time
	}{{"test", time.Time{}, time.Time{}}, {"other", time.Time{}, time.Time{}}, {"", day.AddDate(0, 0, 1), time.Time{}},
		{"", time.Time{}, day.AddDate(0, 0, 1)}, {"test", day, day}} {
		os.Remove(stray)
		want, _ := layout.PartitionFiles(lake, layout.TableChunks, w.platform, w.since, w.until)
		os.WriteFile(stray, nil, 0o600)
		got, err := layout.NewListing().PartitionFiles(lake, layout.TableChunks, w.platform, w.since, w.until)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%+v: %v %v, want %v", w, got, err, want)
		}
	}
	os.Remove(stray)
	// A damaged kept listing is listed again, and written anew.
	bad := bytes.Replace(b, []byte("date="), []byte("dame="), 1)
	if err := os.WriteFile(kept, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(stray, nil, 0o600)
	want = all(nil)
	if got := all(layout.NewListing()); !slices.Equal(got, want) || len(got) != 3 {
		t.Fatalf("over a damaged kept listing %v, want %v", got, want)
	}
	if b2, _ := os.ReadFile(kept); bytes.Equal(b2, bad) {
		t.Fatal("the damaged kept listing stays")
	}
	// A file gone without a load: Forget lists again, in this process
	// and the next.
	os.Remove(stray)
	l = layout.NewListing()
	if got := all(l); len(got) != 3 {
		t.Fatalf("kept %v", got)
	}
	l.Forget()
	if got := all(l); len(got) != 2 || slices.Contains(got, stray) {
		t.Fatalf("after Forget %v", got)
	}
	if got := all(layout.NewListing()); len(got) != 2 {
		t.Fatalf("the next process after Forget %v", got)
	}
	// A load lists again.
	os.WriteFile(stray, nil, 0o600)
	loadtest.Load(t, lake, indextest.Chunk("c3", "flush groups", "m", 4, day.AddDate(0, 0, 5)))
	os.Remove(stray)
	want = all(nil)
	if got := all(layout.NewListing()); !slices.Equal(got, want) || len(got) != 3 {
		t.Fatalf("after a load %v, want %v", got, want)
	}
}

// A window's listing leaves no kept listing (it did not list the table);
// a lake whose rollup cannot be written is answered all the same.
func TestKeptListingWindowAndReadOnly(t *testing.T) {
	lake, day := twoDayLake(t)
	if got, err := layout.NewListing().PartitionFiles(lake, layout.TableChunks, "", day.AddDate(0, 0, 1), time.Time{}); err != nil || len(got) != 1 {
		t.Fatalf("window: %v %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(lake, layout.RollupDir, "listing-"+layout.TableChunks+".txt")); err == nil {
		t.Fatal("a window's listing was kept")
	}
	// A file where the rollup directory would be.
	os.RemoveAll(filepath.Join(lake, layout.RollupDir))
	if err := os.WriteFile(filepath.Join(lake, layout.RollupDir), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l := layout.NewListing()
	for range 2 {
		if got, err := l.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{}); err != nil || len(got) != 2 {
			t.Fatalf("unwritable: %v %v", got, err)
		}
	}
}
