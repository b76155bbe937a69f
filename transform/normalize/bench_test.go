package normalize

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkNormalizeCorpus measures pos-normalize over pos-extract's output
// for the real corpus; MB/s is of that NDJSON stream.
func BenchmarkNormalizeCorpus(b *testing.B) {
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "claude")
	if d := os.Getenv("POS_CORPUS"); d != "" {
		dir = filepath.Join(d, "claude")
	}
	if _, err := os.Stat(dir); err != nil {
		b.Skip("../shared/corpus/claude is absent")
	}
	out, err := exec.Command("go", "run", "../../cmd/pos-extract", "--root", dir, "--full", "-q").Output()
	if err != nil && len(out) == 0 {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		if _, err := Normalize(context.Background(), bytes.NewReader(out), io.Discard, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
