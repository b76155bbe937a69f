//go:build unix

package searchindex

import (
	"os"
	"syscall"
)

// mapFile maps a file read-only into memory; unmap lets go of it. Its
// pages are mapped as they are read, or a region at once (populate) where
// a search reads all of it: a search reads a small part of a large
// segment (its vectors, the postings of its terms), and mapping all of it
// up front cost more than the search.
func mapFile(f *os.File, size int64) (b []byte, unmap func() error, err error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	b, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}
