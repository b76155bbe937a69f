package normalize

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"testing"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/corpus"
)

// BenchmarkNormalizeCorpus measures pos-normalize over pos-extract's output
// for the real corpus; MB/s is of that NDJSON stream.
func BenchmarkNormalizeCorpus(b *testing.B) {
	dir := corpus.Platform(b, claudecode.Name)
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
