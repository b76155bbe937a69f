package extract

import (
	"github.com/pos-lake/pos/extract/platforms"
)

// Declared returns the capabilities declared for a platform (see package
// platforms); ok is false for a platform pos does not read.
func Declared(platform string) (c Capabilities, ok bool) {
	p, ok := platforms.Lookup(platform)
	return p.Capabilities, ok
}

// AllDeclared returns every platform's declared capabilities, ordered by
// platform name as Adapters orders the adapters.
func AllDeclared() []Capabilities {
	return platforms.Capabilities()
}
