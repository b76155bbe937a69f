package teamlake_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Only pos-lake links the Iceberg and AWS libraries: their start-up work
// would be paid by every hook sync and every query otherwise.
func TestOnlyPosLakeLinksIceberg(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command: ", err)
	}
	for _, cmd := range []string{"pos-extract", "pos-normalize", "pos-scrub", "pos-embed", "pos-load", "pos-query", "pos-mcp", "pos-lake"} {
		out, err := exec.Command("go", "list", "-deps", "github.com/pos-lake/pos/cmd/"+cmd).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", cmd, err)
		}
		links := slices.Contains(strings.Fields(string(out)), "github.com/apache/iceberg-go")
		if links != (cmd == "pos-lake") {
			t.Errorf("%s links iceberg-go: %v", cmd, links)
		}
	}
}
