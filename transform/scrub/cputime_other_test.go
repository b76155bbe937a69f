//go:build !unix

package scrub

import "time"

var start = time.Now()

// cpuTime stands in for CPU time with wall-clock time where rusage is
// missing.
func cpuTime() time.Duration { return time.Since(start) }
