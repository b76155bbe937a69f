package query

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The titles kept are those of the file they were read from: a session is
// read once while the file stays the same, and again once it was
// rewritten.
func TestDescribeMemoTitles(t *testing.T) {
	meta := filepath.Join(t.TempDir(), "meta.parquet")
	if err := os.WriteFile(meta, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	var m describeMemo
	reads := 0
	title := "first"
	read := func(missing map[string]bool) (map[string]sessionTitle, error) {
		reads++
		out := map[string]sessionTitle{}
		for k := range missing {
			if k != "p\x00none" {
				out[k] = sessionTitle{title: title}
			}
		}
		return out, nil
	}
	want := map[string]bool{"p\x00a": true, "p\x00none": true}
	for range 3 {
		got, err := m.titles(meta, want, read)
		if err != nil || got["p\x00a"].title != "first" || len(got) != 1 {
			t.Fatalf("%v %v", got, err)
		}
	}
	if reads != 1 {
		t.Fatalf("read %d times, want once", reads)
	}
	// Another session: only it is read.
	if got, _ := m.titles(meta, map[string]bool{"p\x00a": true, "p\x00b": true}, func(missing map[string]bool) (map[string]sessionTitle, error) {
		if len(missing) != 1 || !missing["p\x00b"] {
			t.Fatalf("read %v", missing)
		}
		return read(missing)
	}); len(got) != 2 {
		t.Fatalf("%v", got)
	}
	// The file rewritten: read again.
	title = "second"
	if err := os.WriteFile(meta, []byte("second"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(meta, time.Now(), time.Now().Add(time.Second))
	if got, _ := m.titles(meta, want, read); got["p\x00a"].title != "second" {
		t.Fatalf("after the file changed: %v", got)
	}
}
