package load

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkLoadCorpus measures pos-load over the normalized stream of the
// real corpus into a fresh lake; MB/s is of that NDJSON stream.
func BenchmarkLoadCorpus(b *testing.B) {
	dir := filepath.Join("..", "..", "shared", "corpus", "claude")
	if d := os.Getenv("POS_CORPUS"); d != "" {
		dir = filepath.Join(d, "claude")
	}
	if _, err := os.Stat(dir); err != nil {
		b.Skip("../shared/corpus/claude is absent")
	}
	out, err := exec.Command("bash", "-c", "go run ../cmd/pos-extract --root "+dir+" --full -q | go run ../cmd/pos-normalize -q").Output()
	if err != nil {
		b.Fatal(err)
	}
	benchLoad(b, out)
}

// benchLoad loads the stream data into a fresh lake once per iteration;
// MB/s is of data.
func benchLoad(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		lake := b.TempDir()
		if _, err := Load(context.Background(), bytes.NewReader(data), Options{Lake: lake, NoCatalog: true}); err != nil {
			b.Fatal(err)
		}
	}
}
