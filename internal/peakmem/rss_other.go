//go:build !unix

package peakmem

// MaxRSS returns 0: the peak resident set size is not known here.
func MaxRSS() uint64 { return 0 }
