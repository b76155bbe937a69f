package layout

import (
	"bytes"
	"slices"
	"testing"
)

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
