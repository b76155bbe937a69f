//go:build !unix

package searchindex

import (
	"io"
	"os"
)

// mapFile reads a file into memory where mapping it is not available.
func mapFile(f *os.File, size int64) (b []byte, unmap func() error, err error) {
	b = make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}

// populate: the file is in memory.
func populate([]byte) {}
