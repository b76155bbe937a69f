package watermark_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The watermarks and atomic file writing lie below the stages so that the
// later stages and the lake's readers use them without linking an earlier
// stage: load, query and the MCP server do not depend on package extract.
func TestLaterStagesDoNotLinkExtract(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command: ", err)
	}
	for _, pkg := range []string{"load", "query", "mcpserver"} {
		out, err := exec.Command("go", "list", "-deps", "github.com/pos-lake/pos/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		if slices.Contains(strings.Fields(string(out)), "github.com/pos-lake/pos/extract") {
			t.Errorf("%s depends on package extract", pkg)
		}
	}
}
