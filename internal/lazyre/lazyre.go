// Package lazyre compiles a package's regular expressions at their first
// use rather than at the program's start: every pos binary links packages
// whose patterns most of its commands never use, and compiling them all
// before main is time each start pays.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that returns expr compiled, compiling it at the
// first call (regexp.MustCompile: a bad expression panics then).
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
