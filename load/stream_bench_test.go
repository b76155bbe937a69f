package load

import (
	"os"
	"testing"
)

// BenchmarkLoadStream loads the normalized NDJSON stream in the file
// POS_LOAD_STREAM (e.g. pos-extract | pos-normalize of a generated home,
// pipelines/bench/gen) into a fresh lake; MB/s is of that stream. It reads
// the file into memory first, so it measures pos-load, not the disk.
func BenchmarkLoadStream(b *testing.B) {
	path := os.Getenv("POS_LOAD_STREAM")
	if path == "" {
		b.Skip("POS_LOAD_STREAM is not set")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	benchLoad(b, data)
}
