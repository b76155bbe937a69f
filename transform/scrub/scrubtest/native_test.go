package scrubtest

import (
	"testing"

	"github.com/pos-lake/pos/extract/platforms"
)

// Every native writer is of a registered platform, and a home written
// without a SQLite driver deals its credentials to every platform but
// Cursor.
func TestWriteHomePlatforms(t *testing.T) {
	for _, n := range natives {
		if _, ok := platforms.Lookup(n.platform); !ok {
			t.Errorf("a writer for %q, which is not a registered platform", n.platform)
		}
	}
	h, err := WriteHome(t.TempDir(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, p := range h.Planted {
		got[p.Platform]++
	}
	for _, n := range natives[:len(natives)-1] {
		if got[n.platform] == 0 {
			t.Errorf("no credential planted in %s", n.platform)
		}
	}
	if last := natives[len(natives)-1].platform; got[last] != 0 {
		t.Errorf("%d credentials planted in %s without a SQLite driver", got[last], last)
	}
}
