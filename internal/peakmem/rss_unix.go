//go:build unix

package peakmem

import (
	"runtime"
	"syscall"
)

// MaxRSS returns the process's peak resident set size in bytes.
func MaxRSS() uint64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return uint64(ru.Maxrss) // bytes there
	}
	return uint64(ru.Maxrss) << 10 // kilobytes
}
