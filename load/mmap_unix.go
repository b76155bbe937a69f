//go:build unix

package load

import (
	"os"
	"syscall"
)

// mapFile maps a file read-only into memory; unmap lets go of it.
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
