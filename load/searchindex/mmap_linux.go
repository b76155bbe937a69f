package searchindex

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// populate maps the pages of b, a part of a mapped file, at once: a
// search that reads all of a region (the vectors of a file) pays one
// call for it instead of a fault per few pages, and only for the regions
// it reads (the metadata and texts of a segment mostly are not).
func populate(b []byte) {
	// madvise takes whole pages: those that start within b (the first
	// page, partly before b, faults in as read).
	ps := os.Getpagesize()
	skip := (ps - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(ps))) % ps
	if skip >= len(b) {
		return
	}
	_ = unix.Madvise(b[skip:], unix.MADV_POPULATE_READ) // an older kernel: faults as read
}
