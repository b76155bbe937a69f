package all_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/aider"
	_ "github.com/pos-lake/pos/extract/all"
	"github.com/pos-lake/pos/extract/platforms"
)

// Every registered platform has its adapter linked here, and every adapter
// a registered platform (whose declaration the lake's readers list without
// linking the adapters): the same platforms, in the same order.
func TestDeclared(t *testing.T) {
	var adapters, declared []string
	for _, a := range extract.Adapters() {
		adapters = append(adapters, a.Platform())
		c, _ := extract.Declared(a.Platform())
		if c.Platform != a.Platform() || c.Exchanges == "" || c.Completeness == "" || len(c.Limitations) == 0 {
			t.Errorf("%s declares %+v", a.Platform(), c)
		}
	}
	for _, c := range extract.AllDeclared() {
		declared = append(declared, c.Platform)
	}
	if !slices.Equal(adapters, declared) {
		t.Fatalf("adapters %v, declared %v", adapters, declared)
	}
	for _, p := range platforms.Names() {
		if _, ok := extract.Lookup(p); !ok {
			t.Errorf("platform %s is registered, but extract/all does not import its adapter", p)
		}
	}
	if _, ok := extract.Declared("no_such_platform"); ok {
		t.Error("a platform pos does not read is declared")
	}
	// A caller's change to its copy leaves the declaration alone.
	c, _ := extract.Declared(adapters[0])
	c.Limitations[0] = "changed"
	if again, _ := extract.Declared(adapters[0]); again.Limitations[0] == "changed" {
		t.Error("Declared returns the declaration's own slice")
	}
	// Limitations that name Aider's files name the files it reads.
	a, _ := extract.Declared("aider")
	all := strings.Join(a.Limitations, " ")
	for _, f := range []string{aider.HistoryFile, aider.InputFile} {
		if !strings.Contains(all, f) {
			t.Errorf("aider's limitations do not name %s", f)
		}
	}
}
