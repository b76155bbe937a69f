// Package platforms is the registry of the platforms pos reads: their
// names, aliases and declared capabilities, in the order users see them
// listed (flags' help, tool schemas, error messages). Every list of
// platforms a program shows comes from here.
//
// A platform is registered by one line in the folders list below, naming
// its folder under extract/, which holds its declaration (about) and its
// adapter. go generate writes from that list the registration of each
// declaration (registered.go) and the imports that link each adapter into
// pos-extract (extract/all/adapters.go); the adapter itself registers with
// package extract. The registry holds data only: pos-query and pos-mcp use
// it without linking any adapter.
package platforms

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pos-lake/pos/extract/platform"
)

//go:generate go run ./internal/gen

// folders names the platforms pos reads, by their folder under extract/,
// in the order users see them listed. It is the one list of platforms
// written by hand: a new platform adds its line here, and go generate
// writes from the list registered.go (which registers each folder's about
// package) and extract/all/adapters.go (which links each adapter into
// pos-extract). See docs/adding-a-platform.md.
var folders = []string{
	"claudecode",
	"cline",
	"cursor",
	"codex",
	"gemini",
	"aider",
	"push",
}

var (
	mu         sync.RWMutex
	registered []platform.Platform
	byName     = map[string]int{} // name or alias -> index in registered
)

// Register adds platforms to the registry, after those registered before.
// A name or alias that is already taken, or one that is not lowercase, is a
// programming error: Register panics.
func Register(ps ...platform.Platform) {
	mu.Lock()
	defer mu.Unlock()
	for _, p := range ps {
		p.Aliases = slices.Clone(p.Aliases)
		p.Capabilities.Platform = p.Name
		p.Capabilities.Limitations = slices.Clone(p.Capabilities.Limitations)
		names := append([]string{p.Name}, p.Aliases...)
		for i, n := range names {
			if n == "" || n != strings.ToLower(strings.TrimSpace(n)) {
				panic(fmt.Sprintf("platforms: platform name %q is not lowercase", n))
			}
			if _, dup := byName[n]; dup || slices.Contains(names[:i], n) {
				panic("platforms: two platforms named " + n)
			}
		}
		for _, n := range names {
			byName[n] = len(registered)
		}
		registered = append(registered, p)
	}
}

// All returns every registered platform, in registration order. The
// copies are the caller's.
func All() []platform.Platform {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]platform.Platform, len(registered))
	for i, p := range registered {
		out[i] = clone(p)
	}
	return out
}

// Names returns the platforms' names, in registration order.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, len(registered))
	for i, p := range registered {
		out[i] = p.Name
	}
	return out
}

// Lookup returns the platform of a name (not an alias).
func Lookup(name string) (platform.Platform, bool) {
	mu.RLock()
	defer mu.RUnlock()
	if i, ok := byName[name]; ok && registered[i].Name == name {
		return clone(registered[i]), true
	}
	return platform.Platform{}, false
}

// Canonical returns the platform name of a name or alias
// (case-insensitive, spaces around it ignored), and whether it is one.
func Canonical(name string) (string, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	mu.RLock()
	defer mu.RUnlock()
	if i, ok := byName[n]; ok {
		return registered[i].Name, true
	}
	return n, false
}

// Capabilities returns every platform's declared capabilities, ordered by
// platform name (the order of pos-extract --capabilities' matrix).
func Capabilities() []platform.Capabilities {
	ps := All()
	out := make([]platform.Capabilities, len(ps))
	for i, p := range ps {
		out[i] = p.Capabilities
	}
	slices.SortFunc(out, func(a, b platform.Capabilities) int { return strings.Compare(a.Platform, b.Platform) })
	return out
}

func clone(p platform.Platform) platform.Platform {
	p.Aliases = slices.Clone(p.Aliases)
	p.Capabilities.Limitations = slices.Clone(p.Capabilities.Limitations)
	return p
}
