package load

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A Listing that lists a whole table keeps it in the lake: the next
// process's Listing answers from it, for any platform and window, while no
// load completes; a load, a damaged file and Forget make it list again.
func TestKeptListing(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadRecs(t, lake, chunk("c1", "parquet writer", "m", 4, day), chunk("c2", "rotate logs", "m", 4, day.AddDate(0, 0, 3)))
	all := func(l *Listing) []string {
		t.Helper()
		got, err := l.PartitionFiles(lake, TableChunks, "", time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := all(nil)
	if got := all(NewListing()); !slices.Equal(got, want) || len(got) != 2 {
		t.Fatalf("first listing %v, want %v", got, want)
	}
	kept := keptListingPath(lake, TableChunks)
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
	l := NewListing()
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
		want, _ := PartitionFiles(lake, TableChunks, w.platform, w.since, w.until)
		os.WriteFile(stray, nil, 0o600)
		got, err := NewListing().PartitionFiles(lake, TableChunks, w.platform, w.since, w.until)
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
	if got := all(NewListing()); !slices.Equal(got, want) || len(got) != 3 {
		t.Fatalf("over a damaged kept listing %v, want %v", got, want)
	}
	if b2, _ := os.ReadFile(kept); bytes.Equal(b2, bad) {
		t.Fatal("the damaged kept listing stays")
	}
	// A file gone without a load: Forget lists again, in this process
	// and the next.
	os.Remove(stray)
	l = NewListing()
	if got := all(l); len(got) != 3 {
		t.Fatalf("kept %v", got)
	}
	l.Forget()
	if got := all(l); len(got) != 2 || slices.Contains(got, stray) {
		t.Fatalf("after Forget %v", got)
	}
	if got := all(NewListing()); len(got) != 2 {
		t.Fatalf("the next process after Forget %v", got)
	}
	// A load lists again.
	os.WriteFile(stray, nil, 0o600)
	loadRecs(t, lake, chunk("c3", "flush groups", "m", 4, day.AddDate(0, 0, 5)))
	os.Remove(stray)
	want = all(nil)
	if got := all(NewListing()); !slices.Equal(got, want) || len(got) != 3 {
		t.Fatalf("after a load %v, want %v", got, want)
	}
}

// A window's listing leaves no kept listing (it did not list the table);
// a lake whose rollup cannot be written is answered all the same.
func TestKeptListingWindowAndReadOnly(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadRecs(t, lake, chunk("c1", "parquet writer", "m", 4, day), chunk("c2", "rotate logs", "m", 4, day.AddDate(0, 0, 3)))
	if got, err := NewListing().PartitionFiles(lake, TableChunks, "", day.AddDate(0, 0, 1), time.Time{}); err != nil || len(got) != 1 {
		t.Fatalf("window: %v %v", got, err)
	}
	if _, err := os.Stat(keptListingPath(lake, TableChunks)); err == nil {
		t.Fatal("a window's listing was kept")
	}
	// A file where the rollup directory would be.
	os.RemoveAll(filepath.Join(lake, RollupDir))
	if err := os.WriteFile(filepath.Join(lake, RollupDir), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l := NewListing()
	for range 2 {
		if got, err := l.PartitionFiles(lake, TableChunks, "", time.Time{}, time.Time{}); err != nil || len(got) != 2 {
			t.Fatalf("unwritable: %v %v", got, err)
		}
	}
}

func TestParseKeptListing(t *testing.T) {
	rel := []string{"platform=a/date=2026-01-02/part-1.parquet", "platform=b/date=2026-01-03/part-2.parquet"}
	b := encodeKeptListing("runs.ndjson:1:2;", TableChunks, rel)
	stamp, table, got, err := parseKeptListing(b)
	if err != nil || stamp != "runs.ndjson:1:2;" || table != TableChunks || !slices.Equal(got, rel) {
		t.Fatalf("%q %q %v %v", stamp, table, got, err)
	}
	if _, _, got, err := parseKeptListing(encodeKeptListing("s", TableChunks, nil)); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
	for name, bad := range map[string][]byte{
		"truncated":   b[:len(b)-5],
		"no sum":      b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+1],
		"flipped":     bytes.Replace(b, []byte("part-1"), []byte("part-3"), 1),
		"version":     encodeWith(b, "pos-listing 1", "pos-listing 2"),
		"escapes":     encodeKeptListing("s", TableChunks, []string{"platform=a/date=../../x.parquet"}),
		"deeper":      encodeKeptListing("s", TableChunks, []string{"platform=a/date=b/c/x.parquet"}),
		"not parquet": encodeKeptListing("s", TableChunks, []string{"platform=a/date=b/x.vec"}),
		"count":       encodeWith(b, "\n2\n", "\n3\n"),
		"no stamp":    encodeKeptListing("", TableChunks, rel),
	} {
		if _, _, _, err := parseKeptListing(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// encodeWith is the kept listing b with old replaced by new, summed again.
func encodeWith(b []byte, old, new string) []byte {
	stamp, table, rel, err := parseKeptListing(b)
	if err != nil {
		panic(err)
	}
	out := bytes.Replace(encodeKeptListing(stamp, table, rel), []byte(old), []byte(new), 1)
	body, _, _ := cutLastLine(out)
	return encodeSum(body)
}

// FuzzKeptListing: whatever parses is a kept listing that encodes back to
// the same bytes, and nothing panics.
func FuzzKeptListing(f *testing.F) {
	f.Add(encodeKeptListing("runs.ndjson:1:2;", TableChunks, []string{"platform=a/date=2026-01-02/part-1.parquet"}))
	f.Add(encodeKeptListing("s", TableChunks, nil))
	f.Add([]byte("pos-listing 1\ns\nchunks\n0\ncrc32c 00000000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		stamp, table, rel, err := parseKeptListing(b)
		if err != nil {
			return
		}
		if again := encodeKeptListing(stamp, table, rel); !bytes.Equal(again, b) {
			t.Fatalf("parsed %q %q %q from\n%q\nencodes to\n%q", stamp, table, rel, b, again)
		}
	})
}
