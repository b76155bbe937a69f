package claudecode

import (
	"testing"

	"github.com/pos-lake/pos/extract/extracttest"
)

// BenchmarkExtractCorpus measures the adapter over the real corpus,
// encoding to NDJSON as pos-extract does; MB/s is of source bytes.
func BenchmarkExtractCorpus(b *testing.B) {
	extracttest.BenchmarkCorpus(b, Adapter{}, "claude_code")
}
