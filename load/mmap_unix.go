//go:build unix

package load

import (
	"os"
	"syscall"
)

// mapFile maps a file read-only into memory; unmap lets go of it. The
// pages are mapped at once where the system can (mapPopulate): a search
// reads every vector of a segment, and faulting its pages in one by one
// cost more than the scan.
func mapFile(f *os.File, size int64) (b []byte, unmap func() error, err error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	b, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}
