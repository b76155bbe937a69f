package fastjson_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The filters that decode records in bulk link sonic; the lake's readers,
// which start often and decode little, do not pay its start-up.
func TestLinked(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command: ", err)
	}
	for _, c := range []struct {
		cmd  string
		fast bool
	}{
		{"pos-extract", true}, {"pos-normalize", true}, {"pos-scrub", true}, {"pos-embed", true}, {"pos-load", true},
		{"pos-query", false}, {"pos-mcp", false},
	} {
		out, err := exec.Command("go", "list", "-deps", "github.com/pos-lake/pos/cmd/"+c.cmd).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", c.cmd, err)
		}
		deps := strings.Fields(string(out))
		if got := slices.Contains(deps, "github.com/pos-lake/pos/internal/jsontext/fastjson"); got != c.fast {
			t.Errorf("%s links schema/fastjson: %v, want %v", c.cmd, got, c.fast)
		}
		if !c.fast && slices.Contains(deps, "github.com/bytedance/sonic") {
			t.Errorf("%s links sonic", c.cmd)
		}
	}
}
