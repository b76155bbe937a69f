package platforms_test

import (
	"slices"
	"testing"

	"github.com/pos-lake/pos/extract/platform"
	"github.com/pos-lake/pos/extract/platforms"
)

// The platforms are listed in the order users have always seen them, and
// every alias people type names its platform.
func TestRegistered(t *testing.T) {
	want := []string{"claude_code", "cline", "cursor", "codex", "gemini", "aider", "push"}
	if got := platforms.Names(); !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	for name, want := range map[string]string{
		"claude": "claude_code", "Claude-Code": "claude_code", " claudecode ": "claude_code", "claude_code": "claude_code",
		"roo": "cline", "kilo": "cline", "codex-cli": "codex", "gemini-cli": "gemini", "AIDER": "aider", "push": "push",
	} {
		if got, ok := platforms.Canonical(name); !ok || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if got, ok := platforms.Canonical("vim"); ok || got != "vim" {
		t.Errorf("Canonical(vim) = %q, %v", got, ok)
	}
	if _, ok := platforms.Lookup("claude"); ok {
		t.Error("Lookup takes names, not aliases")
	}
	var caps []string
	for _, c := range platforms.Capabilities() {
		caps = append(caps, c.Platform)
		if c.Exchanges == "" || c.Completeness == "" || len(c.Limitations) == 0 {
			t.Errorf("%s declares %+v", c.Platform, c)
		}
	}
	if !slices.IsSorted(caps) || len(caps) != len(want) {
		t.Errorf("capabilities of %v, want every platform by name", caps)
	}
	// A caller's change to its copy leaves the registry alone.
	p, _ := platforms.Lookup("cline")
	p.Aliases[0], p.Capabilities.Limitations[0] = "changed", "changed"
	if again, _ := platforms.Lookup("cline"); again.Aliases[0] == "changed" || again.Capabilities.Limitations[0] == "changed" {
		t.Error("Lookup returns the registry's own slices")
	}
}

// A platform registered later is listed after the others, found by its
// aliases, and its capabilities name it.
func TestRegister(t *testing.T) {
	platforms.Register(platform.Platform{Name: "toy", Title: "Toy agent", Aliases: []string{"toy-cli"},
		Capabilities: platform.Capabilities{Exchanges: platform.Yes, Completeness: "full"}})
	if names := platforms.Names(); names[len(names)-1] != "toy" {
		t.Fatalf("names %v", names)
	}
	defer func() {
		// A registration that panicked registered none of its names.
		if _, ok := platforms.Canonical("other"); ok || len(platforms.Names()) != 8 {
			t.Errorf("a refused platform was registered: %v", platforms.Names())
		}
	}()
	if got, ok := platforms.Canonical("Toy-CLI"); !ok || got != "toy" {
		t.Errorf("Canonical(Toy-CLI) = %q, %v", got, ok)
	}
	if p, ok := platforms.Lookup("toy"); !ok || p.Capabilities.Platform != "toy" {
		t.Errorf("Lookup(toy) = %+v, %v", p, ok)
	}
	for _, bad := range []platform.Platform{
		{Name: "toy"}, // taken
		{Name: "other", Aliases: []string{"claude"}}, // alias taken
		{Name: "Other"}, // not lowercase
		{},              // no name
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%+v) did not panic", bad)
				}
			}()
			platforms.Register(bad)
		}()
	}
}
