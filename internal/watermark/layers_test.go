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

// The lake's layout lies below everything that reads or derives from its
// files, and the catalog, the rollup, compaction and search's readers do
// not link pos-load's writer (package load), which uses them.
func TestLakePackagesDoNotLinkTheWriter(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command: ", err)
	}
	const load = "github.com/pos-lake/pos/load"
	above := map[string][]string{
		"load/layout":     {load, load + "/catalog", load + "/rollup", load + "/compact", load + "/searchrows"},
		"load/catalog":    {load, load + "/compact"},
		"load/rollup":     {load, load + "/catalog", load + "/compact"},
		"load/compact":    {load, load + "/catalog", load + "/rollup"},
		"load/searchrows": {load, load + "/catalog", load + "/rollup", load + "/compact"},
	}
	for pkg, banned := range above {
		out, err := exec.Command("go", "list", "-deps", "github.com/pos-lake/pos/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, b := range banned {
			if slices.Contains(deps, b) {
				t.Errorf("%s depends on %s", pkg, b)
			}
		}
	}
}
