package extract

import (
	"slices"
	"sync"

	"github.com/pos-lake/pos/extract/platforms"
)

var (
	regMu    sync.Mutex
	adapters = map[string]Adapter{}
)

// Register makes an adapter available by its platform name, which must be
// registered in package platforms. Adapter packages call it from init;
// extract/all imports every one of them.
func Register(a Adapter) {
	if _, ok := platforms.Lookup(a.Platform()); !ok {
		panic("extract: adapter of platform " + a.Platform() + ", which is not registered in extract/platforms")
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := adapters[a.Platform()]; dup {
		panic("extract: two adapters for platform " + a.Platform())
	}
	adapters[a.Platform()] = a
}

// Lookup returns the adapter of a platform.
func Lookup(platform string) (Adapter, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	a, ok := adapters[platform]
	return a, ok
}

// Adapters returns every registered adapter, ordered by platform name.
func Adapters() []Adapter {
	regMu.Lock()
	defer regMu.Unlock()
	var out []Adapter
	for _, a := range adapters {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Adapter) int {
		switch {
		case a.Platform() < b.Platform():
			return -1
		case a.Platform() > b.Platform():
			return 1
		}
		return 0
	})
	return out
}
